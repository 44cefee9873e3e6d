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

package voteconfig

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed1b407122/database-operator/api/conditions"
	votingv1alpha1 "github.com/seed1b407122/database-operator/api/voting/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
)

// observation is what one reconcile saw of a VoteConfig's ConfigMap and target Deployment.
type observation struct {
	// changed says the ConfigMap was created or patched: its content changed.
	changed bool
	// configMapErr is the error that kept the ConfigMap from matching the spec, if any.
	configMapErr error
	// target is what was found of spec.targetDeployment.
	target targetState
	// targetErr is the error that kept the target Deployment from being read or annotated.
	targetErr error
}

// computeStatus returns the status of vc as observed at now. It starts from the current status
// only to keep lastUpdated while the content does not change, and the lastTransitionTime of
// conditions that did not change.
func computeStatus(vc *votingv1alpha1.VoteConfig, obs observation, now metav1.Time) votingv1alpha1.VoteConfigStatus {
	status := votingv1alpha1.VoteConfigStatus{
		ConfigMapName:      vc.Status.ConfigMapName,
		LastUpdated:        vc.Status.LastUpdated,
		ObservedGeneration: vc.Generation,
		Conditions:         append([]metav1.Condition(nil), vc.Status.Conditions...),
	}
	if obs.configMapErr == nil {
		status.ConfigMapName = vc.ConfigMapName()
	}
	if obs.changed {
		status.LastUpdated = &now
	}
	setReadyCondition(&status.Conditions, vc, obs.configMapErr)
	setTargetFoundCondition(&status.Conditions, vc, obs.target)
	meta.SetStatusCondition(&status.Conditions, child.DegradedCondition(obs.configMapErr, vc.Generation))
	return status
}

// setReadyCondition: True when the ConfigMap holds the options of the spec.
func setReadyCondition(list *[]metav1.Condition, vc *votingv1alpha1.VoteConfig, err error) {
	synced := fmt.Sprintf("ConfigMap %s holds the %d options", vc.ConfigMapName(), len(vc.Spec.Options))
	meta.SetStatusCondition(list, conditions.Ready(vc.Generation, err,
		votingv1alpha1.ReasonConfigMapSynced, synced, votingv1alpha1.ReasonSyncFailed))
}

// setTargetFoundCondition: True when spec.targetDeployment names an existing Deployment. A
// Deployment that could not be read leaves the condition as it was.
func setTargetFoundCondition(list *[]metav1.Condition, vc *votingv1alpha1.VoteConfig, target targetState) {
	cond := metav1.Condition{
		Type:               votingv1alpha1.ConditionTargetFound,
		Status:             metav1.ConditionFalse,
		ObservedGeneration: vc.Generation,
	}
	name := vc.Spec.TargetDeployment
	switch target {
	case targetUnknown:
		return
	case targetNone:
		cond.Reason, cond.Message = votingv1alpha1.ReasonNoTarget, "spec.targetDeployment is not set: no Deployment rolls on change"
	case targetFound:
		cond.Status, cond.Reason = metav1.ConditionTrue, votingv1alpha1.ReasonDeploymentFound
		cond.Message = fmt.Sprintf("Deployment %s rolls its pods when the options change", name)
	case targetMissing:
		cond.Reason = votingv1alpha1.ReasonDeploymentNotFound
		cond.Message = fmt.Sprintf("Deployment %s does not exist in namespace %s", name, vc.Namespace)
	}
	meta.SetStatusCondition(list, cond)
}
