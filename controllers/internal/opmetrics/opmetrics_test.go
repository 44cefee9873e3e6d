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
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The HELP and TYPE lines of each gauge, as the text exposition format starts it.
const (
	conditionHelp = `
# HELP database_operator_resource_condition Condition of a resource managed by the operator (1 for the current status).
# TYPE database_operator_resource_condition gauge
`
	replicasHelp = `
# HELP database_operator_databasecluster_replicas Replicas a DatabaseCluster asks for.
# TYPE database_operator_databasecluster_replicas gauge
`
	readyReplicasHelp = `
# HELP database_operator_databasecluster_ready_replicas Ready replicas of a DatabaseCluster.
# TYPE database_operator_databasecluster_ready_replicas gauge
`
)

func TestRecordConditionsMovesTheOneAndForgetRemovesTheSeries(t *testing.T) {
	Condition.Reset()
	RecordConditions("DatabaseCluster", "ns", "db", []metav1.Condition{{Type: "Available", Status: metav1.ConditionFalse}})
	RecordConditions("DatabaseCluster", "ns", "db", []metav1.Condition{{Type: "Available", Status: metav1.ConditionTrue}})
	RecordConditions("DatabaseCluster", "ns", "other", []metav1.Condition{{Type: "Available", Status: metav1.ConditionTrue}})
	compare(t, Condition, conditionHelp+
		conditionSeries("DatabaseCluster", "db", "Available", "true")+
		conditionSeries("DatabaseCluster", "other", "Available", "true"))

	Forget("DatabaseCluster", "ns", "db")
	compare(t, Condition, conditionHelp+conditionSeries("DatabaseCluster", "other", "Available", "true"))
}

func TestRecordConditionsKeepsOneSeriesPerCondition(t *testing.T) {
	Condition.Reset()
	for _, status := range []metav1.ConditionStatus{metav1.ConditionUnknown, metav1.ConditionTrue, metav1.ConditionFalse} {
		RecordConditions("DatabaseCluster", "ns", "db", []metav1.Condition{
			{Type: "Available", Status: status}, {Type: "Degraded", Status: metav1.ConditionFalse},
		})
		if got := testutil.CollectAndCount(Condition); got != 2 {
			t.Fatalf("Available %s: %d condition series, want 2 (one per condition)", status, got)
		}
	}
	compare(t, Condition, conditionHelp+
		conditionSeries("DatabaseCluster", "db", "Available", "false")+
		conditionSeries("DatabaseCluster", "db", "Degraded", "false"))
}

func TestForgetRemovesOnlyTheSeriesOfOneKind(t *testing.T) {
	Condition.Reset()
	ready := []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue}}
	for _, kind := range []string{"DatabaseCluster", "Echo", "ScheduledEcho", "VoteConfig"} {
		RecordConditions(kind, "ns", "same-name", ready)
	}
	Forget("Echo", "ns", "same-name")
	compare(t, Condition, conditionHelp+
		conditionSeries("DatabaseCluster", "same-name", "Ready", "true")+
		conditionSeries("ScheduledEcho", "same-name", "Ready", "true")+
		conditionSeries("VoteConfig", "same-name", "Ready", "true"))
}

func TestRecordReplicasAndForgetCluster(t *testing.T) {
	Replicas.Reset()
	ReadyReplicas.Reset()
	RecordReplicas("ns", "db", 3, 2)
	RecordReplicas("ns", "other", 1, 1)
	compare(t, Replicas, replicasHelp+`database_operator_databasecluster_replicas{name="db",namespace="ns"} 3
database_operator_databasecluster_replicas{name="other",namespace="ns"} 1
`)
	compare(t, ReadyReplicas, readyReplicasHelp+`database_operator_databasecluster_ready_replicas{name="db",namespace="ns"} 2
database_operator_databasecluster_ready_replicas{name="other",namespace="ns"} 1
`)

	// Forget leaves the replica series alone: only the DatabaseCluster controller knows them.
	Forget("DatabaseCluster", "ns", "db")
	if got := testutil.CollectAndCount(Replicas); got != 2 {
		t.Fatalf("after Forget, %d replica series remain, want 2", got)
	}
	ForgetCluster("ns", "db")
	compare(t, Replicas, replicasHelp+`database_operator_databasecluster_replicas{name="other",namespace="ns"} 1
`)
	compare(t, ReadyReplicas, readyReplicasHelp+`database_operator_databasecluster_ready_replicas{name="other",namespace="ns"} 1
`)
}

// conditionSeries is the exposition of the condition conditionType of one resource in namespace
// ns whose status is current: one series, 1, for the current status.
func conditionSeries(kind, name, conditionType, current string) string {
	return fmt.Sprintf("database_operator_resource_condition{kind=%q,name=%q,namespace=\"ns\",status=%q,type=%q} 1\n",
		kind, name, current, conditionType)
}

// compare fails t unless c holds exactly the series of want, in the text exposition format.
func compare(t *testing.T, c prometheus.Collector, want string) {
	t.Helper()
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
}

// runningConditions are the six conditions a running DatabaseCluster has.
func runningConditions() []metav1.Condition {
	return []metav1.Condition{
		{Type: "Available", Status: metav1.ConditionTrue}, {Type: "Progressing", Status: metav1.ConditionFalse},
		{Type: "Degraded", Status: metav1.ConditionFalse}, {Type: "Resizing", Status: metav1.ConditionFalse},
		{Type: "Paused", Status: metav1.ConditionFalse}, {Type: "Hibernated", Status: metav1.ConditionFalse},
	}
}

// BenchmarkConditionSeries measures the heap the condition series of 1,000 DatabaseClusters
// hold, each with the six conditions a running cluster has: go test -bench ConditionSeries
// -run '^$' ./controllers/internal/opmetrics/ (heap-bytes/1000-clusters, series/cluster).
func BenchmarkConditionSeries(b *testing.B) {
	const clusters = 1000
	conditions := runningConditions()
	var heap uint64
	for b.Loop() {
		Condition.Reset()
		before := heapInUse()
		for i := range clusters {
			RecordConditions("DatabaseCluster", "bench", fmt.Sprintf("db-%d", i), conditions)
		}
		heap = heapInUse() - before
	}
	b.ReportMetric(float64(heap), "heap-bytes/1000-clusters")
	b.ReportMetric(float64(testutil.CollectAndCount(Condition))/clusters, "series/cluster")
	Condition.Reset()
}

// heapInUse returns the bytes of live heap objects after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkScrape measures what one scrape of the operator's series of 1,000 DatabaseClusters
// allocates (gathering them and writing the text exposition, as the manager's /metrics does):
// go test -bench Scrape -benchmem -run '^$' ./controllers/internal/opmetrics/. A scrape's
// allocations are garbage at once, but they are made all together, and one scrape during a
// busy moment adds them to the manager's peak heap (docs/benchmarks.md).
func BenchmarkScrape(b *testing.B) {
	const clusters = 1000
	conditions := runningConditions()
	capacity := []corev1.PersistentVolumeClaim{{Status: corev1.PersistentVolumeClaimStatus{
		Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
	for i := range clusters {
		name := fmt.Sprintf("db-%d", i)
		RecordConditions("DatabaseCluster", "bench", name, conditions)
		RecordReplicas("bench", name, 3, 3)
		RecordStorage("bench", name, "1Gi", capacity)
	}
	defer func() {
		for i := range clusters {
			Forget("DatabaseCluster", "bench", fmt.Sprintf("db-%d", i))
			ForgetCluster("bench", fmt.Sprintf("db-%d", i))
		}
	}()
	reg := prometheus.NewRegistry() // as controller-runtime's metrics.Registry
	reg.MustRegister(Condition, ChildConflict, Replicas, ReadyReplicas, StorageRequested, StorageCapacity)
	var series int
	b.ReportAllocs()
	for b.Loop() {
		families, err := reg.Gather()
		if err != nil {
			b.Fatal(err)
		}
		series = 0
		for _, f := range families {
			series += len(f.GetMetric())
			if _, err := expfmt.MetricFamilyToText(io.Discard, f); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(series)/clusters, "series/cluster")
}

// TestGaugeFamilySeries: a family's series carry their label values under the right names
// whatever the order of the labels, more series than one chunk holds are all sent, and a series
// with the wrong number of label values is a scrape error, not a panic.
func TestGaugeFamilySeries(t *testing.T) {
	family := newGaugeFamily(prometheus.GaugeOpts{Name: "test_series", Help: "Test."}, []string{"zone", "app", "mode"},
		func(key int, value float64, emit func(float64, ...string)) {
			emit(value, fmt.Sprintf("z%d", key), "db", "rw")
		})
	for i := range seriesChunk + 1 {
		family.set(i, float64(i))
	}
	if n := testutil.CollectAndCount(family); n != seriesChunk+1 {
		t.Fatalf("series = %d, want %d", n, seriesChunk+1)
	}
	family.Reset()
	family.set(7, 0.5)
	compare(t, family, `
# HELP test_series Test.
# TYPE test_series gauge
test_series{app="db",mode="rw",zone="z7"} 0.5
`)
	broken := newGaugeFamily(prometheus.GaugeOpts{Name: "test_broken", Help: "Test."}, []string{"a", "b"},
		func(key int, value float64, emit func(float64, ...string)) { emit(value, "only one") })
	broken.set(1, 1)
	reg := prometheus.NewRegistry()
	reg.MustRegister(broken)
	if _, err := reg.Gather(); err == nil || !strings.Contains(err.Error(), "1 label values for 2 labels") {
		t.Fatalf("Gather = %v, want the label count error", err)
	}
}
