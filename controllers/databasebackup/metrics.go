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

package databasebackup

import (
	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/opmetrics"
)

// recordBackup tells the last-backup series of b's cluster about b once it finished (the
// skeleton records its conditions).
func recordBackup(b *databasev1alpha1.DatabaseBackup) {
	if finished(b.Status.Phase) && b.Status.CompletionTime != nil {
		opmetrics.RecordBackup(b.Namespace, b.Name, b.Spec.ClusterName,
			b.Status.Phase == databasev1alpha1.BackupCompleted, b.Status.CompletionTime.Time)
	}
}

// ForgetMetrics takes a DatabaseBackup that is gone or being deleted out of the last-backup
// series of its cluster.
func (r *Reconciler) ForgetMetrics(namespace, name string) {
	opmetrics.ForgetBackup(namespace, name)
}
