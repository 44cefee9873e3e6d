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

package scheduleddatabasebackup

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/seed1b407122/database-operator/api/conditions"
	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
)

// computeStatus returns the status of s as observed. It keeps from the current status only what
// the backups cannot tell once they are gone: the last run, and the last success.
func computeStatus(s *databasev1alpha1.ScheduledDatabaseBackup, obs observation) databasev1alpha1.ScheduledDatabaseBackupStatus {
	status := databasev1alpha1.ScheduledDatabaseBackupStatus{
		LastScheduleTime:   s.Status.LastScheduleTime,
		LastSuccessfulTime: s.Status.LastSuccessfulTime,
		LastBackupName:     s.Status.LastBackupName,
		ObservedGeneration: s.Generation,
		Conditions:         append([]metav1.Condition(nil), s.Status.Conditions...),
	}
	if !obs.started.IsZero() {
		status.LastScheduleTime = minuteOf(obs.started)
		status.LastBackupName = s.BackupName(obs.started)
	}
	for i := range obs.backups {
		b := &obs.backups[i]
		switch b.Status.Phase {
		case databasev1alpha1.BackupCompleted:
			if done := b.Status.CompletionTime; done != nil &&
				(status.LastSuccessfulTime == nil || done.After(status.LastSuccessfulTime.Time)) {
				status.LastSuccessfulTime = done.DeepCopy()
			}
		case databasev1alpha1.BackupFailed:
		default: // Pending, Running, or not begun yet
			status.Active = append(status.Active, b.Name)
		}
	}
	slices.Sort(status.Active)
	setReadyCondition(&status.Conditions, s, obs)
	setSuspendedCondition(&status.Conditions, s)
	meta.SetStatusCondition(&status.Conditions, child.DegradedCondition(obs.err, s.Generation))
	return status
}

// setReadyCondition: True while the schedule is valid and its runs are created; False with
// InvalidSchedule when the spec must change, ChildConflict while a run's backup name is held by a
// backup the schedule does not control, SyncFailed when an API call is retried.
func setReadyCondition(list *[]metav1.Condition, s *databasev1alpha1.ScheduledDatabaseBackup, obs observation) {
	cond := metav1.Condition{
		Type:               databasev1alpha1.ConditionScheduleReady,
		Status:             metav1.ConditionTrue,
		Reason:             databasev1alpha1.ReasonScheduled,
		Message:            fmt.Sprintf("backs up cluster %s on schedule %q", s.Spec.ClusterName, s.Spec.Schedule),
		ObservedGeneration: s.Generation,
	}
	switch {
	case obs.scheduleErr != nil:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, databasev1alpha1.ReasonInvalidSchedule, obs.scheduleErr.Error()
	case child.IsConflict(obs.err):
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, conditions.ReasonChildConflict, obs.err.Error()
	case obs.err != nil:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, databasev1alpha1.ReasonScheduleSyncFailed, obs.err.Error()
	}
	meta.SetStatusCondition(list, cond)
}

// setSuspendedCondition: True while spec.suspend is true.
func setSuspendedCondition(list *[]metav1.Condition, s *databasev1alpha1.ScheduledDatabaseBackup) {
	conditions.SetSwitch(list, s.Generation, databasev1alpha1.ConditionSuspended, s.Spec.Suspend,
		conditions.Text{Reason: databasev1alpha1.ReasonSuspendedByUser, Message: "spec.suspend is true: no new run starts; retention still applies"},
		conditions.Text{Reason: databasev1alpha1.ReasonNotSuspended, Message: "new runs start on schedule"})
}

// StatusWritten logs the write, and warns once when a run's name turns out to be held by another
// backup or the schedule turns out invalid.
func (r *Reconciler) StatusWritten(ctx context.Context, before, after *databasev1alpha1.ScheduledDatabaseBackup) {
	logf.FromContext(ctx).V(1).Info("Patched the status", "lastBackup", after.Status.LastBackupName)
	child.WarnConflictBegan(r.Recorder, after, before.Status.Conditions, after.Status.Conditions)
	now := conditions.Changed(before.Status.Conditions, after.Status.Conditions, databasev1alpha1.ConditionScheduleReady)
	if now != nil && now.Reason == databasev1alpha1.ReasonInvalidSchedule {
		r.Recorder.Eventf(after, nil, corev1.EventTypeWarning, EventInvalidSchedule, "Reconcile", "%s", now.Message)
	}
}
