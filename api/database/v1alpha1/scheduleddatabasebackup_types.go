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
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultStartingDeadlineSeconds is how late a run may start, when the spec does not say.
const DefaultStartingDeadlineSeconds = 300

// ScheduleLabel on a DatabaseBackup names the ScheduledDatabaseBackup that created it. It is
// a convenience for users (kubectl get dbb -l ..., the Schedule column) and narrows the
// schedule's list of its backups; the operator never trusts the label alone to tell its own
// backups: ScheduleUIDAnnotation (or a controller reference) does.
const ScheduleLabel = "database.seed1b407122.io/schedule"

// ScheduleUIDAnnotation on a DatabaseBackup is the UID of the ScheduledDatabaseBackup that
// created it, set at its creation. It is how a schedule knows its own backups without an owner
// reference: a backup made by hand with the schedule's label does not carry it, and a schedule
// deleted and created again under the same name has another UID, so it never takes the backups
// of the one before for its own.
const ScheduleUIDAnnotation = "database.seed1b407122.io/schedule-uid"

// BackupOwnerReference says whether the backups of a schedule carry an owner reference to it,
// and so whether deleting the schedule deletes them.
// +kubebuilder:validation:Enum=none;schedule
type BackupOwnerReference string

const (
	// BackupOwnerNone means the backups carry no owner reference to the schedule: deleting the
	// schedule leaves them, with their snapshots. The default.
	BackupOwnerNone BackupOwnerReference = "none"
	// BackupOwnerSchedule means the backups are controlled by the schedule: deleting the schedule
	// deletes them and their snapshots (garbage collection).
	BackupOwnerSchedule BackupOwnerReference = "schedule"
)

// BackupRetention says which Completed backups of a schedule are kept. With neither field set,
// every backup is kept.
type BackupRetention struct {
	// KeepLast keeps the newest N Completed backups; older Completed ones are deleted.
	// +optional
	// +kubebuilder:validation:Minimum=1
	KeepLast *int32 `json:"keepLast,omitempty"`

	// MaxAge deletes Completed backups older than this duration (Go syntax: "168h", "30m").
	// +optional
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$') && duration(self) > duration('0s')",message="maxAge must be a positive duration such as 168h or 90m (units h, m, s, ms)"
	MaxAge string `json:"maxAge,omitempty"`
}

// ScheduledDatabaseBackupSpec says when to back up which cluster, and how many backups to keep.
type ScheduledDatabaseBackupSpec struct {
	// ClusterName is the DatabaseCluster, in the schedule's namespace, that each run backs up.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=52
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="clusterName must be the name of a DatabaseCluster (a DNS-1035 label: lowercase letters, digits and '-', starting with a letter)"
	ClusterName string `json:"clusterName"`

	// Schedule in cron format: five fields (e.g. "0 2 * * *") or a macro such as @daily, in UTC.
	// The rule is ScheduledEcho's; the parser that refuses what CEL cannot tell (e.g. "0 0 30 2
	// *") is the one the ScheduledEcho controller uses too.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.startsWith('@') ? self in ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'] : self.trim().split(' ').filter(f, f != '').size() == 5",message="schedule must have five fields (minute hour day-of-month month day-of-week) or be one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly"
	Schedule string `json:"schedule"`

	// Method of each backup: Online (the default) or Offline; see DatabaseBackup.
	// +optional
	// +kubebuilder:default=Online
	Method BackupMethod `json:"method,omitempty"`

	// VolumeSnapshotClassName of each backup; empty: the default class of the cluster's driver.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')`,message="volumeSnapshotClassName must be a VolumeSnapshotClass name (a DNS subdomain: lowercase letters, digits, '-' and '.')"
	VolumeSnapshotClassName string `json:"volumeSnapshotClassName,omitempty"`

	// Suspend stops new runs while true; retention still applies.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// StartingDeadlineSeconds: a run missed by more than this (e.g. while the operator was down)
	// is skipped, as a CronJob's is. At most one missed run is caught up. Default 300.
	// +optional
	// +kubebuilder:default=300
	// +kubebuilder:validation:Minimum=1
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`

	// Retention of the schedule's Completed backups; unset keeps every backup.
	// +optional
	Retention BackupRetention `json:"retention,omitempty"`

	// BackupOwnerReference says what deleting the schedule does to its backups. none (the
	// default): the backups carry no owner reference to the schedule and outlive it, with their
	// snapshots; the schedule knows its own by the annotation
	// database.seed1b407122.io/schedule-uid. schedule: each new backup is also controlled by the
	// schedule, and deleting the schedule deletes it (garbage collection). Backups made while
	// it was none do not gain the reference when it changes to schedule; backups controlled by
	// the schedule lose it when it changes to none.
	// +optional
	// +kubebuilder:default=none
	BackupOwnerReference BackupOwnerReference `json:"backupOwnerReference,omitempty"`
}

// ScheduledDatabaseBackupStatus is the observed state of a ScheduledDatabaseBackup.
type ScheduledDatabaseBackupStatus struct {
	// LastScheduleTime is the scheduled minute of the last run that was started.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`

	// LastSuccessfulTime is the completion time of the newest Completed backup of the schedule.
	// +optional
	LastSuccessfulTime *metav1.Time `json:"lastSuccessfulTime,omitempty"`

	// LastBackupName is the DatabaseBackup of the last run.
	// +optional
	LastBackupName string `json:"lastBackupName,omitempty"`

	// Active names the schedule's backups that are Pending or Running.
	// +optional
	// +listType=set
	Active []string `json:"active,omitempty"`

	// ObservedGeneration is the generation of the spec the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready, Suspended, Degraded.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// The name is checked on create only: NAME-<10-digit unix time> names each backup, which must
// stay a label value (63 characters).
// +kubebuilder:validation:XValidation:rule="oldSelf.hasValue() || size(self.metadata.name) <= 52",optionalOldSelf=true,message="metadata.name must be at most 52 characters: each backup is named NAME-<unix time> and must fit in 63"

// ScheduledDatabaseBackup creates a DatabaseBackup of a cluster on a cron schedule and deletes
// the old ones its retention lets go. The backups outlive the schedule unless
// spec.backupOwnerReference is schedule.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=sdbb,categories=all;database
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.clusterName`
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`
// +kubebuilder:printcolumn:name="Last Backup",type=date,JSONPath=`.status.lastScheduleTime`
// +kubebuilder:printcolumn:name="Backup Owner",type=string,JSONPath=`.spec.backupOwnerReference`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ScheduledDatabaseBackup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ScheduledDatabaseBackupSpec `json:"spec"`

	// +optional
	Status ScheduledDatabaseBackupStatus `json:"status,omitempty"`
}

// ScheduledDatabaseBackupList is a list of ScheduledDatabaseBackups.
// +kubebuilder:object:root=true
type ScheduledDatabaseBackupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ScheduledDatabaseBackup `json:"items"`
}

// ControlsBackups says whether the schedule's new backups are controlled by it
// (spec.backupOwnerReference schedule); not when the API server has not defaulted the field.
func (s *ScheduledDatabaseBackup) ControlsBackups() bool {
	return s.Spec.BackupOwnerReference == BackupOwnerSchedule
}

// BackupName is the name of the run scheduled at t: deterministic, so that a retried reconcile
// finds the backup it created instead of making a second one.
func (s *ScheduledDatabaseBackup) BackupName(t time.Time) string {
	return s.Name + "-" + strconv.FormatInt(t.Unix(), 10)
}

func init() {
	register(&ScheduledDatabaseBackup{}, &ScheduledDatabaseBackupList{})
}
