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

package databasebackup

import (
	"context"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/api/labels"
	"github.com/seed1b407122/database-operator/controllers/internal/skeleton"
)

// snapshotChanged passes the changes of an owned VolumeSnapshot that the status reads: cut,
// ready, error, restore size (and its labels or generation, which child.Ensure puts back).
func snapshotChanged() predicate.Predicate {
	return skeleton.OwnedChanged(func(before, after *snapshotv1.VolumeSnapshot) bool {
		return snapshotCut(before) != snapshotCut(after) || snapshotReady(before) != snapshotReady(after) ||
			snapshotError(before) != snapshotError(after) ||
			!equality.Semantic.DeepEqual(restoreSize(before), restoreSize(after))
	})
}

// restoreSize is the snapshot's status.restoreSize, or nil.
func restoreSize(s *snapshotv1.VolumeSnapshot) any {
	if s.Status == nil {
		return nil
	}
	return s.Status.RestoreSize
}

// replicasChanged passes the changes of a StatefulSet's wanted or reported replicas: an
// Offline backup waits for both to reach zero.
func replicasChanged() predicate.Predicate {
	return skeleton.UpdateChanged(func(before, after *appsv1.StatefulSet) bool {
		return ptr.Deref(before.Spec.Replicas, 1) != ptr.Deref(after.Spec.Replicas, 1) ||
			before.Status.Replicas != after.Status.Replicas
	})
}

// podDeleted passes only the deletion of a pod: an Offline backup counts the pods that still
// exist, terminating ones too, and the StatefulSet may report 0 replicas before the last one is
// gone; after that only the pod's deletion says that no member runs.
func podDeleted() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// claimPhaseChanged passes the phase changes of a claim: a backup waits for its cluster's
// claims to be Bound.
func claimPhaseChanged() predicate.Predicate {
	return skeleton.UpdateChanged(func(before, after *corev1.PersistentVolumeClaim) bool {
		return before.Status.Phase != after.Status.Phase
	})
}

// backupsOfCluster maps a child of a DatabaseCluster (its StatefulSet, a claim, a pod) to the backups
// of that cluster that have not finished.
func (r *Reconciler) backupsOfCluster(ctx context.Context, obj client.Object) []reconcile.Request {
	set := obj.GetLabels()
	if set[labels.Name] != "database" || set[labels.Instance] == "" {
		return nil
	}
	var backups databasev1alpha1.DatabaseBackupList
	if err := r.List(ctx, &backups, client.InNamespace(obj.GetNamespace())); err != nil {
		return nil
	}
	var requests []reconcile.Request
	for _, b := range backups.Items {
		if b.Spec.ClusterName == set[labels.Instance] && !finished(b.Status.Phase) {
			requests = append(requests, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: b.Namespace, Name: b.Name}})
		}
	}
	return requests
}
