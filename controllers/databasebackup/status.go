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
	"fmt"
	"strings"
	"time"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/seed1b407122/database-operator/api/conditions"
	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// observation is what one reconcile of a backup that has not finished saw and did.
type observation struct {
	// failReason and failMessage say why the backup can never complete; "" when it still can.
	failReason, failMessage string
	// err is an API error that kept a step from finishing; the backup is retried.
	err error
	// class is the VolumeSnapshotClass resolved for the snapshots.
	class string
	// replicas and storageSize are the cluster's spec.replicas and spec.storage.size, read
	// before the snapshots were created.
	replicas    int32
	storageSize string
	// waiting says what the backup waits for before it begins (the cluster to exist, its claims
	// to be Bound); waitReason is the reason, WaitingForClaims when empty.
	waiting, waitReason string
	// retryAfter is when to look again for what the backup waits for, 0 when a watch tells.
	retryAfter time.Duration
	// holding says that the cluster carries the annotation of this (Offline) backup.
	holding bool
	// running is how many member pods of a held cluster still run.
	running int32
	// snapshots are the backup's VolumeSnapshots by ordinal (nil: none created yet); a nil
	// entry is a snapshot that is gone.
	snapshots []*snapshotv1.VolumeSnapshot
}

// fail records why the backup can never complete.
func (o *observation) fail(reason, message string) observation {
	o.failReason, o.failMessage = reason, message
	return *o
}

// backupState is the phase of a backup with the reason and message of its conditions.
type backupState struct {
	phase   databasev1alpha1.BackupPhase
	reason  string
	message string
}

// finished reports whether a backup reached a final phase.
func finished(phase databasev1alpha1.BackupPhase) bool {
	return phase == databasev1alpha1.BackupCompleted || phase == databasev1alpha1.BackupFailed
}

// allCut reports whether every snapshot exists and has been cut by the storage system.
func allCut(snapshots []*snapshotv1.VolumeSnapshot) bool {
	for _, s := range snapshots {
		if !snapshotCut(s) {
			return false
		}
	}
	return len(snapshots) > 0
}

// stateOf is the phase of a backup from what the reconcile observed; previous is the phase
// before it, kept while an API error hides what happened.
func stateOf(b *databasev1alpha1.DatabaseBackup, obs observation, previous databasev1alpha1.BackupPhase) backupState {
	switch {
	case obs.failReason != "":
		return backupState{databasev1alpha1.BackupFailed, obs.failReason, obs.failMessage}
	case obs.err != nil:
		if previous == "" {
			previous = databasev1alpha1.BackupPending
		}
		return backupState{previous, databasev1alpha1.ReasonBackupSyncFailed, obs.err.Error()}
	case obs.snapshots != nil:
		return snapshotsState(b, obs.snapshots)
	case obs.waiting != "":
		reason := obs.waitReason
		if reason == "" {
			reason = databasev1alpha1.ReasonWaitingForClaims
		}
		return backupState{databasev1alpha1.BackupPending, reason, obs.waiting}
	case obs.holding:
		return backupState{databasev1alpha1.BackupRunning, databasev1alpha1.ReasonStoppingCluster,
			fmt.Sprintf("waiting for %d member pods of cluster %s to stop before the snapshots are cut", obs.running, b.Spec.ClusterName)}
	}
	return backupState{databasev1alpha1.BackupPending, databasev1alpha1.ReasonBackupPending, "the backup has not started"}
}

// snapshotsState: Failed when a snapshot is gone or reports an error, Completed when every one
// is ready to use, Running until then.
func snapshotsState(b *databasev1alpha1.DatabaseBackup, snapshots []*snapshotv1.VolumeSnapshot) backupState {
	ready := 0
	for ordinal, s := range snapshots {
		name := b.SnapshotName(int32(ordinal))
		if s == nil {
			return backupState{databasev1alpha1.BackupFailed, databasev1alpha1.ReasonSnapshotFailed, fmt.Sprintf(
				"VolumeSnapshot %s of member %d was deleted before the backup completed: create a new DatabaseBackup", name, ordinal)}
		}
		if message := snapshotError(s); message != "" {
			return backupState{databasev1alpha1.BackupFailed, databasev1alpha1.ReasonSnapshotFailed, fmt.Sprintf(
				"VolumeSnapshot %s of member %d (claim %s) failed: %s; fix the CSI driver or the VolumeSnapshotClass, then create a new DatabaseBackup",
				name, ordinal, ptr.Deref(s.Spec.Source.PersistentVolumeClaimName, ""), message)}
		}
		if snapshotReady(s) {
			ready++
		}
	}
	if ready == len(snapshots) {
		return backupState{databasev1alpha1.BackupCompleted, databasev1alpha1.ReasonSnapshotsReady,
			fmt.Sprintf("%d/%d VolumeSnapshots are ready to use", ready, len(snapshots))}
	}
	return backupState{databasev1alpha1.BackupRunning, databasev1alpha1.ReasonSnapshotting,
		fmt.Sprintf("%d/%d VolumeSnapshots are ready to use", ready, len(snapshots))}
}

// members is the status entry of each snapshot, by ordinal; a snapshot that is gone keeps the
// entry it had.
func members(b *databasev1alpha1.DatabaseBackup, snapshots []*snapshotv1.VolumeSnapshot) []databasev1alpha1.BackupMember {
	out := make([]databasev1alpha1.BackupMember, len(snapshots))
	for i, s := range snapshots {
		ordinal := int32(i)
		if s == nil {
			if i < len(b.Status.Members) {
				out[i] = b.Status.Members[i]
			}
			out[i].Ordinal, out[i].VolumeSnapshotName = ordinal, b.SnapshotName(ordinal)
			out[i].Error = "the VolumeSnapshot was deleted"
			continue
		}
		out[i] = databasev1alpha1.BackupMember{
			Ordinal:            ordinal,
			ClaimName:          ptr.Deref(s.Spec.Source.PersistentVolumeClaimName, ""),
			VolumeSnapshotName: s.Name,
			ReadyToUse:         snapshotReady(s),
			Error:              snapshotError(s),
		}
		if s.Status != nil && s.Status.RestoreSize != nil {
			out[i].RestoreSize = ptr.To(s.Status.RestoreSize.DeepCopy())
		}
	}
	return out
}

// computeStatus is the status of a backup that had not finished, from what the reconcile
// observed; now stamps the start and the end.
func computeStatus(b *databasev1alpha1.DatabaseBackup, obs observation, now metav1.Time) databasev1alpha1.DatabaseBackupStatus {
	status := *b.Status.DeepCopy()
	status.ObservedGeneration = b.Generation
	if obs.class != "" {
		status.VolumeSnapshotClassName = obs.class
	}
	if obs.replicas > 0 {
		status.ClusterReplicas, status.StorageSize = obs.replicas, obs.storageSize
	}
	if obs.snapshots != nil {
		status.Members = members(b, obs.snapshots)
	}
	st := stateOf(b, obs, b.Status.Phase)
	status.Phase = st.phase
	if status.StartTime == nil && (st.phase == databasev1alpha1.BackupRunning || st.phase == databasev1alpha1.BackupCompleted) {
		status.StartTime = &now
	}
	if finished(st.phase) {
		status.CompletionTime = &now
	}
	setCompletedCondition(&status.Conditions, b, st)
	setFailedCondition(&status.Conditions, b, st)
	return status
}

// setCompletedCondition: True once every snapshot is ready to use; otherwise the reason and
// message say where the backup is.
func setCompletedCondition(conditions *[]metav1.Condition, b *databasev1alpha1.DatabaseBackup, st backupState) {
	meta.SetStatusCondition(conditions, metav1.Condition{
		Type:               databasev1alpha1.ConditionCompleted,
		Status:             conditionStatus(st.phase == databasev1alpha1.BackupCompleted),
		Reason:             st.reason,
		Message:            st.message,
		ObservedGeneration: b.Generation,
	})
}

// setFailedCondition: True once the backup cannot complete, with what to do in the message.
func setFailedCondition(list *[]metav1.Condition, b *databasev1alpha1.DatabaseBackup, st backupState) {
	cond := metav1.Condition{
		Type:               databasev1alpha1.ConditionFailed,
		Status:             conditionStatus(st.phase == databasev1alpha1.BackupFailed),
		Reason:             st.reason,
		Message:            st.message,
		ObservedGeneration: b.Generation,
	}
	if st.phase != databasev1alpha1.BackupFailed && st.reason != databasev1alpha1.ReasonBackupSyncFailed {
		cond.Reason, cond.Message = conditions.ReasonAsExpected, "nothing keeps the backup from completing"
	}
	meta.SetStatusCondition(list, cond)
}

// conditionStatus is True for true.
func conditionStatus(b bool) metav1.ConditionStatus {
	if b {
		return metav1.ConditionTrue
	}
	return metav1.ConditionFalse
}

// snapshotNames lists the snapshots of the status, for events.
func snapshotNames(ms []databasev1alpha1.BackupMember) string {
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.VolumeSnapshotName
	}
	return strings.Join(names, ", ")
}
