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
	"github.com/seed1b407122/database-operator/controllers/internal/child"
)

// ScheduledAtAnnotation on a backup of a schedule is its scheduled minute (RFC 3339): the order
// and the age the retention reads, independent of when the API server stored the backup.
const ScheduledAtAnnotation = "database.seed1b407122.io/scheduled-at"

// BuildBackup is the DatabaseBackup of the run of s scheduled at t: named for s and t, labelled
// with s's name and the operator's managed-by, controlled by s, with the method and class of s's spec.
func BuildBackup(s *databasev1alpha1.ScheduledDatabaseBackup, t time.Time) *databasev1alpha1.DatabaseBackup {
	gvk := databasev1alpha1.GroupVersion.WithKind(kind)
	b := &databasev1alpha1.DatabaseBackup{
		ObjectMeta: child.Meta(s, gvk, s.BackupName(t), map[string]string{
			databasev1alpha1.ScheduleLabel: s.Name,
			labels.ManagedBy:               labels.ManagedByValue,
		}),
		Spec: databasev1alpha1.DatabaseBackupSpec{
			ClusterName:             s.Spec.ClusterName,
			VolumeSnapshotClassName: s.Spec.VolumeSnapshotClassName,
			Method:                  s.Spec.Method,
		},
	}
	b.Annotations = map[string]string{ScheduledAtAnnotation: t.UTC().Format(time.RFC3339)}
	return b
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
