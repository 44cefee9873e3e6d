/*
Copyright 2026 The database-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultPort is the port the database listens on when spec.port is not set.
const DefaultPort int32 = 9000

// PVCRetentionPolicyType says what happens to the claims of a DatabaseCluster.
// +kubebuilder:validation:Enum=Retain;Delete
type PVCRetentionPolicyType string

const (
	// RetainPVC keeps the claims and the data on them.
	RetainPVC PVCRetentionPolicyType = "Retain"
	// DeletePVC deletes the claims, and with them the data.
	DeletePVC PVCRetentionPolicyType = "Delete"
)

// StorageSpec describes the volume each database pod gets.
type StorageSpec struct {
	// StorageClassName is the StorageClass of the claims. It cannot be changed once set.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="storageClassName is immutable: create a new DatabaseCluster to move to another StorageClass"
	StorageClassName string `json:"storageClassName"`

	// Size is the requested capacity of each claim, as a Kubernetes quantity (e.g. 10Gi).
	// It may grow, which expands every claim, and never shrink.
	// +required
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$`
	// +kubebuilder:validation:XValidation:rule="quantity(self).compareTo(quantity(oldSelf)) >= 0",message="storage size cannot shrink: volumes can only be expanded"
	Size string `json:"size"`
}

// PVCRetentionPolicy says whether claims are kept when the cluster is deleted or scaled down.
type PVCRetentionPolicy struct {
	// WhenDeleted applies when the DatabaseCluster is deleted.
	// +optional
	// +kubebuilder:default=Retain
	WhenDeleted PVCRetentionPolicyType `json:"whenDeleted,omitempty"`

	// WhenScaled applies to the claims of pods removed by a scale-down.
	// +optional
	// +kubebuilder:default=Retain
	WhenScaled PVCRetentionPolicyType `json:"whenScaled,omitempty"`
}

// PodDisruptionBudgetSpec configures the PodDisruptionBudget of the cluster.
type PodDisruptionBudgetSpec struct {
	// Enabled creates a PodDisruptionBudget with maxUnavailable 1 when replicas > 1.
	// +optional
	// +kubebuilder:default=true
	Enabled *bool `json:"enabled,omitempty"`
}

// DatabaseClusterSpec is the desired state of a DatabaseCluster.
type DatabaseClusterSpec struct {
	// Replicas is the number of database pods.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=9
	Replicas *int32 `json:"replicas"`

	// Image is the database container image.
	// +required
	// +kubebuilder:validation:MinLength=1
	Image string `json:"image"`

	// Resources are the requests and limits of the database container.
	// +required
	Resources corev1.ResourceRequirements `json:"resources"`

	// Storage is the volume of each database pod.
	// +required
	Storage StorageSpec `json:"storage"`

	// Port is the TCP port the database listens on and the Services expose.
	// +optional
	// +kubebuilder:default=9000
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`

	// Env are extra environment variables of the database container.
	// +optional
	// +listType=map
	// +listMapKey=name
	Env []corev1.EnvVar `json:"env,omitempty"`

	// Args are the arguments of the database container.
	// +optional
	// +listType=atomic
	Args []string `json:"args,omitempty"`

	// NodeSelector constrains the nodes the pods run on.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations of the database pods.
	// +optional
	// +listType=atomic
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// Affinity replaces the default affinity (pods preferably on different nodes).
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// PriorityClassName of the database pods.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// PodLabels are added to the database pods. They cannot override the operator's labels.
	// +optional
	PodLabels map[string]string `json:"podLabels,omitempty"`

	// PodAnnotations are added to the database pods.
	// +optional
	PodAnnotations map[string]string `json:"podAnnotations,omitempty"`

	// PVCRetentionPolicy says whether claims are deleted with the cluster or on scale-down.
	// Data is kept unless this says Delete.
	// +optional
	// +kubebuilder:default={whenDeleted: Retain, whenScaled: Retain}
	PVCRetentionPolicy *PVCRetentionPolicy `json:"pvcRetentionPolicy,omitempty"`

	// Paused stops the operator from changing any child while true.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// PodDisruptionBudget configures the PodDisruptionBudget of the cluster.
	// +optional
	// +kubebuilder:default={enabled: true}
	PodDisruptionBudget *PodDisruptionBudgetSpec `json:"podDisruptionBudget,omitempty"`
}

// DatabaseClusterStatus is the observed state of a DatabaseCluster.
type DatabaseClusterStatus struct {
	// Replicas is the number of pods the StatefulSet has.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// ReadyReplicas is the number of Ready pods.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// UpdatedReplicas is the number of pods at the current revision.
	// +optional
	UpdatedReplicas int32 `json:"updatedReplicas,omitempty"`

	// CurrentImage is the image of the StatefulSet's pod template.
	// +optional
	CurrentImage string `json:"currentImage,omitempty"`

	// ObservedGeneration is the generation of the spec the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Available, Progressing, Degraded, Resizing, Paused.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// DatabaseCluster is a replicated database: a StatefulSet with persistent storage, a headless and
// a client Service, and a PodDisruptionBudget, kept in place by the operator.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=dbc,categories=all;database
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type DatabaseCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec DatabaseClusterSpec `json:"spec"`

	// +optional
	Status DatabaseClusterStatus `json:"status,omitempty"`
}

// DatabaseClusterList is a list of DatabaseClusters.
// +kubebuilder:object:root=true
type DatabaseClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []DatabaseCluster `json:"items"`
}

func init() {
	register(&DatabaseCluster{}, &DatabaseClusterList{})
}
