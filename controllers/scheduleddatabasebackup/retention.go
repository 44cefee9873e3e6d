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
	"cmp"
	"slices"
	"time"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// chooseDeletions returns the names of the backups (all of them controlled by the schedule) that
// retention lets go at now, oldest first:
//   - Completed ones beyond the newest keepLast;
//   - Completed ones whose scheduled minute is older than maxAge, except the newest Completed
//     one: a schedule always keeps one backup to restore from;
//   - Failed ones older than the newest Completed one: it supersedes them, and a Failed backup
//     holds no usable snapshot. Failed ones newer than it are kept to be looked at.
//
// Pending and Running backups, and backups already being deleted, are never chosen. With no
// retention set, nothing is chosen: every backup is kept.
func chooseDeletions(retention databasev1alpha1.BackupRetention, backups []databasev1alpha1.DatabaseBackup, now time.Time) []string {
	if retention.KeepLast == nil && retention.MaxAge == "" {
		return nil
	}
	completed := byPhase(backups, databasev1alpha1.BackupCompleted)
	slices.SortFunc(completed, newestFirst)
	chosen := expired(retention, completed, now)
	if len(completed) > 0 {
		newest := scheduledAt(completed[0])
		for _, b := range byPhase(backups, databasev1alpha1.BackupFailed) {
			if scheduledAt(b).Before(newest) {
				chosen = append(chosen, b)
			}
		}
	}
	slices.SortFunc(chosen, func(a, b *databasev1alpha1.DatabaseBackup) int { return newestFirst(b, a) })
	names := make([]string, 0, len(chosen))
	for _, b := range chosen {
		names = append(names, b.Name)
	}
	return names
}

// expired returns the Completed backups (newest first) beyond keepLast or older than maxAge,
// never the newest one for its age.
func expired(retention databasev1alpha1.BackupRetention, completed []*databasev1alpha1.DatabaseBackup, now time.Time) []*databasev1alpha1.DatabaseBackup {
	maxAge, _ := time.ParseDuration(retention.MaxAge) // validated by the CRD; 0 keeps all
	var chosen []*databasev1alpha1.DatabaseBackup
	for i, b := range completed {
		beyondCount := retention.KeepLast != nil && i >= int(*retention.KeepLast)
		tooOld := maxAge > 0 && i > 0 && now.Sub(scheduledAt(b)) > maxAge
		if beyondCount || tooOld {
			chosen = append(chosen, b)
		}
	}
	return chosen
}

// byPhase returns the backups in phase that are not being deleted.
func byPhase(backups []databasev1alpha1.DatabaseBackup, phase databasev1alpha1.BackupPhase) []*databasev1alpha1.DatabaseBackup {
	var out []*databasev1alpha1.DatabaseBackup
	for i := range backups {
		if b := &backups[i]; b.DeletionTimestamp == nil && b.Status.Phase == phase {
			out = append(out, b)
		}
	}
	return out
}

// newestFirst orders backups by scheduled minute, newest first, then by name.
func newestFirst(a, b *databasev1alpha1.DatabaseBackup) int {
	if c := scheduledAt(b).Compare(scheduledAt(a)); c != 0 {
		return c
	}
	return cmp.Compare(b.Name, a.Name)
}
