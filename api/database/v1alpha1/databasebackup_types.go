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
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BackupMethod says how the snapshots of a backup are taken.
// +kubebuilder:validation:Enum=Online;Offline
type BackupMethod string

const (
	// BackupOnline snapshots every member's claim together while the cluster runs: the copies
	// are crash-consistent, as after a power cut of every member at once.
	BackupOnline BackupMethod = "Online"
	// BackupOffline stops every member (the cluster scales to zero, its claims kept), cuts the
	// snapshots, then starts the members again: the copies are of cleanly stopped databases.
	BackupOffline BackupMethod = "Offline"
)

// BackupPhase is where a DatabaseBackup is in its life.
type BackupPhase string

const (
	// BackupPending is a backup that has not begun.
	BackupPending BackupPhase = "Pending"
	// BackupRunning is a backup that stops the cluster (Offline) or waits for its snapshots.
	BackupRunning BackupPhase = "Running"
	// BackupCompleted is a backup whose every snapshot is ready to use. Final.
	BackupCompleted BackupPhase = "Completed"
	// BackupFailed is a backup that cannot complete; the Failed condition says why. Final.
	BackupFailed BackupPhase = "Failed"
)

// DatabaseBackupSpec says what to back up and how. The spec is immutable, except who may
// restore the backup (restoreAllowedNamespaces): a backup is a record of one point in time.
// +kubebuilder:validation:XValidation:rule="self.clusterName == oldSelf.clusterName && has(self.volumeSnapshotClassName) == has(oldSelf.volumeSnapshotClassName) && (!has(self.volumeSnapshotClassName) || self.volumeSnapshotClassName == oldSelf.volumeSnapshotClassName) && has(self.method) == has(oldSelf.method) && (!has(self.method) || self.method == oldSelf.method)",message="spec is immutable: a DatabaseBackup is the record of one backup; create a new DatabaseBackup to back up again (only restoreAllowedNamespaces may change)"
type DatabaseBackupSpec struct {
	// ClusterName is the DatabaseCluster, in the backup's namespace, whose members' data claims
	// are snapshotted.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=52
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="clusterName must be the name of a DatabaseCluster (a DNS-1035 label: lowercase letters, digits and '-', starting with a letter)"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterName is immutable"
	ClusterName string `json:"clusterName"`

	// VolumeSnapshotClassName is the VolumeSnapshotClass of the snapshots. Empty: the class
	// annotated snapshot.storage.kubernetes.io/is-default-class "true" whose driver is the
	// provisioner of the cluster's StorageClass.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')`,message="volumeSnapshotClassName must be a VolumeSnapshotClass name (a DNS subdomain: lowercase letters, digits, '-' and '.')"
	VolumeSnapshotClassName string `json:"volumeSnapshotClassName,omitempty"`

	// Method is Online (the default: crash-consistent snapshots of the running members) or
	// Offline (the cluster is stopped while the snapshots are cut, then started again; it needs
	// the cluster Available first).
	// +optional
	// +kubebuilder:default=Online
	// +kubebuilder:validation:MaxLength=7
	Method BackupMethod `json:"method,omitempty"`

	// RestoreAllowedNamespaces are the other namespaces whose DatabaseClusters may restore this
	// backup (spec.bootstrap.fromBackup.namespace of the cluster names this backup's namespace).
	// Empty: clusters of the backup's namespace only. A restore reads the backup's data, so it is
	// this side, the owner of the data, that allows it. It may change at any time; a clone that
	// was refused is tried again within seconds.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.all(ns, ns.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'))",message="restoreAllowedNamespaces must hold namespace names (DNS labels: lowercase letters, digits and '-', starting and ending with a letter or digit); there is no wildcard"
	RestoreAllowedNamespaces []string `json:"restoreAllowedNamespaces,omitempty"`
}

// BackupMember is the snapshot of one member's data claim.
type BackupMember struct {
	// Ordinal is the member's pod ordinal.
	Ordinal int32 `json:"ordinal"`

	// ClaimName is the member's data claim, data-CLUSTER-ORDINAL.
	ClaimName string `json:"claimName"`

	// VolumeSnapshotName is the VolumeSnapshot of the claim, BACKUP-ORDINAL, owned by the backup.
	VolumeSnapshotName string `json:"volumeSnapshotName"`

	// ReadyToUse is the snapshot's status.readyToUse: a restore can use it.
	// +optional
	ReadyToUse bool `json:"readyToUse,omitempty"`

	// RestoreSize is the smallest claim the snapshot can be restored into.
	// +optional
	RestoreSize *resource.Quantity `json:"restoreSize,omitempty"`

	// Error is the snapshot's error as the CSI driver or the snapshot-controller reported it.
	// +optional
	Error string `json:"error,omitempty"`
}

// DatabaseBackupStatus is the observed state of a DatabaseBackup.
type DatabaseBackupStatus struct {
	// Phase is Pending, Running, Completed or Failed.
	// +optional
	Phase BackupPhase `json:"phase,omitempty"`

	// StartTime is when the backup began to act: the cluster asked to stop (Offline) or the
	// snapshots created (Online).
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// CompletionTime is when the backup reached Completed or Failed.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// Members has one entry per member of the cluster, by ordinal.
	// +optional
	// +listType=map
	// +listMapKey=ordinal
	Members []BackupMember `json:"members,omitempty"`

	// ClusterReplicas is spec.replicas of the cluster when the snapshots were cut: a restore
	// needs at least as many members.
	// +optional
	ClusterReplicas int32 `json:"clusterReplicas,omitempty"`

	// StorageSize is spec.storage.size of the cluster when the snapshots were cut.
	// +optional
	StorageSize string `json:"storageSize,omitempty"`

	// VolumeSnapshotClassName is the VolumeSnapshotClass of the snapshots: spec's, or the
	// default one that was chosen.
	// +optional
	VolumeSnapshotClassName string `json:"volumeSnapshotClassName,omitempty"`

	// ObservedGeneration is the generation of the spec the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Completed, Failed.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// The name is checked on create only (optionalOldSelf): it is the value of the
// app.kubernetes.io/instance label of the snapshots, and label values are limited to 63.
// +kubebuilder:validation:XValidation:rule="oldSelf.hasValue() || size(self.metadata.name) <= 63",optionalOldSelf=true,message="metadata.name must be at most 63 characters: the VolumeSnapshots carry it as the label app.kubernetes.io/instance, and label values are limited to 63"

// DatabaseBackup is a backup of a DatabaseCluster: one VolumeSnapshot of every member's data
// claim, owned by the backup (never by the cluster), so that it outlives the cluster and goes
// with the backup.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=dbb,categories=all;database
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.clusterName`
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.metadata.labels.database\.seed1b407122\.io/schedule`,description="The ScheduledDatabaseBackup that created the backup (its label database.seed1b407122.io/schedule)"
// +kubebuilder:printcolumn:name="Method",type=string,JSONPath=`.spec.method`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Started",type=date,JSONPath=`.status.startTime`
// +kubebuilder:printcolumn:name="Completed",type=date,JSONPath=`.status.completionTime`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type DatabaseBackup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec DatabaseBackupSpec `json:"spec"`

	// +optional
	Status DatabaseBackupStatus `json:"status,omitempty"`
}

// DatabaseBackupList is a list of DatabaseBackups.
// +kubebuilder:object:root=true
type DatabaseBackupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []DatabaseBackup `json:"items"`
}

func init() {
	register(&DatabaseBackup{}, &DatabaseBackupList{})
}
