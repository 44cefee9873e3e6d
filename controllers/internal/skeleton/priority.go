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
	"time"

	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ChildPriority is the queue priority of a reconcile that an event of another kind asks for (a
// child's, another resource's it follows): below a change of the resource itself (priority 0: a
// new resource, a spec edit; a DatabaseCluster's user-owned inputs count as such), above what
// controller-runtime queues at handler.LowPriority (the initial list, resyncs). When many
// resources are created at once, each one's first pass (finalizer, children) goes before the
// passes that follow its children's progress, so a new resource waits for the first passes
// queued before it, not for every status update of the others. Every reconcile still runs;
// only the order of the queue changes.
const ChildPriority = -1

// OwnedBy returns the handler of a child kind's events: it queues a reconcile of the child's
// controller when that is of owner's kind, as builder.Owns does, at ChildPriority. Use it with
// the builder's Watches instead of Owns.
func OwnedBy(mgr ctrl.Manager, owner client.Object) handler.EventHandler {
	return Behind(handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), owner, handler.OnlyControllerOwner()))
}

// Behind wraps h, the handler of another kind's events, so that the reconciles it asks for are
// queued at ChildPriority (or lower, where h asks for lower) in a priority queue. With another
// queue it changes nothing.
func Behind[T client.Object](h handler.TypedEventHandler[T, reconcile.Request]) handler.TypedEventHandler[T, reconcile.Request] {
	return behind[T]{h}
}

type behind[T client.Object] struct {
	handler.TypedEventHandler[T, reconcile.Request]
}

func (b behind[T]) Create(ctx context.Context, e event.TypedCreateEvent[T], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	b.TypedEventHandler.Create(ctx, e, lower(q))
}

func (b behind[T]) Update(ctx context.Context, e event.TypedUpdateEvent[T], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	b.TypedEventHandler.Update(ctx, e, lower(q))
}

func (b behind[T]) Delete(ctx context.Context, e event.TypedDeleteEvent[T], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	b.TypedEventHandler.Delete(ctx, e, lower(q))
}

func (b behind[T]) Generic(ctx context.Context, e event.TypedGenericEvent[T], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	b.TypedEventHandler.Generic(ctx, e, lower(q))
}

// lower returns q, when it is a priority queue, as one whose additions are at ChildPriority at
// the most.
func lower(q workqueue.TypedRateLimitingInterface[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
		return lowered{pq}
	}
	return q
}

// lowered is a priority queue whose additions are at ChildPriority at the most.
type lowered struct {
	priorityqueue.PriorityQueue[reconcile.Request]
}

func (l lowered) Add(item reconcile.Request) {
	l.AddWithOpts(priorityqueue.AddOpts{}, item)
}

func (l lowered) AddAfter(item reconcile.Request, after time.Duration) {
	l.AddWithOpts(priorityqueue.AddOpts{After: after}, item)
}

func (l lowered) AddRateLimited(item reconcile.Request) {
	l.AddWithOpts(priorityqueue.AddOpts{RateLimited: true}, item)
}

func (l lowered) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	if o.Priority == nil || *o.Priority > ChildPriority {
		o.Priority = new(ChildPriority)
	}
	l.PriorityQueue.AddWithOpts(o, items...)
}
