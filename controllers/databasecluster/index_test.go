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
	"fmt"
	"reflect"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/api/labels"
	"github.com/seed1b407122/database-operator/controllers/internal/heapsize"
)

func TestIndexInstance(t *testing.T) {
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   []string
	}{
		{"a member pod", map[string]string{labels.Name: "database", labels.Instance: "db", labels.ManagedBy: labels.ManagedByValue}, []string{"db"}},
		{"an instance label only", map[string]string{labels.Instance: "other"}, []string{"other"}},
		{"no instance label", map[string]string{labels.Name: "database"}, nil},
		{"no labels", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: tc.labels}}
			if got := indexInstance(pod); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("indexInstance = %v, want %v", got, tc.want)
			}
		})
	}
}

// The benchmarks below compare, on a client-go store like the one behind controller-runtime's
// cache, what one cluster's pod list costs with a label selector alone (the namespace index,
// then the selector on each object, as CacheReader.List does without a field index) and through
// instanceIndex, and what the index costs in memory:
//
//	go test -bench InstanceIndex -run '^$' ./controllers/databasecluster/
//
// The index function wraps indexInstance as controller-runtime's IndexField does: a namespaced
// object is indexed under "<namespace>/<value>" and "__all_namespaces/<value>".

const benchNamespace = "bench"

// indexedStore is a store of one member pod and one claim per cluster for n clusters in one
// namespace, indexed by namespace and, when withIndex, by instanceIndex.
func indexedStore(b *testing.B, n int, withIndex bool) cache.Indexer {
	indexers := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	if withIndex {
		indexers["field:"+instanceIndex] = func(obj any) ([]string, error) {
			o := obj.(client.Object)
			var keys []string
			for _, v := range indexInstance(o) {
				keys = append(keys, o.GetNamespace()+"/"+v, "__all_namespaces/"+v)
			}
			return keys, nil
		}
	}
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, indexers)
	for i := range n {
		dc := benchCluster(i)
		meta := func(name string) metav1.ObjectMeta {
			return metav1.ObjectMeta{Namespace: benchNamespace, Name: name, Labels: dc.Labels()}
		}
		for _, obj := range []client.Object{
			&corev1.Pod{ObjectMeta: meta(dc.StatefulSetName() + "-0")},
			&corev1.PersistentVolumeClaim{ObjectMeta: meta(dc.ClaimName(0))},
		} {
			if err := store.Add(obj); err != nil {
				b.Fatal(err)
			}
		}
	}
	return store
}

func benchCluster(i int) *databasev1alpha1.DatabaseCluster {
	return &databasev1alpha1.DatabaseCluster{ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: fmt.Sprintf("db-%d", i)}}
}

// BenchmarkInstanceIndexList lists one cluster's objects among n clusters' (ns/op grows with n
// for the selector alone, not through the index).
func BenchmarkInstanceIndexList(b *testing.B) {
	for _, n := range []int{100, 1000, 3000} {
		dc := benchCluster(n / 2)
		selector := k8slabels.SelectorFromSet(dc.Labels())
		b.Run(fmt.Sprintf("selector/clusters=%d", n), func(b *testing.B) {
			store := indexedStore(b, n, false)
			for b.Loop() {
				objs, err := store.ByIndex(cache.NamespaceIndex, benchNamespace)
				if err != nil {
					b.Fatal(err)
				}
				if got := countMatching(objs, selector); got != 2 {
					b.Fatalf("%d objects match, want 2", got)
				}
			}
		})
		b.Run(fmt.Sprintf("index/clusters=%d", n), func(b *testing.B) {
			store := indexedStore(b, n, true)
			for b.Loop() {
				objs, err := store.ByIndex("field:"+instanceIndex, benchNamespace+"/"+dc.Name)
				if err != nil {
					b.Fatal(err)
				}
				if got := countMatching(objs, selector); got != 2 {
					b.Fatalf("%d objects match, want 2", got)
				}
			}
		})
	}
}

func countMatching(objs []any, selector k8slabels.Selector) int {
	n := 0
	for _, obj := range objs {
		if selector.Matches(k8slabels.Set(obj.(client.Object).GetLabels())) {
			n++
		}
	}
	return n
}

// BenchmarkInstanceIndexMemory reports the heap the index adds to the store of 1,000 clusters'
// pods and claims.
func BenchmarkInstanceIndexMemory(b *testing.B) {
	const clusters = 1000
	var added float64
	for b.Loop() {
		before := heapsize.AfterGC()
		plain := indexedStore(b, clusters, false)
		withoutIndex := heapsize.AfterGC() - before
		before = heapsize.AfterGC()
		indexed := indexedStore(b, clusters, true)
		withIndex := heapsize.AfterGC() - before
		runtime.KeepAlive(plain)
		runtime.KeepAlive(indexed)
		added = float64(withIndex) - float64(withoutIndex)
	}
	b.ReportMetric(added, "index-heap-bytes/1000-clusters")
}
