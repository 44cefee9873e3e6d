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

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed1b407122/database-operator/api/labels"
)

// appName is the value of labels.Name on the children of a DatabaseCluster.
const appName = "database"

// DataVolumeName is the name of the claim template and of the volume mounted in the pods.
const DataVolumeName = "data"

// DataMountPath is where the data volume is mounted in the database container.
const DataMountPath = "/var/lib/database"

// PortName is the name of the database port on the container and the Services.
const PortName = "db"

// MetricsPortName is the name of the container port of spec.monitoring, which the PodMonitor
// scrapes.
const MetricsPortName = "metrics"

// DefaultMetricsPath is the HTTP path of the metrics when spec.monitoring.path is not set.
const DefaultMetricsPath = "/metrics"

// HeadlessServiceName is the name of the headless Service that gives pods stable DNS names.
func (dc *DatabaseCluster) HeadlessServiceName() string { return dc.Name + "-headless" }

// ClientServiceName is the name of the ClusterIP Service clients connect to.
func (dc *DatabaseCluster) ClientServiceName() string { return dc.Name }

// ReadWriteServiceName is the name of the Service that routes to the primary (with an engine).
func (dc *DatabaseCluster) ReadWriteServiceName() string { return dc.Name + "-rw" }

// ReadOnlyServiceName is the name of the Service that routes to the replicas (with an engine).
func (dc *DatabaseCluster) ReadOnlyServiceName() string { return dc.Name + "-ro" }

// RoleLabel is the label the operator sets on each member's pod, with an engine: the member's
// role as its agent last reported it (MemberRolePrimary or MemberRoleReplica). The Services
// NAME-rw and NAME-ro select on it.
const RoleLabel = "database.seed1b407122.io/role"

// StatefulSetName is the name of the StatefulSet running the database pods.
func (dc *DatabaseCluster) StatefulSetName() string { return dc.Name }

// PodDisruptionBudgetName is the name of the PodDisruptionBudget of the cluster.
func (dc *DatabaseCluster) PodDisruptionBudgetName() string { return dc.Name }

// PodMonitorName is the name of the PodMonitor of spec.monitoring.
func (dc *DatabaseCluster) PodMonitorName() string { return dc.Name }

// MetricsPath is spec.monitoring.path, or DefaultMetricsPath when the API server has not
// defaulted it; empty when spec.monitoring is not set.
func (dc *DatabaseCluster) MetricsPath() string {
	switch {
	case dc.Spec.Monitoring == nil:
		return ""
	case dc.Spec.Monitoring.Path == "":
		return DefaultMetricsPath
	}
	return dc.Spec.Monitoring.Path
}

// SelectorLabels are the immutable labels that select the pods of the cluster.
func (dc *DatabaseCluster) SelectorLabels() map[string]string {
	return labels.Selector(appName, dc.Name)
}

// Labels are the labels of every child of the cluster: the selector labels plus managed-by.
func (dc *DatabaseCluster) Labels() map[string]string {
	return labels.Child(appName, dc.Name)
}

// ClaimName is the name of the claim of the pod with the given ordinal.
func (dc *DatabaseCluster) ClaimName(ordinal int32) string {
	return DataVolumeName + "-" + dc.StatefulSetName() + "-" + itoa(ordinal)
}

// DatabasePort is spec.port, or DefaultPort when the API server has not defaulted it.
func (dc *DatabaseCluster) DatabasePort() int32 {
	if dc.Spec.Port == 0 {
		return DefaultPort
	}
	return dc.Spec.Port
}

// PDBEnabled says whether a PodDisruptionBudget is wanted: enabled (the default) and replicas > 1.
func (dc *DatabaseCluster) PDBEnabled() bool {
	if dc.Spec.Replicas == nil || *dc.Spec.Replicas <= 1 {
		return false
	}
	pdb := dc.Spec.PodDisruptionBudget
	return pdb == nil || pdb.Enabled == nil || *pdb.Enabled
}

// DesiredReplicas is the number of pods the cluster should run: spec.replicas, or 0 while
// hibernated or stopped for an Offline backup.
func (dc *DatabaseCluster) DesiredReplicas() int32 {
	if dc.Stopped() || dc.Spec.Replicas == nil {
		return 0
	}
	return *dc.Spec.Replicas
}

// Stopped says whether the cluster must run no pod and keep its claims: spec.hibernated, or
// an Offline backup holding it (OfflineBackupAnnotation).
func (dc *DatabaseCluster) Stopped() bool {
	return dc.Spec.Hibernated || dc.OfflineBackup() != ""
}

// OfflineBackup is the name of the Offline DatabaseBackup that holds the cluster stopped, or "".
func (dc *DatabaseCluster) OfflineBackup() string {
	return dc.Annotations[OfflineBackupAnnotation]
}

// SnapshotName is the name of the VolumeSnapshot of the member with the given ordinal.
func (b *DatabaseBackup) SnapshotName(ordinal int32) string {
	return b.Name + "-" + itoa(ordinal)
}

// backupAppName is the value of labels.Name on the VolumeSnapshots of a DatabaseBackup.
const backupAppName = "database-backup"

// BackupClusterLabel on a VolumeSnapshot names the DatabaseCluster it is a copy of.
const BackupClusterLabel = "database.seed1b407122.io/cluster"

// Labels are the labels of every VolumeSnapshot of the backup: the backup's child labels plus
// the cluster it copies.
func (b *DatabaseBackup) Labels() map[string]string {
	l := labels.Child(backupAppName, b.Name)
	l[BackupClusterLabel] = b.Spec.ClusterName
	return l
}

// MadeBySchedule is the ScheduledDatabaseBackup that created the backup, as the backup's
// metadata says: the name of ScheduleLabel and the UID of ScheduleUIDAnnotation; for a backup
// without the annotation (made before it existed) the name and UID of its controller reference
// to a ScheduledDatabaseBackup. ok is false for a backup no schedule made, such as one made by
// hand with the label alone.
func (b *DatabaseBackup) MadeBySchedule() (name string, uid types.UID, ok bool) {
	if u := b.Annotations[ScheduleUIDAnnotation]; u != "" {
		return b.ObjectMeta.Labels[ScheduleLabel], types.UID(u), true
	}
	if ref := metav1.GetControllerOfNoCopy(b); ref != nil && ref.Kind == scheduleKind && ref.APIVersion == GroupVersion.String() {
		return ref.Name, ref.UID, true
	}
	return "", "", false
}

// scheduleKind is the kind of a ScheduledDatabaseBackup in an owner reference.
const scheduleKind = "ScheduledDatabaseBackup"

// BackupMethod is spec.method, or Online when the API server has not defaulted it.
func (b *DatabaseBackup) BackupMethod() BackupMethod {
	if b.Spec.Method == "" {
		return BackupOnline
	}
	return b.Spec.Method
}

// WhenDeleted is the claim policy on deletion, Retain unless the user said Delete.
func (dc *DatabaseCluster) WhenDeleted() PVCRetentionPolicyType {
	if p := dc.Spec.PVCRetentionPolicy; p != nil && p.WhenDeleted == DeletePVC {
		return DeletePVC
	}
	return RetainPVC
}

// WhenScaled is the claim policy on scale-down, Retain unless the user said Delete.
func (dc *DatabaseCluster) WhenScaled() PVCRetentionPolicyType {
	if p := dc.Spec.PVCRetentionPolicy; p != nil && p.WhenScaled == DeletePVC {
		return DeletePVC
	}
	return RetainPVC
}

// RestoreSource is the namespace and name of the DatabaseBackup spec.bootstrap.fromBackup
// names (the namespace defaults to the cluster's), and whether that is another namespace.
// Without a bootstrap all three are empty.
func (dc *DatabaseCluster) RestoreSource() (namespace, name string, otherNamespace bool) {
	if dc.Spec.Bootstrap == nil {
		return "", "", false
	}
	src := dc.Spec.Bootstrap.FromBackup
	namespace = src.Namespace
	if namespace == "" {
		namespace = dc.Namespace
	}
	return namespace, src.Name, namespace != dc.Namespace
}

// RestoredFromValue is what status.restoredFromBackup says once the claims are restored: the
// backup's name, qualified as "NAMESPACE/NAME" when it is in another namespace.
func (dc *DatabaseCluster) RestoredFromValue() string {
	namespace, name, other := dc.RestoreSource()
	if other {
		return namespace + "/" + name
	}
	return name
}

// restoreAppName is the value of labels.Name on the snapshot copies of a cross-namespace
// restore.
const restoreAppName = "database-restore"

// RestoreForAnnotation on a VolumeSnapshotContent copied for a cross-namespace restore names
// the cluster it was copied for, as "NAMESPACE/NAME". The content is cluster-scoped, so it
// cannot carry an owner reference to the cluster: this annotation and its volumeSnapshotRef
// are how the operator knows the copy is its own.
const RestoreForAnnotation = "database.seed1b407122.io/restore-for"

// RestoreCopyLabels are the labels of the VolumeSnapshots and VolumeSnapshotContents copied
// for a cross-namespace restore of the cluster.
func (dc *DatabaseCluster) RestoreCopyLabels() map[string]string {
	return labels.Child(restoreAppName, dc.Name)
}

// RestoreCopyName is the name of the VolumeSnapshot, in the cluster's namespace, copied from
// the snapshot of the member with the given ordinal for a cross-namespace restore.
func (dc *DatabaseCluster) RestoreCopyName(ordinal int32) string {
	return dc.Name + "-restore-" + itoa(ordinal)
}

// RestoreContentName is the name of the VolumeSnapshotContent copied for the member with the
// given ordinal. Contents are cluster-wide, so the name holds a hash of the cluster's
// namespace, name and UID: two clusters (or two lives of one name) never share a copy, and the
// name stays within 30 characters.
func (dc *DatabaseCluster) RestoreContentName(ordinal int32) string {
	sum := sha256.Sum256([]byte(dc.Namespace + "/" + dc.Name + "/" + string(dc.UID)))
	return "dbc-restore-" + hex.EncodeToString(sum[:])[:16] + "-" + itoa(ordinal)
}

// RestoreAllowed says whether a DatabaseCluster of namespace may restore the backup: always
// from its own namespace, from another only when spec.restoreAllowedNamespaces lists it.
func (b *DatabaseBackup) RestoreAllowed(namespace string) bool {
	return namespace == b.Namespace || slices.Contains(b.Spec.RestoreAllowedNamespaces, namespace)
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }
