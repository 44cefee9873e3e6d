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

// Package skeleton is the reconcile skeleton every controller shares: get (a resource that is
// gone ends the reconcile) → deletion first → finalizer → the kind's ordered phases → the status
// they observed, written once by merge patch and only when it changed. The conditions of every
// resource are recorded in the operator's metrics after its phases and forgotten once it is gone
// or being deleted. A controller plugs in only what is its own: its phases, its finalizer path,
// what it tells when its status changed. The package also holds the watch plumbing the
// controllers share: the handlers that queue the events of children and other kinds behind a
// change of the resource itself (OwnedBy, Behind) and the predicates that let through only the
// updates the operator reads (UpdateChanged, OwnedChanged).
package skeleton

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/seed1b407122/database-operator/controllers/internal/opmetrics"
	"github.com/seed1b407122/database-operator/controllers/internal/patch"
)

// Object is the pointer type of a resource whose DeepCopy keeps its type, e.g. *v1alpha1.Echo,
// and whose GetConditions returns the conditions of its status, which Reconcile records in the
// operator's metrics after the phases.
type Object[T any] interface {
	client.Object
	DeepCopy() T
	GetConditions() []metav1.Condition
}

// Kind is what a controller plugs into Reconcile for its resources of type T.
type Kind[T Object[T]] interface {
	// Phases bring the children of obj in line with its spec, in order, and set the status of
	// obj to what they observed. They return what the reconcile returns.
	Phases(ctx context.Context, obj T) (ctrl.Result, error)
	// StatusWritten tells what a status write changed: before and after are the resource around
	// it. It is called only when the status changed, so that each transition is told once.
	StatusWritten(ctx context.Context, before, after T)
}

// MetricsForgetter is a Kind with series of its own beyond the conditions, e.g. the replicas of a
// DatabaseCluster. Reconcile finds it, as Finalizing, by type assertion: a controller asserts
// each beside its Reconciler (var _ skeleton.MetricsForgetter = (*Reconciler)(nil)), so that a
// misspelt method fails to compile instead of being skipped.
type MetricsForgetter interface {
	// ForgetMetrics removes those series of a resource that is gone or being deleted.
	ForgetMetrics(namespace, name string)
}

// Finalizing is a Kind whose resources carry a finalizer, for a cleanup that garbage collection
// cannot do.
type Finalizing[T Object[T]] interface {
	Kind[T]
	// Finalizer is added before any child is written.
	Finalizer() string
	// Finalize is the finalizer path: it runs instead of the phases once the resource is being
	// deleted, and removes the finalizer when the cleanup is done.
	Finalize(ctx context.Context, obj T) (ctrl.Result, error)
}

// Reconcile runs one reconcile of the resource req names, read into obj, an empty object of the
// kind: get → (a cache that has not yet seen this operator's last write of it, as writes
// remembers it: wait for it, see ownwrites.go) → deletion (a Finalizing kind) → finalizer →
// phases → status. The status is patched only when it changed, with the resourceVersion of the
// object read (see patch.Status); the patch's error joins the phases' own. Every error it returns
// is counted in the operator's metrics by kind and reason (opmetrics.ReconcileErrors).
func Reconcile[T Object[T]](ctx context.Context, c client.Client, writes *OwnWrites, req ctrl.Request, obj T,
	k Kind[T],
) (result ctrl.Result, err error) {
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("naming the kind of %s: %w", req, err)
	}
	defer func() { opmetrics.RecordReconcileError(gvk.Kind, err) }()
	key := gvk.Kind + "/" + req.String()
	if err := c.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			forgetMetrics(gvk.Kind, req, k)
			writes.forget(key)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if writes.behind(key, obj.GetResourceVersion(), time.Now()) {
		return ctrl.Result{RequeueAfter: cacheCatchUp}, nil
	}
	if f, ok := k.(Finalizing[T]); ok {
		if !obj.GetDeletionTimestamp().IsZero() {
			forgetMetrics(gvk.Kind, req, k)
			return f.Finalize(ctx, obj)
		}
		before := obj.GetResourceVersion()
		if err := patch.AddFinalizer(ctx, c, obj, f.Finalizer()); err != nil {
			return ctrl.Result{}, err
		}
		writes.written(key, before, obj.GetResourceVersion(), time.Now())
	}
	original := obj.DeepCopy()
	result, err = k.Phases(ctx, obj)
	opmetrics.RecordConditions(gvk.Kind, obj.GetNamespace(), obj.GetName(), obj.GetConditions())
	written, patchErr := patch.Status(ctx, c, original, obj)
	if written {
		writes.written(key, original.GetResourceVersion(), obj.GetResourceVersion(), time.Now())
		k.StatusWritten(ctx, original, obj)
	}
	return result, errors.Join(err, patchErr)
}

// ReconcilerOf is the reconcile.Reconciler of k: each request runs Reconcile on a fresh copy of
// obj, an empty object of the kind, with c and writes. A Kind that needs no Reconcile method of
// its own (no test or caller of it) is completed with it.
func ReconcilerOf[T Object[T]](c client.Client, writes *OwnWrites, obj T, k Kind[T]) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
		return Reconcile(ctx, c, writes, req, obj.DeepCopy(), k)
	})
}

// forgetMetrics removes the series of the resource req names, of kind kind, that is gone or being
// deleted: its conditions, and the series of its own that k has.
func forgetMetrics(kind string, req ctrl.Request, k any) {
	opmetrics.Forget(kind, req.Namespace, req.Name)
	if more, ok := k.(MetricsForgetter); ok {
		more.ForgetMetrics(req.Namespace, req.Name)
	}
}

// TerminalIf marks err as terminal (reconcile.TerminalError) when permanent says that retrying
// cannot help until the spec changes; the kind's conditions say why.
func TerminalIf(err error, permanent func(error) bool) error {
	if err != nil && permanent(err) {
		return reconcile.TerminalError(err)
	}
	return err
}

// NewController starts the builder of the controller named name: it reconciles the resources of
// obj's kind on the events that pass predicates, at most maxConcurrent at once. The caller adds
// what the kind owns and watches, and completes it. The kind's reconcile-error series start at 0.
func NewController(mgr ctrl.Manager, name string, maxConcurrent int, obj client.Object,
	predicates ...predicate.Predicate,
) *builder.Builder {
	if gvk, err := apiutil.GVKForObject(obj, mgr.GetScheme()); err == nil {
		opmetrics.InitReconcileErrors(gvk.Kind)
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(obj, builder.WithPredicates(predicates...)).
		WithOptions(controller.Options{MaxConcurrentReconciles: maxConcurrent, RateLimiter: RetryLimiter()}).
		Named(name)
}

// Retry delays of a resource whose reconcile failed: doubled from FirstRetryDelay at each
// failure in a row, up to MaxRetryDelay.
const (
	FirstRetryDelay = 5 * time.Millisecond
	MaxRetryDelay   = 30 * time.Second
)

// RetryLimiter is the per-resource retry backoff of every controller. controller-runtime's
// default doubles up to 1,000 s: a few seconds of API-server outage, then a few seconds of
// conflicts while the watches reconnect, make ~20 failures in a row, after which a resource
// waits ~16 min for its next try unless an event it is not filtered from arrives. The fault
// tier's outage spec met exactly that; with MaxRetryDelay a failed resource is tried again within
// 30 s however many times it failed.
func RetryLimiter() workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](FirstRetryDelay, MaxRetryDelay)
}
