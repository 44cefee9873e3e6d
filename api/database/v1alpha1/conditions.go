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

package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Condition types of a DatabaseCluster.
const (
	// ConditionAvailable is True when every replica is Ready.
	ConditionAvailable = "Available"
	// ConditionProgressing is True while the StatefulSet rolls out a change.
	ConditionProgressing = "Progressing"
	// ConditionResizing is True while the claims are being expanded.
	ConditionResizing = "Resizing"
	// ConditionPaused is True while spec.paused is true.
	ConditionPaused = "Paused"
	// ConditionHibernated is True while spec.hibernated is true.
	ConditionHibernated = "Hibernated"
	// ConditionMonitoringReady is True when the PodMonitor of spec.monitoring is in place; the
	// condition exists only while spec.monitoring is set.
	ConditionMonitoringReady = "MonitoringReady"
)

// Condition reasons of a DatabaseCluster.
const (
	// ReasonAllReplicasReady: every replica is Ready.
	ReasonAllReplicasReady = "AllReplicasReady"
	// ReasonReplicasNotReady: fewer replicas are Ready than wanted.
	ReasonReplicasNotReady = "ReplicasNotReady"
	// ReasonRolloutComplete: every pod runs the current revision.
	ReasonRolloutComplete = "RolloutComplete"
	// ReasonRollingUpdate: pods are being replaced with the current revision.
	ReasonRollingUpdate = "RollingUpdate"
	// ReasonCreating: the StatefulSet is being created, or is new and has no pod yet.
	ReasonCreating = "Creating"
	// ReasonScaling: pods are being added or removed.
	ReasonScaling = "Scaling"
	// ReasonPodNotReady: a pod has not been Ready for longer than the bound.
	ReasonPodNotReady = "PodNotReady"
	// ReasonReconcileFailed: a child could not be written.
	ReasonReconcileFailed = "ReconcileFailed"
	// ReasonRestoreRefused: spec.bootstrap.fromBackup cannot be restored (the backup is missing,
	// not Completed, from a larger cluster, larger than spec.storage.size, or a member claim
	// exists already with other data); no StatefulSet is created until it can.
	ReasonRestoreRefused = "RestoreRefused"
	// ReasonInputMissing: a ConfigMap or Secret the pods read (spec.config, spec.credentials)
	// does not exist or lacks a key; no pod is changed until it is there.
	ReasonInputMissing = "InputMissing"
	// ReasonPodCreateFailed: the StatefulSet controller reports that it cannot create a pod.
	ReasonPodCreateFailed = "PodCreateFailed"
	// ReasonSplitBrain (Degraded True): two or more members report themselves primary. No pod
	// carries the primary role label (NAME-rw routes to none) and the operator changes no role.
	ReasonSplitBrain = "SplitBrain"
	// ReasonStorageExpanding: claims are being expanded to the new size.
	ReasonStorageExpanding = "StorageExpanding"
	// ReasonStorageAsRequested: every claim has the requested size.
	ReasonStorageAsRequested = "StorageAsRequested"
	// ReasonPausedByUser: spec.paused is true.
	ReasonPausedByUser = "PausedByUser"
	// ReasonNotPaused: spec.paused is false.
	ReasonNotPaused = "NotPaused"
	// ReasonHibernated: spec.hibernated is true and no pod runs.
	ReasonHibernated = "Hibernated"
	// ReasonHibernating: spec.hibernated is true and pods are still being stopped.
	ReasonHibernating = "Hibernating"
	// ReasonNotHibernated: spec.hibernated is false.
	ReasonNotHibernated = "NotHibernated"
	// ReasonPodMonitorReady: the PodMonitor of spec.monitoring exists and is controlled by the
	// cluster.
	ReasonPodMonitorReady = "PodMonitorReady"
	// ReasonPodMonitorCRDMissing: the API server does not serve monitoring.coreos.com/v1
	// PodMonitors (the Prometheus Operator is not installed); the PodMonitor is created once it
	// does.
	ReasonPodMonitorCRDMissing = "PodMonitorCRDMissing"
	// ReasonPodMonitorFailed: the PodMonitor could not be written (or its name is held by
	// another object: Degraded says ChildConflict).
	ReasonPodMonitorFailed = "PodMonitorFailed"
)

// Reasons of the Progressing condition about a stuck rollout (see RolloutSpec).
const (
	// ReasonRolloutStuck: a member of the update revision is not Ready past
	// spec.rollout.progressDeadlineSeconds, or its container cannot start; the message names the
	// pod and its container's state.
	ReasonRolloutStuck = "RolloutStuck"
	// ReasonStuckPodReplaced: the operator deleted a stuck member of a revision the spec no
	// longer asks for, so that the StatefulSet recreates it from the current template; the
	// message names the pod.
	ReasonStuckPodReplaced = "StuckPodReplaced"
	// ReasonRolledBack: spec.rollout.autoRollback returned the StatefulSet to the revision before
	// a stuck rollout; the spec still asks for the template that got stuck. The message names
	// the revision.
	ReasonRolledBack = "RolledBack"
)

// The StorageAutoGrow condition (see AutoGrowSpec); it exists only while
// spec.storage.autoGrow is set.
const (
	// ConditionStorageAutoGrow is True while auto-grow can do its work (every member measured,
	// below the threshold or growing) and False when something keeps a member from growing.
	ConditionStorageAutoGrow = "StorageAutoGrow"
	// ReasonBelowThreshold: every member is measured and below thresholdPercent.
	ReasonBelowThreshold = "BelowThreshold"
	// ReasonStorageGrowing: a claim was grown and its expansion is in flight, or a member over
	// the threshold waits for minIntervalSeconds; the message says which.
	ReasonStorageGrowing = "Growing"
	// ReasonAtMaxSize: a member over the threshold has reached maxSize: it will not grow again.
	ReasonAtMaxSize = "AtMaxSize"
	// ReasonExpansionNotAllowed: a member is over the threshold and its StorageClass does not
	// allow volume expansion (allowVolumeExpansion).
	ReasonExpansionNotAllowed = "ExpansionNotAllowed"
	// ReasonUsageUnknown: a member's usage could not be read from its storage agent (the pod is
	// not running, or the agent does not answer); the message says which and why.
	ReasonUsageUnknown = "UsageUnknown"
)

// The MemberLost condition (see AutoHealSpec).
const (
	// ConditionMemberLost is True while a member is lost with its node.
	ConditionMemberLost = "MemberLost"
	// ReasonMemberLost: a member is lost; the message names it, its node and why, and why the
	// operator does not replace it.
	ReasonMemberLost = "MemberLost"
	// ReasonLostMemberReplaced: the operator deleted a lost member's claim and pod (the message
	// says which) so that the StatefulSet recreates it on a healthy node.
	ReasonLostMemberReplaced = "LostMemberReplaced"
	// ReasonNoMemberLost: no member is lost.
	ReasonNoMemberLost = "NoMemberLost"
)

// Finalizer guards the cleanup of a DatabaseCluster's claims.
const Finalizer = "database.seed1b407122.io/finalizer"

// RestartedAtAnnotation on a DatabaseCluster rolls its pods once per new value.
const RestartedAtAnnotation = "database.seed1b407122.io/restartedAt"

// Condition types of a DatabaseBackup.
const (
	// ConditionCompleted is True once every snapshot of the backup is ready to use.
	ConditionCompleted = "Completed"
	// ConditionFailed is True once the backup cannot complete; the message says what to do.
	ConditionFailed = "Failed"
)

// Condition reasons of a DatabaseBackup.
const (
	// ReasonBackupPending: the backup has not begun.
	ReasonBackupPending = "Pending"
	// ReasonWaitingForCluster: the DatabaseCluster does not exist yet; the backup fails if it
	// does not appear soon.
	ReasonWaitingForCluster = "WaitingForCluster"
	// ReasonWaitingForClaims: a member's data claim does not exist or is not Bound yet.
	ReasonWaitingForClaims = "WaitingForClaims"
	// ReasonStoppingCluster: an Offline backup waits for every member of the cluster to stop.
	ReasonStoppingCluster = "StoppingCluster"
	// ReasonSnapshotting: the snapshots exist and are not all ready to use yet.
	ReasonSnapshotting = "Snapshotting"
	// ReasonSnapshotsReady: every snapshot is ready to use.
	ReasonSnapshotsReady = "SnapshotsReady"
	// ReasonClusterNotFound: the DatabaseCluster does not exist.
	ReasonClusterNotFound = "ClusterNotFound"
	// ReasonClusterNotAvailable: an Offline backup needs the cluster Available first.
	ReasonClusterNotAvailable = "ClusterNotAvailable"
	// ReasonClusterBusy: another Offline backup holds the cluster stopped.
	ReasonClusterBusy = "ClusterBusy"
	// ReasonNoSnapshotAPI: the cluster has no snapshot.storage.k8s.io/v1 API.
	ReasonNoSnapshotAPI = "NoSnapshotAPI"
	// ReasonNoSnapshotClass: no VolumeSnapshotClass is named or no default fits the driver.
	ReasonNoSnapshotClass = "NoSnapshotClass"
	// ReasonSnapshotFailed: a snapshot reports an error, or was deleted before it was ready.
	ReasonSnapshotFailed = "SnapshotFailed"
	// ReasonBackupSyncFailed: an API call failed; the backup is retried.
	ReasonBackupSyncFailed = "SyncFailed"
)

// Condition types of a ScheduledDatabaseBackup.
const (
	// ConditionScheduleReady is True while the schedule is valid and its runs are created.
	ConditionScheduleReady = "Ready"
	// ConditionSuspended is True while spec.suspend is true.
	ConditionSuspended = "Suspended"
)

// Condition reasons of a ScheduledDatabaseBackup.
const (
	// ReasonScheduled: the schedule is valid and the next run is planned.
	ReasonScheduled = "Scheduled"
	// ReasonInvalidSchedule: the schedule is one the cron parser refuses or that never fires.
	ReasonInvalidSchedule = "InvalidSchedule"
	// ReasonScheduleSyncFailed: an API call failed; it is retried.
	ReasonScheduleSyncFailed = "SyncFailed"
	// ReasonSuspendedByUser: spec.suspend is true.
	ReasonSuspendedByUser = "SuspendedByUser"
	// ReasonNotSuspended: spec.suspend is false.
	ReasonNotSuspended = "NotSuspended"
)

// BackupFinalizer is on a DatabaseBackup while it holds its cluster stopped (Offline), so that
// deleting the backup starts the cluster again.
const BackupFinalizer = "database.seed1b407122.io/backup"

// OfflineBackupAnnotation on a DatabaseCluster names the Offline DatabaseBackup that holds it
// stopped: the cluster runs no pod (its claims kept) while it is set.
const OfflineBackupAnnotation = "database.seed1b407122.io/offline-backup"

// GetConditions returns the conditions of the DatabaseCluster's status.
func (dc *DatabaseCluster) GetConditions() []metav1.Condition { return dc.Status.Conditions }

// GetConditions returns the conditions of the DatabaseBackup's status.
func (b *DatabaseBackup) GetConditions() []metav1.Condition { return b.Status.Conditions }

// GetConditions returns the conditions of the ScheduledDatabaseBackup's status.
func (s *ScheduledDatabaseBackup) GetConditions() []metav1.Condition { return s.Status.Conditions }
