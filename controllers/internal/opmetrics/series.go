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
	"fmt"
	"sort"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// gaugeFamily is a gauge whose series are kept as plain Go values, one per key, and turned into
// metrics only when they are scraped (as kube-state-metrics does). A GaugeVec keeps a metric per
// series with its label pairs built in advance: with a dozen series per DatabaseCluster, those
// pairs and the vector's map grow into the largest single item of the operator's heap. Here a
// series costs its map entry, and the keys share their strings with the objects they were
// recorded from.
//
// A scrape builds the series in a few arrays per family (seriesBatch), not in about 20
// allocations per series as prometheus.MustNewConstMetric makes them, since all of it is
// garbage once the scrape is written (BenchmarkScrape measures both).
type gaugeFamily[K comparable, V any] struct {
	desc *prometheus.Desc
	// labels are the label names in the order the series give their values; sorted says, for
	// each position of the sorted names, which value goes there (the exposition wants the label
	// pairs sorted by name).
	labels []*string
	sorted []int
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
	names := make([]*string, len(labels))
	sorted := make([]int, len(labels))
	for i := range labels {
		names[i], sorted[i] = &labels[i], i
	}
	sort.Slice(sorted, func(a, b int) bool { return labels[sorted[a]] < labels[sorted[b]] })
	return &gaugeFamily[K, V]{
		desc:   prometheus.NewDesc(opts.Name, opts.Help, labels, nil),
		labels: names,
		sorted: sorted,
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

// deleteWhere forgets the keys for which match holds.
func (g *gaugeFamily[K, V]) deleteWhere(match func(K) bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for key := range g.values {
		if match(key) {
			delete(g.values, key)
		}
	}
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
	b := seriesBatch[K, V]{family: g, ch: ch}
	for key, value := range g.values {
		g.series(key, value, b.emit)
	}
}

// seriesChunk is how many series a seriesBatch allocates at a time.
const seriesChunk = 256

// seriesBatch builds the series of one Collect call in chunks of seriesChunk: one array each of
// metrics, gauges, values, label pairs, pointers to them and label values per chunk. The
// metrics are read-only once sent and live as long as the scrape that gathered them.
type seriesBatch[K comparable, V any] struct {
	family  *gaugeFamily[K, V]
	ch      chan<- prometheus.Metric
	metrics []gaugeSeries
	gauges  []dto.Gauge
	values  []float64
	pairs   []dto.LabelPair
	ptrs    []*dto.LabelPair
	strs    []string
}

// emit sends one series with value v and the label values in the family's label order.
func (b *seriesBatch[K, V]) emit(v float64, labelValues ...string) {
	g := b.family
	n := len(g.labels)
	if len(labelValues) != n {
		b.ch <- prometheus.NewInvalidMetric(g.desc, fmt.Errorf("%d label values for %d labels", len(labelValues), n))
		return
	}
	if len(b.metrics) == 0 {
		b.grow(n)
	}
	m, gauge, value := &b.metrics[0], &b.gauges[0], &b.values[0]
	pairs, ptrs, strs := b.pairs[:n:n], b.ptrs[:n:n], b.strs[:n:n]
	b.metrics, b.gauges, b.values = b.metrics[1:], b.gauges[1:], b.values[1:]
	b.pairs, b.ptrs, b.strs = b.pairs[n:], b.ptrs[n:], b.strs[n:]
	*value = v
	gauge.Value = value
	for i, from := range g.sorted {
		strs[i] = labelValues[from]
		pairs[i].Name, pairs[i].Value = g.labels[from], &strs[i]
		ptrs[i] = &pairs[i]
	}
	*m = gaugeSeries{desc: g.desc, labels: ptrs, gauge: gauge}
	b.ch <- m
}

// grow allocates the next chunk, for series of n labels.
func (b *seriesBatch[K, V]) grow(n int) {
	b.metrics, b.gauges, b.values = make([]gaugeSeries, seriesChunk), make([]dto.Gauge, seriesChunk), make([]float64, seriesChunk)
	b.pairs, b.ptrs, b.strs = make([]dto.LabelPair, seriesChunk*n), make([]*dto.LabelPair, seriesChunk*n), make([]string, seriesChunk*n)
}

// gaugeSeries is one series of a gaugeFamily, as a scrape sends it.
type gaugeSeries struct {
	desc   *prometheus.Desc
	labels []*dto.LabelPair
	gauge  *dto.Gauge
}

// Desc is the family's description.
func (m *gaugeSeries) Desc() *prometheus.Desc { return m.desc }

// Write fills out with the series' labels and value.
func (m *gaugeSeries) Write(out *dto.Metric) error {
	out.Label, out.Gauge = m.labels, m.gauge
	return nil
}

// resourceKey names a resource of a kind the operator manages.
type resourceKey struct{ kind, namespace, name string }

// conditionStatus is the current status of one condition, as its series labels it.
type conditionStatus struct{ conditionType, status string }

// clusterValue is a per-cluster series: one value, labelled with the cluster's namespace and name.
func clusterValue(key objectKey, value float64, emit func(v float64, labelValues ...string)) {
	emit(value, key.namespace, key.name)
}

// clusterGauges are the gauges newClusterGauge made: init registers each, and ForgetCluster
// removes a cluster's series from each, so that a new per-cluster gauge needs neither listed.
var clusterGauges []*gaugeFamily[objectKey, float64]

// newClusterGauge is a gauge named name with a series per DatabaseCluster (clusterGauges).
func newClusterGauge(name, help string) *gaugeFamily[objectKey, float64] {
	g := newGaugeFamily(prometheus.GaugeOpts{Name: name, Help: help}, []string{labelNamespace, labelName}, clusterValue)
	clusterGauges = append(clusterGauges, g)
	return g
}
