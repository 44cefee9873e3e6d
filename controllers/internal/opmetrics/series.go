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
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// gaugeFamily is a gauge whose series are kept as plain Go values, one per key, and turned into
// metrics only when they are scraped (as kube-state-metrics does). A GaugeVec keeps a metric per
// series with its label pairs built in advance: at 1,000 DatabaseClusters, with 11 series each,
// that was the largest single item of the operator's heap (prometheus.MakeLabelPairs and the
// vector's map, about 8 MiB; docs/benchmarks.md). Here a series costs its map entry, and the
// keys share their strings with the objects they were recorded from.
type gaugeFamily[K comparable, V any] struct {
	desc *prometheus.Desc
	// series sends the series of one key: emit is called once per series with its value and
	// its label values, in the order of desc's variable labels.
	series func(key K, value V, emit func(v float64, labelValues ...string))

	mu     sync.RWMutex
	values map[K]V
}

// newGaugeFamily describes a gauge named by opts with the given variable labels.
func newGaugeFamily[K comparable, V any](opts prometheus.GaugeOpts, labels []string,
	series func(key K, value V, emit func(v float64, labelValues ...string)),
) *gaugeFamily[K, V] {
	return &gaugeFamily[K, V]{
		desc:   prometheus.NewDesc(opts.Name, opts.Help, labels, nil),
		series: series,
		values: map[K]V{},
	}
}

// set records the value of key, replacing what was recorded before.
func (g *gaugeFamily[K, V]) set(key K, value V) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.values[key] = value
}

// delete forgets key: its series are no longer exported.
func (g *gaugeFamily[K, V]) delete(key K) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.values, key)
}

// Reset forgets every key (for the tests and benchmarks).
func (g *gaugeFamily[K, V]) Reset() {
	g.mu.Lock()
	defer g.mu.Unlock()
	clear(g.values)
}

// Describe sends the family's description.
func (g *gaugeFamily[K, V]) Describe(ch chan<- *prometheus.Desc) { ch <- g.desc }

// Collect sends the series of every key recorded.
func (g *gaugeFamily[K, V]) Collect(ch chan<- prometheus.Metric) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	for key, value := range g.values {
		g.series(key, value, func(v float64, labelValues ...string) {
			ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, v, labelValues...)
		})
	}
}

// resourceKey names a resource of a kind the operator manages.
type resourceKey struct{ kind, namespace, name string }

// conditionStatus is the current status of one condition, as its series labels it.
type conditionStatus struct{ conditionType, status string }

// clusterValue is a per-cluster series: one value, labelled with the cluster's namespace and name.
func clusterValue(key objectKey, value float64, emit func(v float64, labelValues ...string)) {
	emit(value, key.namespace, key.name)
}

// newClusterGauge is a gauge with a series per DatabaseCluster.
func newClusterGauge(opts prometheus.GaugeOpts) *gaugeFamily[objectKey, float64] {
	return newGaugeFamily(opts, []string{labelNamespace, labelName}, clusterValue)
}
