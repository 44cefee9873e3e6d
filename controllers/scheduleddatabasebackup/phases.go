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
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
	"github.com/seed1b407122/database-operator/controllers/internal/cronschedule"
)

// Reasons of the events a ScheduledDatabaseBackup gets.
const (
	EventBackupCreated   = "BackupCreated"
	EventBackupsDeleted  = "BackupsDeleted"
	EventRunSkipped      = "RunSkipped"
	EventInvalidSchedule = "InvalidSchedule"
)

// observation is what one reconcile saw and did.
type observation struct {
	// backups are the schedule's own backups (controller reference = the schedule), as listed
	// and then as created or deleted by this reconcile.
	backups []databasev1alpha1.DatabaseBackup
	// started is the scheduled minute of the run this reconcile created or found; zero if none.
	started time.Time
	// scheduleErr says why the schedule is invalid.
	scheduleErr error
	// err is the error of an API call; the reconcile is retried.
	err error
}

// observe lists the schedule's own backups. The label only narrows the list: a backup labelled
// with the schedule's name but controlled by anything else is not the schedule's.
func (r *Reconciler) observe(ctx context.Context, s *databasev1alpha1.ScheduledDatabaseBackup) observation {
	list := &databasev1alpha1.DatabaseBackupList{}
	if err := r.List(ctx, list, client.InNamespace(s.Namespace),
		client.MatchingLabels{databasev1alpha1.ScheduleLabel: s.Name}); err != nil {
		return observation{err: fmt.Errorf("listing the backups of %s: %w", s.Name, err)}
	}
	var obs observation
	for _, b := range list.Items {
		if metav1.IsControlledBy(&b, s) {
			obs.backups = append(obs.backups, b)
		}
	}
	return obs
}

// reconcileRun creates the backup of the run that is due, if any, and returns when to look
// again: at the next scheduled minute. A suspended schedule starts nothing and waits for its
// spec to change.
func (r *Reconciler) reconcileRun(ctx context.Context, s *databasev1alpha1.ScheduledDatabaseBackup, obs *observation) ctrl.Result {
	sched, err := cronschedule.Parse(s.Spec.Schedule)
	if err != nil {
		obs.scheduleErr = err
		return ctrl.Result{}
	}
	if s.Spec.Suspend || obs.err != nil {
		return ctrl.Result{}
	}
	now := r.now()
	p := planRuns(sched, lastRun(s), now, startingDeadline(s))
	if !p.missed.IsZero() && (s.Status.LastScheduleTime == nil || p.missed.After(s.Status.LastScheduleTime.Time)) {
		r.Recorder.Eventf(s, nil, corev1.EventTypeWarning, EventRunSkipped, "Schedule",
			"Skipped the run of %s: more than %s late (startingDeadlineSeconds)", p.missed.UTC().Format(time.RFC3339), startingDeadline(s))
	}
	if !p.due.IsZero() {
		obs.err = r.createBackup(ctx, s, p.due, obs)
	}
	if obs.err != nil {
		return ctrl.Result{}
	}
	return ctrl.Result{RequeueAfter: p.next.Sub(now)}
}

// backupSpec keeps a run's backup as created: its spec is immutable, and only the metadata the
// operator owns (labels, annotation, controller reference) is put back by child.Ensure.
var backupSpec = child.Spec[*databasev1alpha1.DatabaseBackup]{
	InSync: func(_, _ *databasev1alpha1.DatabaseBackup) bool { return true },
	Merge:  func(_, _ *databasev1alpha1.DatabaseBackup) {},
}

// createBackup creates the backup of the run scheduled at t. Its name is a function of t, so a
// reconcile that retries after a lost answer finds the backup it created; a backup of that name
// that the schedule does not control is left alone (a *child.ConflictError: Degraded says so).
func (r *Reconciler) createBackup(ctx context.Context, s *databasev1alpha1.ScheduledDatabaseBackup, t time.Time, obs *observation) error {
	desired := BuildBackup(s, t)
	b, result, err := child.Ensure(ctx, r.Client, r.APIReader, desired, &databasev1alpha1.DatabaseBackup{}, backupSpec)
	if err != nil {
		return err
	}
	obs.started = t
	if result == child.Created {
		obs.backups = append(obs.backups, *b)
		r.Recorder.Eventf(s, b, corev1.EventTypeNormal, EventBackupCreated, "Create",
			"Created DatabaseBackup %s of cluster %s for the run of %s", b.Name, s.Spec.ClusterName, t.UTC().Format(time.RFC3339))
	}
	return nil
}

// reconcileRetention deletes the backups the retention lets go (chooseDeletions), each only
// while it is still the one listed (a precondition on its UID), and drops them from obs.
func (r *Reconciler) reconcileRetention(ctx context.Context, s *databasev1alpha1.ScheduledDatabaseBackup, obs *observation) {
	if obs.err != nil {
		return
	}
	chosen := chooseDeletions(s.Spec.Retention, obs.backups, r.now())
	if len(chosen) == 0 {
		return
	}
	var deleted []string
	var errs []error
	kept := obs.backups[:0]
	for _, b := range obs.backups {
		if !slices.Contains(chosen, b.Name) {
			kept = append(kept, b)
			continue
		}
		err := r.Delete(ctx, &b, client.Preconditions{UID: &b.UID})
		if client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("deleting backup %s: %w", b.Name, err))
			kept = append(kept, b)
			continue
		}
		deleted = append(deleted, b.Name)
	}
	obs.backups = kept
	obs.err = errors.Join(errs...)
	if len(deleted) > 0 {
		r.Recorder.Eventf(s, nil, corev1.EventTypeNormal, EventBackupsDeleted, "Delete",
			"Deleted %d backup(s) by retention: %s", len(deleted), strings.Join(deleted, ", "))
	}
}
