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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ScheduledEchoSpec is the desired state of a ScheduledEcho.
type ScheduledEchoSpec struct {
	// Message is printed by each run.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Message string `json:"message"`

	// Schedule in cron format: five fields (e.g. "*/5 * * * *") or a macro such as @hourly.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.startsWith('@') ? self in ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'] : self.trim().split(' ').filter(f, f != '').size() == 5",message="schedule must have five fields (minute hour day-of-month month day-of-week) or be one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly"
	Schedule string `json:"schedule"`

	// Suspend stops new runs while true.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// ScheduledEchoStatus is the observed state of a ScheduledEcho.
type ScheduledEchoStatus struct {
	// CronJobName is the name of the CronJob that runs the message.
	// +optional
	CronJobName string `json:"cronJobName,omitempty"`

	// LastScheduleTime is when a run was last scheduled.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`

	// ObservedGeneration is the generation of the spec the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready, Suspended.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// The rule on the name is checked on create only (optionalOldSelf): a name never changes, and a
// ScheduledEcho stored before the rule existed must still take updates. 47 is
// MaxScheduledEchoNameLength: the CronJob is NAME-echo and the CronJob API allows 52, which
// leaves room for the Jobs NAME-echo-<minutes since the epoch> and their pods' job-name label
// (63 = 52 + 11).
// +kubebuilder:validation:XValidation:rule="oldSelf.hasValue() || size(self.metadata.name) <= 47",optionalOldSelf=true,message="metadata.name must be at most 47 characters: the CronJob is named NAME-echo and CronJob names are limited to 52 (its Jobs are NAME-echo-<minutes since 1970>, and their pods' job-name label is at most 63)"

// ScheduledEcho prints a message on a schedule, from a CronJob in its own namespace.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=sec
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`
// +kubebuilder:printcolumn:name="Suspend",type=boolean,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name="Last Schedule",type=date,JSONPath=`.status.lastScheduleTime`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ScheduledEcho struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ScheduledEchoSpec `json:"spec"`

	// +optional
	Status ScheduledEchoStatus `json:"status,omitempty"`
}

// ScheduledEchoList is a list of ScheduledEchos.
// +kubebuilder:object:root=true
type ScheduledEchoList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ScheduledEcho `json:"items"`
}

// CronJobName is the name of the CronJob of the ScheduledEcho.
func (s *ScheduledEcho) CronJobName() string { return s.Name + "-echo" }

func init() {
	register(&ScheduledEcho{}, &ScheduledEchoList{})
}
