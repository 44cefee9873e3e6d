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
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
)

// reconcileCronJob keeps the CronJob of s as its spec says and returns what it saw. A schedule
// the CronJob API would reject is not written: the CronJob keeps running on the last valid one,
// and is only observed so that the status still reports its last schedule.
func (r *scheduledEchoReconciler) reconcileCronJob(ctx context.Context, s *echov1alpha1.ScheduledEcho) cronJobObservation {
	if err := checkSchedule(s.Spec.Schedule); err != nil {
		return r.observeCronJob(ctx, s, err)
	}
	desired := BuildCronJob(s, r.Image)
	cj, result, err := child.Ensure(ctx, r.Client, r.APIReader, desired, &batchv1.CronJob{}, cronJobSpec)
	if err != nil {
		return r.observeCronJob(ctx, s, err)
	}
	switch result {
	case child.Created:
		r.Recorder.Eventf(s, cj, corev1.EventTypeNormal, EventCronJobCreated, "Create",
			"Created CronJob %s on schedule %q", cj.Name, s.Spec.Schedule)
	case child.Patched:
		r.Recorder.Eventf(s, cj, corev1.EventTypeNormal, EventCronJobUpdated, "Update",
			"Updated CronJob %s: schedule %q, suspend %t", cj.Name, s.Spec.Schedule, s.Spec.Suspend)
	}
	return cronJobObservation{cronJob: cj}
}

// observeCronJob reads the CronJob from the cache without changing it, keeping err as the
// reason it could not be brought in line with the spec.
func (r *scheduledEchoReconciler) observeCronJob(ctx context.Context, s *echov1alpha1.ScheduledEcho, err error) cronJobObservation {
	cj := &batchv1.CronJob{}
	if getErr := r.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: s.CronJobName()}, cj); getErr != nil {
		if client.IgnoreNotFound(getErr) != nil {
			err = fmt.Errorf("%w; reading CronJob %s: %w", err, s.CronJobName(), getErr)
		}
		return cronJobObservation{err: err}
	}
	return cronJobObservation{cronJob: cj, err: err}
}
