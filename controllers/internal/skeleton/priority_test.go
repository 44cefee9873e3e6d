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

package skeleton

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// request names the object name in namespace ns.
func request(name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
}

func pod(name, resourceVersion string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: resourceVersion}}
}

// drain returns the items of q with their priorities, in the order q hands them out.
func drain(t *testing.T, q priorityqueue.PriorityQueue[reconcile.Request], n int) []string {
	t.Helper()
	var got []string
	for range n {
		item, priority, shutdown := q.GetWithPriority()
		if shutdown {
			t.Fatal("the queue shut down")
		}
		got = append(got, item.Name+"@"+map[int]string{0: "0", ChildPriority: "child", handler.LowPriority: "low"}[priority])
		q.Done(item)
	}
	return got
}

func TestBehindQueuesAtChildPriority(t *testing.T) {
	ctx := context.Background()
	q := priorityqueue.New[reconcile.Request]("test")
	defer q.ShutDown()
	own := &handler.EnqueueRequestForObject{}
	child := Behind[client.Object](&handler.EnqueueRequestForObject{})

	// A child's create and update, then a resource's own create: the resource goes first.
	child.Create(ctx, event.CreateEvent{Object: pod("child-created", "1")}, q)
	child.Update(ctx, event.UpdateEvent{ObjectOld: pod("child-updated", "1"), ObjectNew: pod("child-updated", "2")}, q)
	child.Delete(ctx, event.DeleteEvent{Object: pod("child-deleted", "1")}, q)
	// The initial list stays at controller-runtime's LowPriority, below a child's event.
	child.Create(ctx, event.CreateEvent{Object: pod("child-listed", "1"), IsInInitialList: true}, q)
	own.Create(ctx, event.CreateEvent{Object: pod("new", "1")}, q)

	got := drain(t, q, 5)
	want := []string{"new@0", "child-created@child", "child-updated@child", "child-deleted@child", "child-listed@low"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestBehindRaisedByTheResourcesOwnChange(t *testing.T) {
	ctx := context.Background()
	q := priorityqueue.New[reconcile.Request]("test")
	defer q.ShutDown()
	Behind[client.Object](&handler.EnqueueRequestForObject{}).Create(ctx, event.CreateEvent{Object: pod("a", "1")}, q)
	Behind[client.Object](&handler.EnqueueRequestForObject{}).Create(ctx, event.CreateEvent{Object: pod("b", "1")}, q)
	// b's own change while b waits: b is reconciled once, at the resource's priority, first.
	(&handler.EnqueueRequestForObject{}).Update(ctx, event.UpdateEvent{ObjectOld: pod("b", "1"), ObjectNew: pod("b", "2")}, q)
	if got := drain(t, q, 2); got[0] != "b@0" || got[1] != "a@child" {
		t.Fatalf("got %v, want [b@0 a@child]", got)
	}
	if q.Len() != 0 {
		t.Fatalf("%d items left, want 0", q.Len())
	}
}

func TestBehindLeavesAPlainQueue(t *testing.T) {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	Behind[client.Object](&handler.EnqueueRequestForObject{}).Create(context.Background(), event.CreateEvent{Object: pod("a", "1")}, q)
	if item, _ := q.Get(); item != request("a") {
		t.Fatalf("got %v, want %v", item, request("a"))
	}
}
