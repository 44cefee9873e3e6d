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

package cachecfg

import (
	"hash/maphash"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
)

// The cached objects of many clusters hold many values alike: every claim of 1Gi has a request
// and a capacity map of one entry, every StatefulSet of one image and size the same kept
// annotations, every Service of the same ports the same slice. A Go map of one entry costs a
// group of eight slots (a ResourceList of one Quantity), so the transforms give those values
// one shared copy: 1,000 claims of 1Gi hold one request map, not 1,000.
//
// Sharing is safe because nothing writes to a cached object: controller-runtime's cache hands
// out deep copies on Get and List, and the predicates, the event handlers and the one read
// without a copy (planRollback) only read. TestSharedValuesAreCopiedOnRead checks the first.
//
// Each table of values alike keeps at most maxShared values and never forgets one: its cost is
// bounded (a few hundred KiB at most), and a value past the bound is kept as decoded, as
// before. Only values that hold nothing of one object are shared (a port with a node port is
// not), so that the table fills with values many objects hold.

// Shared holds the tables of values that the transforms of one cache share (TrimStatefulSet,
// TrimService, TrimClaim are its methods). It belongs to the cache whose transforms use it:
// Options makes one for the manager's cache, and a test or a benchmark makes its own with
// NewShared, so that no table outlives the cache it serves. A nil *Shared shares nothing: its
// transforms trim as the cache does and keep each value as decoded. Safe for concurrent use (the
// informers of several kinds transform at once).
type Shared struct {
	resources   sharedValues[corev1.ResourceList]
	annotations sharedValues[map[string]string]
	ports       sharedValues[[]corev1.ServicePort]
	labels      sharedMaps
}

// NewShared returns empty tables of shared values.
func NewShared() *Shared {
	return &Shared{labels: sharedMaps{seed: maphash.MakeSeed()}}
}

// maxShared bounds each table of shared values.
const maxShared = 256

// sharedValues holds one copy of each value, by a key that says its whole content.
type sharedValues[T any] struct {
	mu     sync.Mutex
	values map[string]T
}

// share returns the copy kept under key, and otherwise keeps value under it while the table has
// room, and returns value.
func (s *sharedValues[T]) share(key string, value T) T {
	s.mu.Lock()
	defer s.mu.Unlock()
	if kept, ok := s.values[key]; ok {
		return kept
	}
	if len(s.values) < maxShared {
		if s.values == nil {
			s.values = map[string]T{}
		}
		s.values[key] = value
	}
	return value
}

// size is how many values the table keeps (for the tests).
func (s *sharedValues[T]) size() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.values)
}

// shareResources returns the shared copy of a ResourceList with the same quantities, by their
// canonical form (a Quantity that prints the same compares the same).
func (s *Shared) shareResources(list corev1.ResourceList) corev1.ResourceList {
	if s == nil || len(list) == 0 {
		return list
	}
	var key strings.Builder
	for _, name := range slices.Sorted(maps.Keys(list)) {
		q := list[name]
		key.WriteString(string(name) + "=" + q.String() + "\x00")
	}
	return s.resources.share(key.String(), list)
}

// shareAnnotations returns the shared copy of a map of strings with the same entries.
func (s *Shared) shareAnnotations(m map[string]string) map[string]string {
	if s == nil || len(m) == 0 {
		return m
	}
	var key strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		key.WriteString(k + "=" + m[k] + "\x00")
	}
	return s.annotations.share(key.String(), m)
}

// sharePorts returns the shared copy of a Service's ports with the same fields, unless one has
// a node port (which the API server allocates per Service).
func (s *Shared) sharePorts(ports []corev1.ServicePort) []corev1.ServicePort {
	if s == nil || len(ports) == 0 {
		return ports
	}
	var key strings.Builder
	for _, p := range ports {
		if p.NodePort != 0 {
			return ports
		}
		appProtocol := "-"
		if p.AppProtocol != nil {
			appProtocol = "=" + *p.AppProtocol
		}
		key.WriteString(p.Name + "\x00" + string(p.Protocol) + "\x00" + appProtocol + "\x00" +
			strconv.Itoa(int(p.Port)) + "\x00" + strconv.Itoa(int(p.TargetPort.Type)) + ":" + p.TargetPort.String() + "\x00")
	}
	return s.ports.share(key.String(), ports)
}

// shareLabels returns the shared copy of a map of labels (or of a selector) with the same
// entries.
func (s *Shared) shareLabels(m map[string]string) map[string]string {
	if s == nil {
		return m
	}
	return s.labels.share(m)
}

// The labels of a cluster's children and their selectors are alike within the cluster (the
// StatefulSet, the two Services and the claims carry the same labels, the StatefulSet and the
// Services the same selector) but differ from one cluster to the next, so a table of them is
// not bounded by what the clusters have in common: sharedMaps keeps them by a hash of their
// content, in two generations of labelsTurn maps each. A map found in the older generation
// moves to the newer; when the newer is full, the older is forgotten. So a cluster's children,
// decoded within a few thousand maps of each other, share one copy, the table holds at most
// 2×labelsTurn maps (those of clusters deleted since are held no longer than two turns), and a
// map forgotten is only no longer shared by the objects decoded after.

// labelsTurn is how many maps one generation of a sharedMaps holds.
const labelsTurn = 2048

// sharedMaps holds one copy of each map of strings, by a hash of its content checked on each
// hit: two maps of one hash but different content are not shared.
type sharedMaps struct {
	mu         sync.Mutex
	seed       maphash.Seed
	young, old map[uint64]map[string]string
}

// share returns the copy of m's content the table holds, and otherwise holds m and returns it.
func (s *sharedMaps) share(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	sum := s.hash(m)
	s.mu.Lock()
	defer s.mu.Unlock()
	if kept, ok := s.young[sum]; ok {
		if maps.Equal(kept, m) {
			return kept
		}
		return m
	}
	if kept, ok := s.old[sum]; ok && maps.Equal(kept, m) {
		m = kept
	}
	if len(s.young) >= labelsTurn || s.young == nil {
		s.old, s.young = s.young, map[uint64]map[string]string{}
	}
	s.young[sum] = m
	return m
}

// hash is the hash of m's entries, whatever the order they are visited in.
func (s *sharedMaps) hash(m map[string]string) uint64 {
	var h maphash.Hash
	h.SetSeed(s.seed)
	var sum uint64
	for k, v := range m {
		h.WriteString(k)
		h.WriteByte(0)
		h.WriteString(v)
		sum += h.Sum64()
		h.Reset()
	}
	return sum
}

// held is how many maps the table holds (for the tests).
func (s *sharedMaps) held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.young) + len(s.old)
}
