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
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func request(name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
}

func pod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: "1"}}
}

// TestChildEventsQueueBelowTheResourcesOwnChanges: through ChildEvents, a child's change is
// queued at ChildPriority, an event of the initial list at LowPriority; the resource's own change
// (priority 0) is handed out first, then the child's, then the initial list's.
func TestChildEventsQueueBelowTheResourcesOwnChanges(t *testing.T) {
	q := priorityqueue.New[reconcile.Request]("test")
	defer q.ShutDown()
	ctx := context.Background()
	children := ChildEvents(&handler.EnqueueRequestForObject{})

	children.Create(ctx, event.CreateEvent{Object: pod("listed"), IsInInitialList: true}, q)
	children.Update(ctx, event.UpdateEvent{ObjectOld: pod("child"), ObjectNew: &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "child", ResourceVersion: "2"}}}, q)
	(&handler.EnqueueRequestForObject{}).Create(ctx, event.CreateEvent{Object: pod("own")}, q)

	type got struct {
		name     string
		priority int
	}
	want := []got{{"own", 0}, {"child", ChildPriority}, {"listed", handler.LowPriority}}
	for _, w := range want {
		item, priority, _ := q.GetWithPriority()
		q.Done(item)
		if (got{item.Name, priority}) != w {
			t.Fatalf("next = %s at %d, want %s at %d", item.Name, priority, w.name, w.priority)
		}
	}
}

// TestChildEventsWithAPlainQueue: without a priority queue the handler adds as it would.
func TestChildEventsWithAPlainQueue(t *testing.T) {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	ChildEvents(&handler.EnqueueRequestForObject{}).Create(context.Background(), event.CreateEvent{Object: pod("child")}, q)
	if item, _ := q.Get(); item != request("child") {
		t.Fatalf("queued %v, want %v", item, request("child"))
	}
}
