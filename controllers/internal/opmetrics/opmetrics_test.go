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
	"runtime"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
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

// BenchmarkConditionSeries measures the heap the condition series of 1,000 DatabaseClusters
// hold, each with the six conditions a running cluster has: go test -bench ConditionSeries
// -run '^$' ./controllers/internal/opmetrics/ (heap-bytes/1000-clusters, series/cluster).
func BenchmarkConditionSeries(b *testing.B) {
	const clusters = 1000
	conditions := []metav1.Condition{
		{Type: "Available", Status: metav1.ConditionTrue}, {Type: "Progressing", Status: metav1.ConditionFalse},
		{Type: "Degraded", Status: metav1.ConditionFalse}, {Type: "Resizing", Status: metav1.ConditionFalse},
		{Type: "Paused", Status: metav1.ConditionFalse}, {Type: "Hibernated", Status: metav1.ConditionFalse},
	}
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
