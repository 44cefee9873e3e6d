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
// conditions of every resource it manages and whether a child's name is held by someone else,
// the replicas and storage of DatabaseClusters, the last backup of each cluster, and reconcile
// errors by reason. They are registered with controller-runtime's registry and served on the
// manager's metrics endpoint.
//
// Each controller records the conditions of a resource after computing its status, and forgets
// its series once the resource is gone; the DatabaseCluster controller does the same with the
// per-cluster series, which only that kind has. Labels name resources only (kind, namespace,
// name), never a pod or a claim, so the series count grows with the resources and nothing else.
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
	// Condition is 1 for the current status of each condition of each resource: sum by (kind,
	// type, status) counts resources by condition. Unlike kube-state-metrics, the two other
	// statuses have no series (not a 0): that is a third of the series, the largest share of the
	// operator's memory per cluster at scale (docs/benchmarks.md).
	Condition = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "database_operator_resource_condition",
		Help: "Condition of a resource managed by the operator (1 for the current status).",
	}, []string{labelKind, labelNamespace, labelName, "type", "status"})

	// ChildConflict is 1 while a child's name is held by an object the resource does not
	// control (a condition with reason ChildConflict), 0 otherwise.
	ChildConflict = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "database_operator_resource_child_conflict",
		Help: "1 while a child's name is held by an object the resource does not control.",
	}, []string{labelKind, labelNamespace, labelName})

	// Replicas is spec.replicas of each DatabaseCluster.
	Replicas = clusterGauge(prometheus.GaugeOpts{Name: "database_operator_databasecluster_replicas",
		Help: "Replicas a DatabaseCluster asks for."})

	// ReadyReplicas is status.readyReplicas of each DatabaseCluster.
	ReadyReplicas = clusterGauge(prometheus.GaugeOpts{Name: "database_operator_databasecluster_ready_replicas",
		Help: "Ready replicas of a DatabaseCluster."})
)

// clusterGauge is a gauge with a series per DatabaseCluster, labelled with its namespace and name.
func clusterGauge(opts prometheus.GaugeOpts) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(opts, []string{labelNamespace, labelName})
}

func init() {
	metrics.Registry.MustRegister(Condition, ChildConflict, Replicas, ReadyReplicas,
		StorageRequested, StorageCapacity, ReconcileErrors, backups)
}

// reasonChildConflict is the condition reason every kind gives a child's name held by another
// object (child.ReasonChildConflict and the API packages' constants have this value).
const reasonChildConflict = "ChildConflict"

// statuses are the values a condition status takes: a change of status deletes the series of
// the old one, so that no stale series is left behind.
var statuses = []metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown}

// RecordConditions sets the condition series of one resource (one per condition, for its
// current status), and its child-conflict series
// from them: a conflict is any condition whose reason is ChildConflict (Degraded True for most
// kinds, Ready False for a ScheduledDatabaseBackup).
func RecordConditions(kind, namespace, name string, conditions []metav1.Condition) {
	conflict := 0.0
	for _, c := range conditions {
		if c.Reason == reasonChildConflict {
			conflict = 1
		}
		for _, s := range statuses {
			status := strings.ToLower(string(s))
			if c.Status == s {
				Condition.WithLabelValues(kind, namespace, name, c.Type, status).Set(1)
			} else {
				Condition.DeleteLabelValues(kind, namespace, name, c.Type, status)
			}
		}
	}
	ChildConflict.WithLabelValues(kind, namespace, name).Set(conflict)
}

// Forget removes the condition and child-conflict series of a resource that is gone.
func Forget(kind, namespace, name string) {
	Condition.DeletePartialMatch(prometheus.Labels{labelKind: kind, labelNamespace: namespace, labelName: name})
	ChildConflict.DeleteLabelValues(kind, namespace, name)
}

// RecordReplicas sets the replica series of one DatabaseCluster: the replicas its spec asks for
// and those its StatefulSet reports ready. It also tells the backup series that the cluster
// exists (see backups).
func RecordReplicas(namespace, name string, replicas, ready int32) {
	Replicas.WithLabelValues(namespace, name).Set(float64(replicas))
	ReadyReplicas.WithLabelValues(namespace, name).Set(float64(ready))
	backups.clusterSeen(namespace, name)
}

// ForgetCluster removes every series of a DatabaseCluster that is gone: replicas, storage and
// its last backup (the backups themselves may outlive the cluster; their series do not).
func ForgetCluster(namespace, name string) {
	Replicas.DeleteLabelValues(namespace, name)
	ReadyReplicas.DeleteLabelValues(namespace, name)
	StorageRequested.DeleteLabelValues(namespace, name)
	StorageCapacity.DeleteLabelValues(namespace, name)
	backups.clusterGone(namespace, name)
}
