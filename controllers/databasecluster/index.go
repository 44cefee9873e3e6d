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
	"fmt"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/api/labels"
)

// instanceIndex indexes the cached pods and claims by their instance label, the name of the
// cluster they belong to. A list by label selector alone matches every pod (or claim) of the
// namespace, so with N clusters in a namespace each reconcile did O(N) label matches; with
// the index it looks at the cluster's own objects only, so that a reconcile's cost does not
// grow with the number of clusters (docs/benchmarks.md, *Growth with N*). The lists keep the
// label selector, which the cache applies to what the index returns.
const instanceIndex = "metadata.labels." + labels.Instance

// indexInstance is the index function of instanceIndex.
func indexInstance(obj client.Object) []string {
	if v, ok := obj.GetLabels()[labels.Instance]; ok {
		return []string{v}
	}
	return nil
}

// addIndexes registers instanceIndex for the kinds the reconciler lists per cluster. The
// context only bounds the registration, which does not block.
func addIndexes(mgr ctrl.Manager) error {
	for _, obj := range []client.Object{&corev1.Pod{}, &corev1.PersistentVolumeClaim{}} {
		if err := mgr.GetFieldIndexer().IndexField(context.Background(), obj, instanceIndex, indexInstance); err != nil {
			return fmt.Errorf("indexing %T by %s: %w", obj, labels.Instance, err)
		}
	}
	return nil
}

// ofCluster are the list options of dc's pods or claims: its namespace, its instance (through
// instanceIndex) and the labels of its children.
func ofCluster(dc *databasev1alpha1.DatabaseCluster) []client.ListOption {
	return []client.ListOption{
		client.InNamespace(dc.Namespace), client.MatchingFields{instanceIndex: dc.Name}, client.MatchingLabels(dc.Labels()),
	}
}
