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
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ChildPriority is the work queue priority of a reconcile asked for by a change of a child (a
// StatefulSet's counts, a pod's readiness, a claim's size): below the resource's own changes (0:
// a new resource's first pass, a spec edit) and above the initial list and resyncs
// (handler.LowPriority). With a thousand resources being created at once, every new one gets its
// children before the status of the others is brought up to date; several child changes of one
// resource that wait meanwhile are reconciled once.
const ChildPriority = -1

// ChildEvents is h with the reconciles it asks for queued at ChildPriority at most (controller-
// runtime's priority queue, the default; a plain queue is used as it is).
func ChildEvents(h handler.EventHandler) handler.EventHandler {
	return childEvents{h}
}

type childEvents struct{ handler.EventHandler }

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

func (h childEvents) Create(ctx context.Context, e event.CreateEvent, q queue) {
	h.EventHandler.Create(ctx, e, capped(q))
}

func (h childEvents) Update(ctx context.Context, e event.UpdateEvent, q queue) {
	h.EventHandler.Update(ctx, e, capped(q))
}

func (h childEvents) Delete(ctx context.Context, e event.DeleteEvent, q queue) {
	h.EventHandler.Delete(ctx, e, capped(q))
}

func (h childEvents) Generic(ctx context.Context, e event.GenericEvent, q queue) {
	h.EventHandler.Generic(ctx, e, capped(q))
}

// capped returns q adding at ChildPriority at most, when q is a priority queue.
func capped(q queue) queue {
	pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request])
	if !ok {
		return q
	}
	return cappedQueue{pq}
}

// cappedQueue adds every item at ChildPriority, or lower when asked (the initial list).
type cappedQueue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
}

func (q cappedQueue) Add(item reconcile.Request) {
	q.AddWithOpts(priorityqueue.AddOpts{}, item)
}

func (q cappedQueue) AddAfter(item reconcile.Request, after time.Duration) {
	q.AddWithOpts(priorityqueue.AddOpts{After: after}, item)
}

func (q cappedQueue) AddRateLimited(item reconcile.Request) {
	q.AddWithOpts(priorityqueue.AddOpts{RateLimited: true}, item)
}

func (q cappedQueue) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	priority := ChildPriority
	if o.Priority != nil && *o.Priority < priority {
		priority = *o.Priority
	}
	o.Priority = &priority
	q.PriorityQueue.AddWithOpts(o, items...)
}
