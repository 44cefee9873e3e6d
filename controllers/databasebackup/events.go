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
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// Event reasons of a DatabaseBackup, one per transition.
const (
	// EventStarted: the backup began (the cluster asked to stop, or the snapshots created).
	EventStarted = "Started"
	// EventSnapshotsCreated: the VolumeSnapshots of every member were created.
	EventSnapshotsCreated = "SnapshotsCreated"
	// EventCompleted: every snapshot is ready to use.
	EventCompleted = "Completed"
	// EventFailed: the backup cannot complete.
	EventFailed = "Failed"
)

// StatusWritten tells each transition of a backup once, from the status before and after a
// write: started, snapshots created, completed or failed.
func (r *Reconciler) StatusWritten(ctx context.Context, before, after *databasev1alpha1.DatabaseBackup) {
	logf.FromContext(ctx).V(1).Info("Patched the status", "phase", after.Status.Phase)
	if before.Status.StartTime == nil && after.Status.StartTime != nil {
		r.Recorder.Eventf(after, nil, corev1.EventTypeNormal, EventStarted, "Backup", "Started the %s backup of cluster %s",
			after.BackupMethod(), after.Spec.ClusterName)
	}
	if len(before.Status.Members) == 0 && len(after.Status.Members) > 0 {
		r.Recorder.Eventf(after, nil, corev1.EventTypeNormal, EventSnapshotsCreated, "Backup", "Created VolumeSnapshots %s of class %s",
			snapshotNames(after.Status.Members), after.Status.VolumeSnapshotClassName)
	}
	if before.Status.Phase == after.Status.Phase {
		return
	}
	switch after.Status.Phase {
	case databasev1alpha1.BackupCompleted:
		r.Recorder.Eventf(after, nil, corev1.EventTypeNormal, EventCompleted, "Backup", "Every VolumeSnapshot of cluster %s is ready to use",
			after.Spec.ClusterName)
	case databasev1alpha1.BackupFailed:
		if c := meta.FindStatusCondition(after.Status.Conditions, databasev1alpha1.ConditionFailed); c != nil {
			r.Recorder.Eventf(after, nil, corev1.EventTypeWarning, EventFailed, "Backup", "%s", c.Message)
		}
	}
}
