/*
Copyright 2026 The database-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package opmetrics

import (
	"strings"
	"testing"

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
	if err := testutil.CollectAndCompare(Condition, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}

	ReadyReplicas.WithLabelValues("ns", "db").Set(3)
	Forget("DatabaseCluster", "ns", "db")
	if got := testutil.CollectAndCount(Condition); got != 3 {
		t.Fatalf("after Forget, %d condition series remain, want the 3 of the other cluster", got)
	}
	if got := testutil.CollectAndCount(ReadyReplicas); got != 0 {
		t.Fatalf("after Forget, %d ready-replica series remain, want 0", got)
	}
}
