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
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRecordConditionsMovesTheOneAndForgetRemovesTheSeries(t *testing.T) {
	Condition.Reset()
	RecordConditions("DatabaseCluster", "ns", "db", []metav1.Condition{{Type: "Available", Status: metav1.ConditionFalse}})
	RecordConditions("DatabaseCluster", "ns", "db", []metav1.Condition{{Type: "Available", Status: metav1.ConditionTrue}})
	RecordConditions("DatabaseCluster", "ns", "other", []metav1.Condition{{Type: "Available", Status: metav1.ConditionTrue}})
	want := `
# HELP database_operator_resource_condition Condition of a resource managed by the operator (1 for the current status).
# TYPE database_operator_resource_condition gauge
database_operator_resource_condition{kind="DatabaseCluster",name="db",namespace="ns",status="false",type="Available"} 0
database_operator_resource_condition{kind="DatabaseCluster",name="db",namespace="ns",status="true",type="Available"} 1
database_operator_resource_condition{kind="DatabaseCluster",name="db",namespace="ns",status="unknown",type="Available"} 0
database_operator_resource_condition{kind="DatabaseCluster",name="other",namespace="ns",status="false",type="Available"} 0
database_operator_resource_condition{kind="DatabaseCluster",name="other",namespace="ns",status="true",type="Available"} 1
database_operator_resource_condition{kind="DatabaseCluster",name="other",namespace="ns",status="unknown",type="Available"} 0
`
	compare(t, Condition, want)

	Forget("DatabaseCluster", "ns", "db")
	if got := testutil.CollectAndCount(Condition); got != 3 {
		t.Fatalf("after Forget, %d condition series remain, want the 3 of the other cluster", got)
	}
}

func TestForgetRemovesOnlyTheSeriesOfOneKind(t *testing.T) {
	Condition.Reset()
	ready := []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue}}
	for _, kind := range []string{"DatabaseCluster", "Echo", "ScheduledEcho", "VoteConfig"} {
		RecordConditions(kind, "ns", "same-name", ready)
	}
	Forget("Echo", "ns", "same-name")
	want := `
# HELP database_operator_resource_condition Condition of a resource managed by the operator (1 for the current status).
# TYPE database_operator_resource_condition gauge
database_operator_resource_condition{kind="DatabaseCluster",name="same-name",namespace="ns",status="false",type="Ready"} 0
database_operator_resource_condition{kind="DatabaseCluster",name="same-name",namespace="ns",status="true",type="Ready"} 1
database_operator_resource_condition{kind="DatabaseCluster",name="same-name",namespace="ns",status="unknown",type="Ready"} 0
database_operator_resource_condition{kind="ScheduledEcho",name="same-name",namespace="ns",status="false",type="Ready"} 0
database_operator_resource_condition{kind="ScheduledEcho",name="same-name",namespace="ns",status="true",type="Ready"} 1
database_operator_resource_condition{kind="ScheduledEcho",name="same-name",namespace="ns",status="unknown",type="Ready"} 0
database_operator_resource_condition{kind="VoteConfig",name="same-name",namespace="ns",status="false",type="Ready"} 0
database_operator_resource_condition{kind="VoteConfig",name="same-name",namespace="ns",status="true",type="Ready"} 1
database_operator_resource_condition{kind="VoteConfig",name="same-name",namespace="ns",status="unknown",type="Ready"} 0
`
	compare(t, Condition, want)
}

func TestRecordReplicasAndForgetReplicas(t *testing.T) {
	Replicas.Reset()
	ReadyReplicas.Reset()
	RecordReplicas("ns", "db", 3, 2)
	RecordReplicas("ns", "other", 1, 1)
	compare(t, Replicas, `
# HELP database_operator_databasecluster_replicas Replicas a DatabaseCluster asks for.
# TYPE database_operator_databasecluster_replicas gauge
database_operator_databasecluster_replicas{name="db",namespace="ns"} 3
database_operator_databasecluster_replicas{name="other",namespace="ns"} 1
`)
	compare(t, ReadyReplicas, `
# HELP database_operator_databasecluster_ready_replicas Ready replicas of a DatabaseCluster.
# TYPE database_operator_databasecluster_ready_replicas gauge
database_operator_databasecluster_ready_replicas{name="db",namespace="ns"} 2
database_operator_databasecluster_ready_replicas{name="other",namespace="ns"} 1
`)

	// Forget leaves the replica series alone: only the DatabaseCluster controller knows them.
	Forget("DatabaseCluster", "ns", "db")
	if got := testutil.CollectAndCount(Replicas); got != 2 {
		t.Fatalf("after Forget, %d replica series remain, want 2", got)
	}
	ForgetReplicas("ns", "db")
	compare(t, Replicas, `
# HELP database_operator_databasecluster_replicas Replicas a DatabaseCluster asks for.
# TYPE database_operator_databasecluster_replicas gauge
database_operator_databasecluster_replicas{name="other",namespace="ns"} 1
`)
	compare(t, ReadyReplicas, `
# HELP database_operator_databasecluster_ready_replicas Ready replicas of a DatabaseCluster.
# TYPE database_operator_databasecluster_ready_replicas gauge
database_operator_databasecluster_ready_replicas{name="other",namespace="ns"} 1
`)
}

// compare fails t unless c holds exactly the series of want, in the text exposition format.
func compare(t *testing.T, c prometheus.Collector, want string) {
	t.Helper()
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
}
