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

// DefaultLostMemberAfterSeconds is spec.autoHeal.lostMemberAfterSeconds when unset: the node
// lifecycle controller's default eviction timeout (300s), so that a node the cluster would
// evict pods from is also one whose members are called lost.
const DefaultLostMemberAfterSeconds int32 = 300

// AutoHealSpec says when a member is lost with its node, and whether the operator replaces it.
// A member is lost when its pod cannot be scheduled because its claim is bound to a volume
// pinned to a node that is gone or NotReady (a local volume: Kubernetes never moves it), or
// when its pod is stuck terminating on a node that is NotReady, unreachable or gone; in both
// cases for longer than lostMemberAfterSeconds. The MemberLost condition names the member and
// the node.
type AutoHealSpec struct {
	// LostMemberAfterSeconds is how long a member's node must have been NotReady, unreachable
	// or gone (while the member cannot run) before the member is lost. 30 to 86400 (a day);
	// default 300.
	// +optional
	// +kubebuilder:default=300
	// +kubebuilder:validation:Minimum=30
	// +kubebuilder:validation:Maximum=86400
	LostMemberAfterSeconds *int32 `json:"lostMemberAfterSeconds,omitempty"`

	// ReplaceLostMembers lets the operator replace a lost member: it deletes the member's data
	// claim (when its volume is pinned to the lost node) and its pod, so that the StatefulSet
	// recreates the member empty on a healthy node. One member at a time, only while every
	// other member that is not lost is Ready, never a member whose node is Ready. The database
	// must then take the new, empty member back (e.g. etcd: member remove and member add); the
	// operator does not do that. Refused with replicas 1: a single member's data has no other
	// copy. Default false.
	// +optional
	ReplaceLostMembers bool `json:"replaceLostMembers,omitempty"`
}

// LostMemberAfter is spec.autoHeal.lostMemberAfterSeconds as a duration, or its default.
func (dc *DatabaseCluster) LostMemberAfter() time.Duration {
	seconds := DefaultLostMemberAfterSeconds
	if h := dc.Spec.AutoHeal; h != nil && h.LostMemberAfterSeconds != nil {
		seconds = *h.LostMemberAfterSeconds
	}
	return time.Duration(seconds) * time.Second
}

// ReplacesLostMembers reports whether spec.autoHeal.replaceLostMembers is true.
func (dc *DatabaseCluster) ReplacesLostMembers() bool {
	return dc.Spec.AutoHeal != nil && dc.Spec.AutoHeal.ReplaceLostMembers
}
