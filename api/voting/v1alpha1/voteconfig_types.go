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

// VoteOption is one choice of the vote.
type VoteOption struct {
	// ID identifies the option; it becomes the key OPTION_<ID> of the ConfigMap.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_]+$`
	ID string `json:"id"`

	// Label is what voters see.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Label string `json:"label"`
}

// VoteConfigSpec is the desired state of a VoteConfig.
type VoteConfigSpec struct {
	// Title of the vote.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Title string `json:"title,omitempty"`

	// Options are the choices, 2 to 10, each with a unique id.
	// +required
	// +kubebuilder:validation:MinItems=2
	// +kubebuilder:validation:MaxItems=10
	// +listType=atomic
	// +kubebuilder:validation:XValidation:rule="self.all(o, self.exists_one(p, p.id == o.id))",message="option ids must be unique"
	Options []VoteOption `json:"options"`

	// TargetDeployment is a Deployment in the same namespace whose pods roll when the options change.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')`,message="targetDeployment must be a Deployment name (a DNS subdomain: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit): no Deployment can have any other name"
	TargetDeployment string `json:"targetDeployment,omitempty"`
}

// VoteConfigStatus is the observed state of a VoteConfig.
type VoteConfigStatus struct {
	// ConfigMapName is the ConfigMap holding the options.
	// +optional
	ConfigMapName string `json:"configMapName,omitempty"`

	// LastUpdated is when the ConfigMap's content last changed.
	// +optional
	LastUpdated *metav1.Time `json:"lastUpdated,omitempty"`

	// ObservedGeneration is the generation of the spec the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready, TargetFound.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// The rule on the name is checked on create only (optionalOldSelf): a name never changes, and a
// VoteConfig stored before the rule existed must still take updates, such as the removal of its
// finalizer. 63 is MaxNameLength: the ConfigMap NAME-config carries the label
// app.kubernetes.io/instance=NAME, and label values are limited to 63.
// +kubebuilder:validation:XValidation:rule="oldSelf.hasValue() || size(self.metadata.name) <= 63",optionalOldSelf=true,message="metadata.name must be at most 63 characters: the ConfigMap NAME-config carries the label app.kubernetes.io/instance=NAME, and label values are limited to 63"

// VoteConfig holds the options of a voting app and keeps them in a ConfigMap the app reads.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=vc
// +kubebuilder:printcolumn:name="ConfigMap",type=string,JSONPath=`.status.configMapName`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type VoteConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec VoteConfigSpec `json:"spec"`

	// +optional
	Status VoteConfigStatus `json:"status,omitempty"`
}

// VoteConfigList is a list of VoteConfigs.
// +kubebuilder:object:root=true
type VoteConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VoteConfig `json:"items"`
}

// ConfigMapName is the name of the ConfigMap holding the options.
func (v *VoteConfig) ConfigMapName() string { return v.Name + "-config" }

func init() {
	register(&VoteConfig{}, &VoteConfigList{})
}
