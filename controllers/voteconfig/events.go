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
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	votingv1alpha1 "github.com/seed1b407122/database-operator/api/voting/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
)

// Reasons of the events a VoteConfig gets.
const (
	EventCreated          = "Created"
	EventUpdated          = "Updated"
	EventRolloutTriggered = "RolloutTriggered"
	EventTargetFound      = "TargetFound"
	EventTargetNotFound   = "TargetNotFound"
)

// recordConfigMap tells a creation of the ConfigMap, or a change of its content (a new spec or a
// hand edit put back).
func (r *Reconciler) recordConfigMap(vc *votingv1alpha1.VoteConfig, result child.Result) {
	switch result {
	case child.Created:
		r.Recorder.Eventf(vc, nil, corev1.EventTypeNormal, EventCreated, "Create", "Created ConfigMap %s", vc.ConfigMapName())
	case child.Patched:
		r.Recorder.Eventf(vc, nil, corev1.EventTypeNormal, EventUpdated, "Update", "Updated ConfigMap %s to the spec", vc.ConfigMapName())
	}
}

// StatusWritten tells what a status write changed: a log line, a warning when the ConfigMap's
// name turns out to be held by another object, and an event when the target Deployment goes
// missing or is found. A VoteConfig without a target is told nothing about it.
func (r *Reconciler) StatusWritten(ctx context.Context, before, after *votingv1alpha1.VoteConfig) {
	logf.FromContext(ctx).V(1).Info("Patched the status", "configMap", after.Status.ConfigMapName)
	child.WarnConflictBegan(r.Recorder, after, before.Status.Conditions, after.Status.Conditions)
	now := meta.FindStatusCondition(after.Status.Conditions, votingv1alpha1.ConditionTargetFound)
	if now == nil || now.Reason == votingv1alpha1.ReasonNoTarget {
		return
	}
	was := meta.FindStatusCondition(before.Status.Conditions, votingv1alpha1.ConditionTargetFound)
	if was != nil && was.Reason == now.Reason {
		return
	}
	switch now.Reason {
	case votingv1alpha1.ReasonDeploymentNotFound:
		r.Recorder.Eventf(after, nil, corev1.EventTypeWarning, EventTargetNotFound, "Reconcile", "%s", now.Message)
	case votingv1alpha1.ReasonDeploymentFound:
		if was != nil && was.Reason == votingv1alpha1.ReasonDeploymentNotFound {
			r.Recorder.Eventf(after, nil, corev1.EventTypeNormal, EventTargetFound, "Reconcile", "%s", now.Message)
		}
	}
}
