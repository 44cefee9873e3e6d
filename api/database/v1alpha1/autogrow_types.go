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
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Defaults of spec.storage.autoGrow.
const (
	// DefaultAutoGrowThresholdPercent is thresholdPercent when unset.
	DefaultAutoGrowThresholdPercent int32 = 80
	// DefaultAutoGrowIncrement is increment when unset.
	DefaultAutoGrowIncrement = "20%"
	// DefaultAutoGrowMinIntervalSeconds is minIntervalSeconds when unset: six hours, the wait
	// AWS EBS imposes between two modifications of a volume (other clouds have similar limits).
	DefaultAutoGrowMinIntervalSeconds int32 = 21600
)

// StorageAgentContainerName is the native sidecar the operator adds to the pods of a cluster
// with spec.storage.autoGrow: it serves the usage of the data volume (statfs) on
// StorageAgentPort of the pod's IP, for the operator to read.
const StorageAgentContainerName = "storage-agent"

// StorageAgentPort is the port the storage agent listens on; spec.port and spec.monitoring.port
// cannot use it while spec.storage.autoGrow is set.
const StorageAgentPort int32 = 9190

// AutoGrowSpec lets the operator grow a member's data claim before it fills: when the data
// volume of a member is thresholdPercent full, its claim is expanded by increment (through the
// same path as a raise of spec.storage.size: the pods keep running), at most once per
// minIntervalSeconds per claim, only when the StorageClass allows volume expansion, never while
// an expansion is in flight, and never past maxSize. spec.storage.size is left as written: the
// grown size is read from the claims. The usage is measured by a sidecar the operator adds to
// the pods (storage-agent, from the operator's own image), so setting or removing autoGrow
// rolls the pods once.
type AutoGrowSpec struct {
	// ThresholdPercent is how full (used bytes over the file system's size) a member's data
	// volume must be for its claim to grow. 50 to 99; default 80.
	// +optional
	// +kubebuilder:default=80
	// +kubebuilder:validation:Minimum=50
	// +kubebuilder:validation:Maximum=99
	ThresholdPercent *int32 `json:"thresholdPercent,omitempty"`

	// Increment is how much a claim grows at a time: a percent of its current capacity
	// ("20%", 1% to 100%) or a quantity ("5Gi"; a bare number is bytes). The new size is
	// rounded up to a whole Gi (at 10Gi or more) or a whole Mi. Default "20%".
	// +optional
	// +kubebuilder:default="20%"
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule=`type(self) == int ? self > 0 : (self.matches('^([1-9][0-9]?|100)%$') || (!self.endsWith('%') && isQuantity(self) && quantity(self).isGreaterThan(quantity('0'))))`,message="increment must be a percent from 1% to 100% (e.g. 20%) or a quantity greater than 0 (e.g. 5Gi)"
	Increment *intstr.IntOrString `json:"increment,omitempty"`

	// MaxSize is the hard cap: no claim grows past it (the last growth stops at it). It must be
	// at least spec.storage.size. Required: a volume that fills because of a runaway writer
	// must not grow without bound.
	// +required
	MaxSize resource.Quantity `json:"maxSize"`

	// MinIntervalSeconds is the least time between two growths of one claim: cloud volumes
	// allow one change every few hours (AWS EBS: six), and a growth asked for too soon fails
	// at the provider. 60 to 604800 (a week); default 21600 (six hours).
	// +optional
	// +kubebuilder:default=21600
	// +kubebuilder:validation:Minimum=60
	// +kubebuilder:validation:Maximum=604800
	MinIntervalSeconds *int32 `json:"minIntervalSeconds,omitempty"`
}

// AutoGrows reports whether spec.storage.autoGrow is set.
func (dc *DatabaseCluster) AutoGrows() bool { return dc.Spec.Storage.AutoGrow != nil }

// AutoGrowThreshold is spec.storage.autoGrow.thresholdPercent, or its default.
func (g *AutoGrowSpec) AutoGrowThreshold() int32 {
	if g.ThresholdPercent == nil {
		return DefaultAutoGrowThresholdPercent
	}
	return *g.ThresholdPercent
}

// AutoGrowIncrement is spec.storage.autoGrow.increment, or its default.
func (g *AutoGrowSpec) AutoGrowIncrement() intstr.IntOrString {
	if g.Increment == nil {
		return intstr.FromString(DefaultAutoGrowIncrement)
	}
	return *g.Increment
}

// MinInterval is spec.storage.autoGrow.minIntervalSeconds as a duration, or its default.
func (g *AutoGrowSpec) MinInterval() time.Duration {
	seconds := DefaultAutoGrowMinIntervalSeconds
	if g.MinIntervalSeconds != nil {
		seconds = *g.MinIntervalSeconds
	}
	return time.Duration(seconds) * time.Second
}

// StorageStatus is the usage of the members' data volumes, as the storage agent last measured
// it (only while spec.storage.autoGrow is set).
type StorageStatus struct {
	// Members are the members whose usage was measured, by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=9
	Members []MemberStorage `json:"members,omitempty"`
}

// MemberStorage is the usage of one member's data volume.
type MemberStorage struct {
	// Name is the member's pod.
	Name string `json:"name"`
	// UsedBytes is what the data file system holds.
	UsedBytes int64 `json:"usedBytes"`
	// CapacityBytes is the data file system's size.
	CapacityBytes int64 `json:"capacityBytes"`
	// MeasuredAt is when the agent measured it.
	MeasuredAt metav1.Time `json:"measuredAt"`
}

// AutoGrownAtAnnotation on a data claim is when the operator last grew it (RFC 3339): the
// minimum interval between growths is counted from it.
const AutoGrownAtAnnotation = "database.seed1b407122.io/auto-grown-at"
