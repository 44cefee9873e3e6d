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
	"k8s.io/apimachinery/pkg/api/meta"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
)

// Reasons of the events an Echo gets.
const (
	EventJobCreated = "Created"
	EventSucceeded  = "Succeeded"
	EventFailed     = "Failed"
)

// StatusWritten tells what a status write changed: a log line, a warning when the Job's name
// turns out to be held by another object, and an event when the phase reaches an end. The phase
// of a finished Echo never changes again, so each end is told once.
func (r *echoReconciler) StatusWritten(ctx context.Context, before, after *echov1alpha1.Echo) {
	logf.FromContext(ctx).V(1).Info("Patched the status", "phase", after.Status.Phase, "job", after.Status.JobName)
	child.WarnConflictBegan(r.Recorder, after, before.Status.Conditions, after.Status.Conditions)
	if before.Status.Phase == after.Status.Phase {
		return
	}
	switch after.Status.Phase {
	case echov1alpha1.EchoSucceeded:
		r.Recorder.Eventf(after, nil, corev1.EventTypeNormal, EventSucceeded, "Reconcile", "Job %s printed the message", after.Status.JobName)
	case echov1alpha1.EchoFailed:
		if c := meta.FindStatusCondition(after.Status.Conditions, echov1alpha1.ConditionFailed); c != nil {
			r.Recorder.Eventf(after, nil, corev1.EventTypeWarning, EventFailed, "Reconcile", "%s", c.Message)
		}
	}
}
