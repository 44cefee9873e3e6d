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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
)

// reconcileJob creates the Job of e unless e already finished, and returns what it saw. An
// existing Job only has its labels, owner, retry and cleanup settings kept in place: its pod
// template is immutable and is never sent again.
func (r *echoReconciler) reconcileJob(ctx context.Context, e *echov1alpha1.Echo) jobObservation {
	done, err := r.finished(ctx, e)
	if err != nil || done {
		return jobObservation{finished: done, err: err}
	}
	job, result, err := child.Ensure(ctx, r.Client, r.APIReader, BuildJob(e, r.Image), &batchv1.Job{}, jobSpec)
	if err != nil {
		return jobObservation{err: err}
	}
	if result == child.Created {
		r.Recorder.Eventf(e, job, corev1.EventTypeNormal, EventJobCreated, "Create", "Created Job %s", job.Name)
	}
	return jobObservation{job: job}
}

// finished reports whether e already ran to the end, so that its Job must never run again. The
// phase in the status is the only memory of that once the Job's TTL deleted it. The cache may
// lag behind the status this controller just wrote, so when a Job that was created is gone from
// the cache, the status is read again from the API server before the Job is made again.
func (r *echoReconciler) finished(ctx context.Context, e *echov1alpha1.Echo) (bool, error) {
	if isFinished(e.Status.Phase) {
		return true, nil
	}
	if e.Status.JobName == "" {
		return false, nil
	}
	err := r.Get(ctx, client.ObjectKey{Namespace: e.Namespace, Name: e.Status.JobName}, &batchv1.Job{})
	if err == nil {
		return false, nil
	}
	if !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("reading Job %s: %w", e.Status.JobName, err)
	}
	live := &echov1alpha1.Echo{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(e), live); err != nil {
		// An Echo that is gone has nothing left to run.
		return apierrors.IsNotFound(err), client.IgnoreNotFound(fmt.Errorf("reading the Echo from the API server: %w", err))
	}
	return isFinished(live.Status.Phase), nil
}
