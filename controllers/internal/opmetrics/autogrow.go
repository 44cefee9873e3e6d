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

package opmetrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// memberKey names one member of a DatabaseCluster.
type memberKey struct{ namespace, name, member string }

// memberValue is a per-member series, labelled with the cluster's namespace and name and the
// member's pod.
func memberValue(key memberKey, value float64, emit func(v float64, labelValues ...string)) {
	emit(value, key.namespace, key.name, key.member)
}

// newMemberGauge is a gauge with a series per member of a DatabaseCluster (at most 9 each).
func newMemberGauge(opts prometheus.GaugeOpts) *gaugeFamily[memberKey, float64] {
	return newGaugeFamily(opts, []string{labelNamespace, labelName, "member"}, memberValue)
}

var (
	// MemberStorageUsed is the used bytes of each member's data file system, as its storage
	// agent measured them (spec.storage.autoGrow).
	MemberStorageUsed = newMemberGauge(prometheus.GaugeOpts{Name: "database_operator_databasecluster_member_storage_used_bytes",
		Help: "Bytes used on the data file system of a DatabaseCluster member, as measured by its storage agent (spec.storage.autoGrow only)."})
	// MemberStorageCapacity is the size of each member's data file system that the database can
	// use (used plus available), as its storage agent measured it.
	MemberStorageCapacity = newMemberGauge(prometheus.GaugeOpts{Name: "database_operator_databasecluster_member_storage_capacity_bytes",
		Help: "Bytes the database can use on the data file system of a DatabaseCluster member (used plus available), as measured by its storage agent (spec.storage.autoGrow only)."})
	// StorageFullAtMaxSize is, per cluster, the highest used ratio of the members whose claim
	// has reached spec.storage.autoGrow.maxSize while over the threshold: auto-grow will not
	// help them any more. No series while no member is in that state.
	StorageFullAtMaxSize = newClusterGauge("database_operator_databasecluster_storage_full_at_max_size_ratio",
		"Highest used ratio (0-1) of the DatabaseCluster members whose claim is at spec.storage.autoGrow.maxSize and over its threshold; absent when none is.")
)

func init() {
	metrics.Registry.MustRegister(MemberStorageUsed, MemberStorageCapacity)
}

// MemberUsage is one member's measured usage, for RecordAutoGrow.
type MemberUsage struct {
	Member              string
	UsedBytes, Capacity int64
}

// RecordAutoGrow sets the auto-grow series of one DatabaseCluster: the usage of the members
// measured (the series of members not measured this time are removed), and fullAtMax, the
// highest used ratio of a member at maxSize over the threshold (0: none, no series).
// ForgetCluster removes them all.
func RecordAutoGrow(namespace, name string, members []MemberUsage, fullAtMax float64) {
	forgetMembers(namespace, name)
	for _, m := range members {
		key := memberKey{namespace, name, m.Member}
		MemberStorageUsed.set(key, float64(m.UsedBytes))
		MemberStorageCapacity.set(key, float64(m.Capacity))
	}
	key := objectKey{namespace, name}
	if fullAtMax > 0 {
		StorageFullAtMaxSize.set(key, fullAtMax)
	} else {
		StorageFullAtMaxSize.delete(key)
	}
}

// forgetMembers removes the member series of one DatabaseCluster.
func forgetMembers(namespace, name string) {
	for _, g := range []*gaugeFamily[memberKey, float64]{MemberStorageUsed, MemberStorageCapacity} {
		g.deleteWhere(func(k memberKey) bool { return k.namespace == namespace && k.name == name })
	}
}
