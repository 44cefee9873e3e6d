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

package databasecluster

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/seed1b407122/database-operator/api/labels"
	"github.com/seed1b407122/database-operator/controllers/internal/skeleton"
)

// statefulSetChanged lets an update of an owned StatefulSet through only when it changed what
// the operator reads: its spec (generation, so hand edits are repaired), its labels (the cache
// selects by them), or the replica counts and revisions the status is computed from.
func statefulSetChanged() predicate.Predicate {
	return skeleton.OwnedChanged(func(before, after *appsv1.StatefulSet) bool {
		return statusCountsChanged(before.Status, after.Status)
	})
}

// statusCountsChanged reports a change in the StatefulSet status fields the operator reads.
func statusCountsChanged(before, after appsv1.StatefulSetStatus) bool {
	return before.Replicas != after.Replicas ||
		before.ReadyReplicas != after.ReadyReplicas ||
		before.UpdatedReplicas != after.UpdatedReplicas ||
		before.ObservedGeneration != after.ObservedGeneration ||
		before.CurrentRevision != after.CurrentRevision ||
		before.UpdateRevision != after.UpdateRevision
}

// clusterOfChild maps a data claim or a pod to the DatabaseCluster it belongs to, by the labels
// the StatefulSet copied from its templates. Neither is owned by the cluster itself (claims
// outlive it unless the user asks otherwise, pods belong to the StatefulSet), so they are not
// watched through owner references.
func clusterOfChild(_ context.Context, obj client.Object) []reconcile.Request {
	set := obj.GetLabels()
	if set[labels.Name] != "database" || set[labels.Instance] == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{
		Namespace: obj.GetNamespace(), Name: set[labels.Instance],
	}}}
}

// claimSizeChanged lets a claim update through only when its request, capacity or phase changed.
func claimSizeChanged() predicate.Predicate {
	return skeleton.UpdateChanged(func(before, after *corev1.PersistentVolumeClaim) bool {
		return before.Status.Phase != after.Status.Phase ||
			!equality.Semantic.DeepEqual(before.Status.Capacity, after.Status.Capacity) ||
			!equality.Semantic.DeepEqual(before.Spec.Resources.Requests, after.Spec.Resources.Requests)
	})
}

// podReadinessChanged lets a pod update through only when its Ready condition changed (also
// while it terminates: the node lifecycle controller marks the pods of an unreachable node so), it
// started terminating, a container began or stopped failing to start (containerFailure: a
// stuck rollout is told without waiting for its deadline), or the scheduler began or stopped
// finding it unschedulable (a member that may be lost with its node); pods are created and
// deleted through the StatefulSet anyway.
func podReadinessChanged() predicate.Predicate {
	return skeleton.UpdateChanged(func(before, after *corev1.Pod) bool {
		sinceBefore, notReadyBefore := notReadySince(before)
		sinceAfter, notReadyAfter := notReadySince(after)
		return notReadyBefore != notReadyAfter || !sinceBefore.Equal(sinceAfter) ||
			containerFailure(before) != containerFailure(after) ||
			(unschedulable(before) == nil) != (unschedulable(after) == nil) || podReady(before) != podReady(after)
	})
}
