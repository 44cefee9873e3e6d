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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/api/labels"
)

// ScheduledAtAnnotation on a backup of a schedule is its scheduled minute (RFC 3339): the order
// and the age the retention reads, independent of when the API server stored the backup.
const ScheduledAtAnnotation = "database.seed1b407122.io/scheduled-at"

// BuildBackup is the DatabaseBackup of the run of s scheduled at t: named for s and t, labelled
// with s's name and the operator's managed-by, annotated with its minute and s's UID, with the
// method and class of s's spec. It is controlled by s only when s's backupOwnerReference is
// schedule: by default a backup outlives its schedule.
func BuildBackup(s *databasev1alpha1.ScheduledDatabaseBackup, t time.Time) *databasev1alpha1.DatabaseBackup {
	b := &databasev1alpha1.DatabaseBackup{
		ObjectMeta: metav1.ObjectMeta{
			Name:      s.BackupName(t),
			Namespace: s.Namespace,
			Labels: map[string]string{
				databasev1alpha1.ScheduleLabel: s.Name,
				labels.ManagedBy:               labels.ManagedByValue,
			},
			Annotations: map[string]string{
				ScheduledAtAnnotation:                  t.UTC().Format(time.RFC3339),
				databasev1alpha1.ScheduleUIDAnnotation: string(s.UID),
			},
		},
		Spec: databasev1alpha1.DatabaseBackupSpec{
			ClusterName:             s.Spec.ClusterName,
			VolumeSnapshotClassName: s.Spec.VolumeSnapshotClassName,
			Method:                  s.Spec.Method,
		},
	}
	if s.ControlsBackups() {
		b.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(s, databasev1alpha1.GroupVersion.WithKind(kind))}
	}
	return b
}

// madeBy says whether b is a backup s made. The UID annotation decides when b carries one: a
// backup of an earlier schedule of the same name, or one whose annotation names another
// schedule, is not s's. A backup without it is s's only when s controls it (a backup made
// before the annotation existed, by 0.3.0). The label is never enough.
func madeBy(s *databasev1alpha1.ScheduledDatabaseBackup, b *databasev1alpha1.DatabaseBackup) bool {
	if uid, ok := b.Annotations[databasev1alpha1.ScheduleUIDAnnotation]; ok {
		return uid == string(s.UID)
	}
	return metav1.IsControlledBy(b, s)
}

// ownBackups returns the backups of s among backups, the ones its retention acts on: labelled
// with s's name and made by s (madeBy). A backup from which a user removed the label is left
// out, as it is of "kubectl get dbb -l".
func ownBackups(s *databasev1alpha1.ScheduledDatabaseBackup, backups []databasev1alpha1.DatabaseBackup) []databasev1alpha1.DatabaseBackup {
	var own []databasev1alpha1.DatabaseBackup
	for i := range backups {
		b := &backups[i]
		if b.ObjectMeta.Labels[databasev1alpha1.ScheduleLabel] == s.Name && madeBy(s, b) {
			own = append(own, *b)
		}
	}
	return own
}

// releasedBackup returns b as it must be once backupOwnerReference none applies to it: without
// s's controller reference (its other owner references kept), annotated with s's UID unless it
// already carries a schedule UID. It returns nil when nothing is to change: s controls its
// backups (backupOwnerReference schedule), b is not controlled by s (whatever else controls it,
// or nothing), or b is being deleted. This is how a backup made by 0.3.0 (controlled by its
// schedule, no annotation) comes to outlive its schedule.
func releasedBackup(s *databasev1alpha1.ScheduledDatabaseBackup, b *databasev1alpha1.DatabaseBackup) *databasev1alpha1.DatabaseBackup {
	if s.ControlsBackups() || b.DeletionTimestamp != nil || !metav1.IsControlledBy(b, s) {
		return nil
	}
	released := b.DeepCopy()
	released.OwnerReferences = nil
	for _, ref := range b.OwnerReferences {
		if ref.UID != s.UID || ref.Controller == nil || !*ref.Controller {
			released.OwnerReferences = append(released.OwnerReferences, ref)
		}
	}
	if _, ok := released.Annotations[databasev1alpha1.ScheduleUIDAnnotation]; !ok {
		if released.Annotations == nil {
			released.Annotations = map[string]string{}
		}
		released.Annotations[databasev1alpha1.ScheduleUIDAnnotation] = string(s.UID)
	}
	return released
}

// scheduledAt is the scheduled minute of a backup of a schedule: its annotation, or its creation
// time when the annotation is missing or unreadable.
func scheduledAt(b *databasev1alpha1.DatabaseBackup) time.Time {
	if t, err := time.Parse(time.RFC3339, b.Annotations[ScheduledAtAnnotation]); err == nil {
		return t
	}
	return b.CreationTimestamp.Time
}

// lastRun is where the schedule counts its runs from: the last scheduled minute, or its
// creation before the first run.
func lastRun(s *databasev1alpha1.ScheduledDatabaseBackup) time.Time {
	if s.Status.LastScheduleTime != nil {
		return s.Status.LastScheduleTime.Time
	}
	return s.CreationTimestamp.Time
}

// startingDeadline is spec.startingDeadlineSeconds, or its default.
func startingDeadline(s *databasev1alpha1.ScheduledDatabaseBackup) time.Duration {
	seconds := int64(databasev1alpha1.DefaultStartingDeadlineSeconds)
	if s.Spec.StartingDeadlineSeconds != nil {
		seconds = *s.Spec.StartingDeadlineSeconds
	}
	return time.Duration(seconds) * time.Second
}

// minuteOf is t as the status stores it.
func minuteOf(t time.Time) *metav1.Time {
	m := metav1.NewTime(t)
	return &m
}
