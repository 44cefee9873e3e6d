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
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/seed1b407122/database-operator/api/conditions"
	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
)

// cronJobObservation is what one reconcile saw of a ScheduledEcho's CronJob.
type cronJobObservation struct {
	// cronJob is the CronJob as the server holds it, nil when it does not exist.
	cronJob *batchv1.CronJob
	// err is the error that kept the CronJob from matching the spec, if any.
	err error
}

// scheduledEchoStatus returns the status of s as observed. It starts from the current status only to
// keep what a missing CronJob cannot tell (its name and last schedule) and the
// lastTransitionTime of conditions that did not change.
func scheduledEchoStatus(s *echov1alpha1.ScheduledEcho, obs cronJobObservation) echov1alpha1.ScheduledEchoStatus {
	status := echov1alpha1.ScheduledEchoStatus{
		CronJobName:        s.Status.CronJobName,
		LastScheduleTime:   s.Status.LastScheduleTime,
		ObservedGeneration: s.Generation,
		Conditions:         append([]metav1.Condition(nil), s.Status.Conditions...),
	}
	if cj := obs.cronJob; cj != nil {
		status.CronJobName = cj.Name
		status.LastScheduleTime = cj.Status.LastScheduleTime
	}
	setReadyCondition(&status.Conditions, s, obs.err)
	setSuspendedCondition(&status.Conditions, s, obs.cronJob)
	meta.SetStatusCondition(&status.Conditions, child.DegradedCondition(obs.err, s.Generation))
	return status
}

// setReadyCondition: True when the CronJob matches the spec; otherwise the reason tells whether
// the spec must change or the write is retried (failureReason).
func setReadyCondition(list *[]metav1.Condition, s *echov1alpha1.ScheduledEcho, err error) {
	synced := fmt.Sprintf("CronJob %s runs on schedule %q", s.CronJobName(), s.Spec.Schedule)
	meta.SetStatusCondition(list, conditions.Ready(s.Generation, err,
		echov1alpha1.ReasonCronJobSynced, synced, failureReason(err)))
}

// failureReason is the reason of a Ready condition that is False for err: InvalidSchedule or
// CronJobRejected when the spec must change, SyncFailed when the write is retried.
func failureReason(err error) string {
	switch {
	case isScheduleError(err):
		return echov1alpha1.ReasonInvalidSchedule
	case apierrors.IsInvalid(err):
		return echov1alpha1.ReasonCronJobRejected
	}
	return echov1alpha1.ReasonSyncFailed
}

// setSuspendedCondition: True while no new run starts. It follows the CronJob, which keeps its
// last accepted state while the spec is invalid; without a CronJob nothing runs, as the spec says.
func setSuspendedCondition(list *[]metav1.Condition, s *echov1alpha1.ScheduledEcho, cj *batchv1.CronJob) {
	suspended := s.Spec.Suspend
	if cj != nil {
		suspended = ptr.Deref(cj.Spec.Suspend, false)
	}
	conditions.SetSwitch(list, s.Generation, echov1alpha1.ConditionSuspended, suspended,
		conditions.Text{Reason: echov1alpha1.ReasonSuspended, Message: "spec.suspend is true: no new run starts"},
		conditions.Text{Reason: echov1alpha1.ReasonActive, Message: "new runs start on schedule"})
}
