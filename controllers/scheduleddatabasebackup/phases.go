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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	EventBackupsReleased = "BackupsReleased"
)

// observation is what one reconcile saw and did.
type observation struct {
	// backups are the schedule's own backups (ownBackups), as listed and then as released,
	// created or deleted by this reconcile.
	backups []databasev1alpha1.DatabaseBackup
	// controlled are the backups of the namespace that the schedule controls, labelled or not:
	// the ones releaseBackups looks at.
	controlled []databasev1alpha1.DatabaseBackup
	// started is the scheduled minute of the run this reconcile created or found; zero if none.
	started time.Time
	// scheduleErr says why the schedule is invalid.
	scheduleErr error
	// err is the error of an API call; the reconcile is retried.
	err error
}

// observe lists the backups of the schedule's namespace (from the cache, which holds every
// DatabaseBackup) and keeps the schedule's own and the ones it controls. The whole namespace is
// listed, not only the schedule's label: a backup it controls must be released even when a
// user removed its label.
func (r *Reconciler) observe(ctx context.Context, s *databasev1alpha1.ScheduledDatabaseBackup) observation {
	list := &databasev1alpha1.DatabaseBackupList{}
	if err := r.List(ctx, list, client.InNamespace(s.Namespace)); err != nil {
		return observation{err: fmt.Errorf("listing the backups of %s: %w", s.Name, err)}
	}
	obs := observation{backups: ownBackups(s, list.Items)}
	for _, b := range list.Items {
		if metav1.IsControlledBy(&b, s) {
			obs.controlled = append(obs.controlled, b)
		}
	}
	return obs
}

// releaseBackups applies backupOwnerReference none to the backups the schedule controls
// (releasedBackup): each loses the schedule's controller reference and gains its UID
// annotation, so that deleting the schedule no longer deletes it. This is the upgrade of the
// backups 0.3.0 made, and what a change of backupOwnerReference from schedule to none does.
// child.Ensure only ever adds owner references, so this is the one write that removes one: a
// merge patch under an optimistic lock (the owner references are replaced as a whole list),
// which fails rather than apply to a backup changed since it was read; the next reconcile looks
// again. The backup is read afresh first (uncached): the backup controller writes its status
// often, and a patch from a cached copy would conflict for nothing.
func (r *Reconciler) releaseBackups(ctx context.Context, s *databasev1alpha1.ScheduledDatabaseBackup, obs *observation) {
	if obs.err != nil {
		return
	}
	var released []string
	var errs []error
	for i := range obs.controlled {
		if releasedBackup(s, &obs.controlled[i]) == nil {
			continue
		}
		b := &databasev1alpha1.DatabaseBackup{}
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(&obs.controlled[i]), b); err != nil {
			if !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("reading backup %s: %w", obs.controlled[i].Name, err))
			}
			continue
		}
		patched := releasedBackup(s, b)
		if patched == nil {
			continue
		}
		if err := r.Patch(ctx, patched, client.MergeFromWithOptions(b, client.MergeFromWithOptimisticLock{})); err != nil {
			errs = append(errs, fmt.Errorf("releasing backup %s from the schedule's controller reference: %w", b.Name, err))
			continue
		}
		released = append(released, b.Name)
		for j := range obs.backups {
			if obs.backups[j].UID == patched.UID {
				obs.backups[j] = *patched
			}
		}
	}
	obs.err = errors.Join(errs...)
	if len(released) > 0 {
		slices.Sort(released) // the cache lists in no set order
		r.Recorder.Eventf(s, nil, corev1.EventTypeNormal, EventBackupsReleased, "Release",
			"Removed the schedule's controller reference from %d backup(s), which now outlive it (backupOwnerReference none): %s",
			len(released), strings.Join(released, ", "))
	}
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

// backupSpec keeps a run's backup of s as created: its spec is immutable, and only the metadata
// the operator owns (labels, annotations, and the controller reference under
// backupOwnerReference schedule) is put back by child.Ensure. A backup is s's by madeBy, not
// only by a controller reference, which it carries only under backupOwnerReference schedule.
func backupSpec(s *databasev1alpha1.ScheduledDatabaseBackup) child.Spec[*databasev1alpha1.DatabaseBackup] {
	return child.Spec[*databasev1alpha1.DatabaseBackup]{
		InSync: func(_, _ *databasev1alpha1.DatabaseBackup) bool { return true },
		Merge:  func(_, _ *databasev1alpha1.DatabaseBackup) {},
		Owned:  func(b *databasev1alpha1.DatabaseBackup) bool { return madeBy(s, b) },
	}
}

// createBackup creates the backup of the run scheduled at t. Its name is a function of t, so a
// reconcile that retries after a lost answer finds the backup it created; a backup of that name
// that the schedule did not make is left alone (a *child.ConflictError: Degraded says so).
func (r *Reconciler) createBackup(ctx context.Context, s *databasev1alpha1.ScheduledDatabaseBackup, t time.Time, obs *observation) error {
	desired := BuildBackup(s, t)
	b, result, err := child.Ensure(ctx, r.Client, r.APIReader, desired, &databasev1alpha1.DatabaseBackup{}, backupSpec(s))
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
