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

	"github.com/seed1b407122/database-operator/api/conditions"
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
	// statuses have no series (not a 0): two thirds fewer series to scrape and store.
	Condition = newGaugeFamily(prometheus.GaugeOpts{
		Name: "database_operator_resource_condition",
		Help: "Condition of a resource managed by the operator (1 for the current status).",
	}, []string{labelKind, labelNamespace, labelName, "type", "status"},
		func(key resourceKey, conditions []conditionStatus, emit func(float64, ...string)) {
			for _, c := range conditions {
				emit(1, key.kind, key.namespace, key.name, c.conditionType, c.status)
			}
		})

	// ChildConflict is 1 while a child's name is held by an object the resource does not
	// control (a condition with reason ChildConflict), 0 otherwise.
	ChildConflict = newGaugeFamily(prometheus.GaugeOpts{
		Name: "database_operator_resource_child_conflict",
		Help: "1 while a child's name is held by an object the resource does not control.",
	}, []string{labelKind, labelNamespace, labelName},
		func(key resourceKey, conflict float64, emit func(float64, ...string)) {
			emit(conflict, key.kind, key.namespace, key.name)
		})

	// Replicas is spec.replicas of each DatabaseCluster.
	Replicas = newClusterGauge("database_operator_databasecluster_replicas",
		"Replicas a DatabaseCluster asks for.")

	// ReadyReplicas is status.readyReplicas of each DatabaseCluster.
	ReadyReplicas = newClusterGauge("database_operator_databasecluster_ready_replicas",
		"Ready replicas of a DatabaseCluster.")
)

func init() {
	metrics.Registry.MustRegister(Condition, ChildConflict, ReconcileErrors, backups)
	for _, g := range clusterGauges {
		metrics.Registry.MustRegister(g)
	}
}

// RecordConditions sets the condition series of one resource (one per condition, for its
// current status: a change of status replaces the series of the old one), and its
// child-conflict series from them: a conflict is any condition whose reason is ChildConflict
// (Degraded True for most kinds, Ready False for a ScheduledDatabaseBackup).
func RecordConditions(kind, namespace, name string, list []metav1.Condition) {
	conflict := 0.0
	current := make([]conditionStatus, 0, len(list))
	for _, c := range list {
		if c.Reason == conditions.ReasonChildConflict {
			conflict = 1
		}
		current = append(current, conditionStatus{conditionType: c.Type, status: statusLabel(c.Status)})
	}
	key := resourceKey{kind, namespace, name}
	Condition.set(key, current)
	ChildConflict.set(key, conflict)
}

// statusLabel is the status label of a condition status: "true", "false" or "unknown", without
// allocating for those three.
func statusLabel(s metav1.ConditionStatus) string {
	switch s {
	case metav1.ConditionTrue:
		return "true"
	case metav1.ConditionFalse:
		return "false"
	case metav1.ConditionUnknown:
		return "unknown"
	}
	return strings.ToLower(string(s))
}

// Forget removes the condition and child-conflict series of a resource that is gone.
func Forget(kind, namespace, name string) {
	key := resourceKey{kind, namespace, name}
	Condition.delete(key)
	ChildConflict.delete(key)
}

// RecordReplicas sets the replica series of one DatabaseCluster: the replicas its spec asks for
// and those its StatefulSet reports ready. It also tells the backup series that the cluster
// exists (see backups).
func RecordReplicas(namespace, name string, replicas, ready int32) {
	key := objectKey{namespace, name}
	Replicas.set(key, float64(replicas))
	ReadyReplicas.set(key, float64(ready))
	backups.clusterSeen(namespace, name)
}

// ForgetCluster removes every series of a DatabaseCluster that is gone: replicas, storage, the
// rollout and its last backup (the backups themselves may outlive the cluster; their series do
// not).
func ForgetCluster(namespace, name string) {
	for _, g := range clusterGauges {
		g.delete(objectKey{namespace, name})
	}
	forgetMembers(namespace, name)
	backups.clusterGone(namespace, name)
}
