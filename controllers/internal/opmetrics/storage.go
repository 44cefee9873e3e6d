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
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

var (
	// StorageRequested is spec.storage.size of each DatabaseCluster, in bytes.
	StorageRequested = newClusterGauge("database_operator_databasecluster_storage_requested_bytes",
		"Storage a DatabaseCluster asks for per member (spec.storage.size), in bytes.")

	// StorageCapacity is the smallest capacity the data claims of each DatabaseCluster report.
	StorageCapacity = newClusterGauge("database_operator_databasecluster_storage_capacity_bytes",
		"Smallest capacity reported by the data claims of a DatabaseCluster (status.capacity), in bytes.")
)

// RecordStorage sets the storage series of one DatabaseCluster: size is its spec.storage.size
// and claims are its data claims. The capacity is the smallest any claim reports: the member
// that runs out first, and the one a growth waits for. One series per cluster rather than per
// claim keeps claim names out of the labels; the kubelet's volume metrics have them per claim.
// A size that does not parse (admission refuses it) and claims that report no capacity yet
// leave their series out.
func RecordStorage(namespace, name, size string, claims []corev1.PersistentVolumeClaim) {
	key := objectKey{namespace, name}
	if q, err := resource.ParseQuantity(size); err == nil {
		StorageRequested.set(key, q.AsApproximateFloat64())
	} else {
		StorageRequested.delete(key)
	}
	smallest, found := resource.Quantity{}, false
	for i := range claims {
		c, ok := claims[i].Status.Capacity[corev1.ResourceStorage]
		if ok && (!found || c.Cmp(smallest) < 0) {
			smallest, found = c, true
		}
	}
	if found {
		StorageCapacity.set(key, smallest.AsApproximateFloat64())
	} else {
		StorageCapacity.delete(key)
	}
}
