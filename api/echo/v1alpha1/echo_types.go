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

// EchoPhase is where the Job of an Echo is.
// +kubebuilder:validation:Enum=Pending;Running;Succeeded;Failed
type EchoPhase string

// Phases of an Echo.
const (
	EchoPending   EchoPhase = "Pending"
	EchoRunning   EchoPhase = "Running"
	EchoSucceeded EchoPhase = "Succeeded"
	EchoFailed    EchoPhase = "Failed"
)

// EchoSpec is the desired state of an Echo.
type EchoSpec struct {
	// Message is printed by the Job's pod. It cannot be changed: create a new Echo instead.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="message is immutable: create a new Echo to print another message"
	Message string `json:"message"`
}

// EchoStatus is the observed state of an Echo.
type EchoStatus struct {
	// JobName is the name of the Job that prints the message.
	// +optional
	JobName string `json:"jobName,omitempty"`

	// Phase follows the Job: Pending, Running, Succeeded or Failed.
	// +optional
	Phase EchoPhase `json:"phase,omitempty"`

	// StartTime is when the Job started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// CompletionTime is when the Job finished.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// ObservedGeneration is the generation of the spec the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Complete, Failed.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// The rule on the name is checked on create only (optionalOldSelf): a name never changes, and an
// Echo stored before the rule existed must still take updates. 58 is MaxEchoNameLength: the Job
// NAME-echo is also the value of its pods' job-name label, at most 63 (63 - 5 = 58).
// +kubebuilder:validation:XValidation:rule="oldSelf.hasValue() || size(self.metadata.name) <= 58",optionalOldSelf=true,message="metadata.name must be at most 58 characters: the Job is named NAME-echo and Job names are limited to 63 (its pods carry the label job-name=NAME-echo)"

// Echo prints a message once, from a Job in its own namespace.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ec
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Job",type=string,JSONPath=`.status.jobName`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Echo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec EchoSpec `json:"spec"`

	// +optional
	Status EchoStatus `json:"status,omitempty"`
}

// EchoList is a list of Echos.
// +kubebuilder:object:root=true
type EchoList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Echo `json:"items"`
}

// JobName is the name of the Job of the Echo.
func (e *Echo) JobName() string { return e.Name + "-echo" }

func init() {
	register(&Echo{}, &EchoList{})
}
