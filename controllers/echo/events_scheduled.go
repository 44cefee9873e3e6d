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

package echo

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/seed1b407122/database-operator/api/conditions"
	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
)

// Reasons of the events a ScheduledEcho gets.
const (
	EventCronJobCreated  = "Created"
	EventCronJobUpdated  = "Updated"
	EventInvalidSchedule = "InvalidSchedule"
	EventCronJobRejected = "Rejected"
)

// rejections are the reasons of the Ready condition that are told as warnings when they appear.
var rejections = map[string]string{
	echov1alpha1.ReasonInvalidSchedule: EventInvalidSchedule,
	echov1alpha1.ReasonCronJobRejected: EventCronJobRejected,
}

// StatusWritten tells what a status write changed: a log line, and a warning when the CronJob's
// name turns out to be held by another object or when the Ready condition turns to a reason that
// needs the user to change the spec. A retried write (SyncFailed) is not told: it is expected to
// pass.
func (r *scheduledEchoReconciler) StatusWritten(ctx context.Context, before, after *echov1alpha1.ScheduledEcho) {
	logf.FromContext(ctx).V(1).Info("Patched the status", "cronJob", after.Status.CronJobName)
	child.WarnConflictBegan(r.Recorder, after, before.Status.Conditions, after.Status.Conditions)
	now := conditions.Changed(before.Status.Conditions, after.Status.Conditions, echov1alpha1.ConditionReady)
	if now == nil || now.Status != metav1.ConditionFalse {
		return
	}
	if reason, ok := rejections[now.Reason]; ok {
		r.Recorder.Eventf(after, nil, corev1.EventTypeWarning, reason, "Reconcile", "%s", now.Message)
	}
}
