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

package databasecluster

import (
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// statefulSetChanged lets an update of an owned StatefulSet through only when it changed what
// the operator reads: its spec (generation, so hand edits are repaired), its labels (the cache
// selects by them), or the replica counts and revisions the status is computed from.
func statefulSetChanged() predicate.Predicate {
	return predicate.Or(
		predicate.GenerationChangedPredicate{},
		predicate.LabelChangedPredicate{},
		predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
			before, okBefore := e.ObjectOld.(*appsv1.StatefulSet)
			after, okAfter := e.ObjectNew.(*appsv1.StatefulSet)
			if !okBefore || !okAfter {
				return true
			}
			return statusCountsChanged(before.Status, after.Status)
		}},
	)
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
