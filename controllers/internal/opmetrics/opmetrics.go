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

// Package opmetrics holds the operator's own metrics, beyond controller-runtime's: the
// conditions of every resource it manages and the replicas of DatabaseClusters. They are
// registered with controller-runtime's registry and served on the manager's metrics endpoint.
//
// Each controller records the conditions of a resource after computing its status, and forgets
// its series once the resource is gone; the DatabaseCluster controller does the same with the
// replica series, which only that kind has.
package opmetrics

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Label names of the metrics.
const (
	labelKind      = "kind"
	labelNamespace = "namespace"
	labelName      = "name"
)

var (
	// Condition is 1 for the current status of each condition of each resource, in the style
	// of kube-state-metrics: sum by (kind, type, status) counts resources by condition.
	Condition = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "database_operator_resource_condition",
		Help: "Condition of a resource managed by the operator (1 for the current status).",
	}, []string{labelKind, labelNamespace, labelName, "type", "status"})

	// Replicas is spec.replicas of each DatabaseCluster.
	Replicas = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "database_operator_databasecluster_replicas",
		Help: "Replicas a DatabaseCluster asks for.",
	}, []string{labelNamespace, labelName})

	// ReadyReplicas is status.readyReplicas of each DatabaseCluster.
	ReadyReplicas = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "database_operator_databasecluster_ready_replicas",
		Help: "Ready replicas of a DatabaseCluster.",
	}, []string{labelNamespace, labelName})
)

func init() {
	metrics.Registry.MustRegister(Condition, Replicas, ReadyReplicas)
}

// statuses are the values a condition status takes; each gets a series so that a change of
// status moves the 1 from one series to another instead of leaving a stale series behind.
var statuses = []metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown}

// RecordConditions sets the condition series of one resource.
func RecordConditions(kind, namespace, name string, conditions []metav1.Condition) {
	for _, c := range conditions {
		for _, s := range statuses {
			value := 0.0
			if c.Status == s {
				value = 1
			}
			Condition.WithLabelValues(kind, namespace, name, c.Type, strings.ToLower(string(s))).Set(value)
		}
	}
}

// Forget removes the condition series of a resource that is gone.
func Forget(kind, namespace, name string) {
	Condition.DeletePartialMatch(prometheus.Labels{labelKind: kind, labelNamespace: namespace, labelName: name})
}

// RecordReplicas sets the replica series of one DatabaseCluster: the replicas its spec asks for
// and those its StatefulSet reports ready.
func RecordReplicas(namespace, name string, replicas, ready int32) {
	Replicas.WithLabelValues(namespace, name).Set(float64(replicas))
	ReadyReplicas.WithLabelValues(namespace, name).Set(float64(ready))
}

// ForgetReplicas removes the replica series of a DatabaseCluster that is gone.
func ForgetReplicas(namespace, name string) {
	Replicas.DeleteLabelValues(namespace, name)
	ReadyReplicas.DeleteLabelValues(namespace, name)
}
