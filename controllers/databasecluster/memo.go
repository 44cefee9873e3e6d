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

package databasecluster

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// clusterMemo remembers a value per cluster between reconciles (what was last read of its
// members), safe for the controller's concurrent reconciles.
type clusterMemo[V any] struct {
	mu sync.Mutex
	of map[types.NamespacedName]V
}

// get returns the value of cluster, and whether there is one.
func (m *clusterMemo[V]) get(cluster types.NamespacedName) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.of[cluster]
	return v, ok
}

// put replaces the value of cluster.
func (m *clusterMemo[V]) put(cluster types.NamespacedName, v V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.of == nil {
		m.of = map[types.NamespacedName]V{}
	}
	m.of[cluster] = v
}

// forget drops the value of cluster (a cluster gone, or one that no longer needs it).
func (m *clusterMemo[V]) forget(cluster types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.of, cluster)
}
