// Copyright 2026 The database-operator Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package v1alpha1

import "time"

// DefaultProgressDeadlineSeconds is spec.rollout.progressDeadlineSeconds when unset: as long as
// a Deployment's default, long enough for a database to replay its log on start.
const DefaultProgressDeadlineSeconds int32 = 600

// RolloutSpec says when the operator calls a rollout stuck. A member of the StatefulSet's update
// revision that is not Ready within the deadline, or whose container cannot start
// (ImagePullBackOff, ErrImagePull, CrashLoopBackOff, CreateContainerConfigError), makes
// Progressing False with reason RolloutStuck. Once the spec asks for another revision (the user
// reverted or fixed it), a member still on an older revision that is stuck the same way is
// deleted, one at a time and never a Ready one, so that the StatefulSet recreates it from the
// current template; with autoRollback, the operator itself returns the template to the previous
// revision.
type RolloutSpec struct {
	// ProgressDeadlineSeconds is how long a member of the update revision may stay not Ready,
	// counted from its Ready condition's last transition (its creation if it has none), before
	// the rollout is stuck. 30 to 86400 (a day); default 600.
	// +optional
	// +kubebuilder:default=600
	// +kubebuilder:validation:Minimum=30
	// +kubebuilder:validation:Maximum=86400
	ProgressDeadlineSeconds *int32 `json:"progressDeadlineSeconds,omitempty"`

	// AutoRollback, when true, returns the StatefulSet's pod template to its current revision
	// (the last one every member ran Ready) once the rollout of a new template is stuck, so the
	// members that did not move keep serving and the stuck one is replaced from the old template.
	// It happens once per template: the StatefulSet stays at the old revision (Progressing
	// False, reason RolledBack) until the spec asks for another template, which rolls out as
	// usual. Off by default: the operator then only reports the stuck rollout.
	// +optional
	AutoRollback bool `json:"autoRollback,omitempty"`
}

// AutoRollback reports whether spec.rollout.autoRollback is set.
func (dc *DatabaseCluster) AutoRollback() bool {
	return dc.Spec.Rollout != nil && dc.Spec.Rollout.AutoRollback
}

// ProgressDeadline is spec.rollout.progressDeadlineSeconds as a duration, or its default.
func (dc *DatabaseCluster) ProgressDeadline() time.Duration {
	seconds := DefaultProgressDeadlineSeconds
	if r := dc.Spec.Rollout; r != nil && r.ProgressDeadlineSeconds != nil {
		seconds = *r.ProgressDeadlineSeconds
	}
	return time.Duration(seconds) * time.Second
}
