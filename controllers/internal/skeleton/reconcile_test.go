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
	"errors"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	"github.com/seed1b407122/database-operator/api/scheme"
	"github.com/seed1b407122/database-operator/controllers/internal/patch"
)

const testFinalizer = "echo.example/cleanup"

var echoKey = client.ObjectKey{Namespace: "ns", Name: "hello"}

// plainKind is a Kind without a finalizer: its phases set the status to phase (and fail with
// err), and it records what the skeleton called.
type plainKind struct {
	phase   echov1alpha1.EchoPhase
	err     error
	calls   []string
	written []echov1alpha1.EchoPhase // the status after each StatusWritten
}

func (k *plainKind) Phases(_ context.Context, e *echov1alpha1.Echo) (ctrl.Result, error) {
	k.calls = append(k.calls, "Phases")
	e.Status.Phase = k.phase
	return ctrl.Result{}, k.err
}

func (k *plainKind) StatusWritten(_ context.Context, before, after *echov1alpha1.Echo) {
	k.calls = append(k.calls, "StatusWritten")
	if before.Status.Phase == after.Status.Phase {
		panic("StatusWritten called without a status change")
	}
	k.written = append(k.written, after.Status.Phase)
}

// finalizingKind adds a finalizer path and series of its own to plainKind; Finalize removes the
// finalizer.
type finalizingKind struct {
	plainKind
	c client.Client
}

var (
	_ Kind[*echov1alpha1.Echo]       = (*plainKind)(nil)
	_ Finalizing[*echov1alpha1.Echo] = (*finalizingKind)(nil)
	_ MetricsForgetter               = (*finalizingKind)(nil)
)

func (k *finalizingKind) Finalizer() string { return testFinalizer }

func (k *finalizingKind) Finalize(ctx context.Context, e *echov1alpha1.Echo) (ctrl.Result, error) {
	k.calls = append(k.calls, "Finalize")
	return ctrl.Result{}, patch.RemoveFinalizer(ctx, k.c, e, testFinalizer)
}

func (k *finalizingKind) ForgetMetrics(namespace, name string) {
	k.calls = append(k.calls, "ForgetMetrics "+namespace+"/"+name)
}

// fakeCluster is a fake API server whose reads go through a cache that can be held at an older
// copy of the Echo; it counts the writes by kind.
type fakeCluster struct {
	client.Client
	stale  *echov1alpha1.Echo // what the lagging cache shows; nil: the stored object
	writes []string
}

func newFakeCluster(t *testing.T, objs ...client.Object) *fakeCluster {
	t.Helper()
	f := &fakeCluster{}
	f.Client = fake.NewClientBuilder().WithScheme(scheme.Must()).WithObjects(objs...).
		WithStatusSubresource(&echov1alpha1.Echo{}).
		WithInterceptorFuncs(interceptor.Funcs{
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if e, ok := obj.(*echov1alpha1.Echo); ok && f.stale != nil {
					f.stale.DeepCopyInto(e)
					return nil
				}
				return c.Get(ctx, key, obj, opts...)
			},
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
				f.writes = append(f.writes, "patch")
				return c.Patch(ctx, obj, p, opts...)
			},
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch,
				opts ...client.SubResourcePatchOption,
			) error {
				f.writes = append(f.writes, sub+" patch")
				return c.SubResource(sub).Patch(ctx, obj, p, opts...)
			},
		}).Build()
	return f
}

func (f *fakeCluster) stored(t *testing.T) *echov1alpha1.Echo {
	t.Helper()
	e := &echov1alpha1.Echo{}
	held := f.stale
	f.stale = nil
	defer func() { f.stale = held }()
	if err := f.Get(context.Background(), echoKey, e); err != nil {
		t.Fatalf("reading the Echo: %v", err)
	}
	return e
}

func newEcho(finalizers ...string) *echov1alpha1.Echo {
	return &echov1alpha1.Echo{
		ObjectMeta: metav1.ObjectMeta{Name: echoKey.Name, Namespace: echoKey.Namespace, Finalizers: finalizers},
		Spec:       echov1alpha1.EchoSpec{Message: "hello"},
	}
}

func reconcileEcho(t *testing.T, f *fakeCluster, writes *OwnWrites, k Kind[*echov1alpha1.Echo]) (ctrl.Result, error) {
	t.Helper()
	return Reconcile(context.Background(), f, writes, ctrl.Request{NamespacedName: echoKey}, &echov1alpha1.Echo{}, k)
}

// TestReconcileAddsTheFinalizerThenWritesTheStatusOnce: the first reconcile of a Finalizing kind
// adds the finalizer before the phases, then writes the status once and tells it; a reconcile
// that changes nothing writes nothing and tells nothing.
func TestReconcileAddsTheFinalizerThenWritesTheStatusOnce(t *testing.T) {
	f := newFakeCluster(t, newEcho())
	k := &finalizingKind{plainKind: plainKind{phase: echov1alpha1.EchoPending}, c: f}
	var writes OwnWrites
	if res, err := reconcileEcho(t, f, &writes, k); err != nil || res != (ctrl.Result{}) {
		t.Fatalf("first reconcile = %+v, %v; want an empty result", res, err)
	}
	if want := []string{"patch", "status patch"}; !slices.Equal(f.writes, want) {
		t.Fatalf("writes = %q, want the finalizer then the status: %q", f.writes, want)
	}
	got := f.stored(t)
	if !slices.Contains(got.Finalizers, testFinalizer) || got.Status.Phase != echov1alpha1.EchoPending {
		t.Fatalf("stored Echo: finalizers %q, phase %q; want the finalizer and Pending", got.Finalizers, got.Status.Phase)
	}
	if want := []string{"Phases", "StatusWritten"}; !slices.Equal(k.calls, want) {
		t.Fatalf("calls = %q, want %q", k.calls, want)
	}

	f.writes, k.calls = nil, nil
	if _, err := reconcileEcho(t, f, &writes, k); err != nil {
		t.Fatal(err)
	}
	if len(f.writes) != 0 || !slices.Equal(k.calls, []string{"Phases"}) {
		t.Fatalf("a reconcile that changes nothing: writes %q, calls %q; want none and the phases only", f.writes, k.calls)
	}
}

// TestReconcileWithoutFinalizer: a kind that is not Finalizing gets no finalizer; the phases'
// error is returned and the status they set is still written.
func TestReconcileWithoutFinalizer(t *testing.T) {
	f := newFakeCluster(t, newEcho())
	failed := errors.New("the Job cannot be created")
	k := &plainKind{phase: echov1alpha1.EchoFailed, err: failed}
	if _, err := reconcileEcho(t, f, &OwnWrites{}, k); !errors.Is(err, failed) {
		t.Fatalf("reconcile = %v, want the phases' error", err)
	}
	if !slices.Equal(f.writes, []string{"status patch"}) {
		t.Fatalf("writes = %q, want the status only", f.writes)
	}
	if got := f.stored(t); len(got.Finalizers) != 0 || got.Status.Phase != echov1alpha1.EchoFailed {
		t.Fatalf("stored Echo: finalizers %q, phase %q; want none and Failed", got.Finalizers, got.Status.Phase)
	}
}

// TestReconcilerOf: the reconcile.Reconciler of a Kind reads each request into a fresh copy of
// its empty object, so that nothing of one resource is carried into the next: two Echos, each
// with the status its own phases set, and the object it was given is still empty.
func TestReconcilerOf(t *testing.T) {
	other := newEcho()
	other.Name = "other"
	f := newFakeCluster(t, newEcho(), other)
	k := &plainKind{phase: echov1alpha1.EchoRunning}
	empty := &echov1alpha1.Echo{}
	r := ReconcilerOf(f, &OwnWrites{}, empty, k)
	for _, name := range []string{echoKey.Name, other.Name} {
		req := ctrl.Request{NamespacedName: client.ObjectKey{Namespace: echoKey.Namespace, Name: name}}
		if _, err := r.Reconcile(context.Background(), req); err != nil {
			t.Fatalf("reconcile of %s: %v", name, err)
		}
	}
	if !slices.Equal(f.writes, []string{"status patch", "status patch"}) {
		t.Fatalf("writes = %q, want one status patch per Echo", f.writes)
	}
	got := &echov1alpha1.Echo{}
	if err := f.Get(context.Background(), client.ObjectKeyFromObject(other), got); err != nil || got.Status.Phase != echov1alpha1.EchoRunning {
		t.Fatalf("the second Echo: phase %q, %v; want Running", got.Status.Phase, err)
	}
	if empty.Name != "" || empty.ResourceVersion != "" || empty.Status.Phase != "" {
		t.Fatalf("the given object was changed: %+v", empty)
	}
}

// TestReconcileDeletion: a resource being deleted takes the finalizer path instead of the phases,
// and its series are forgotten; once it is gone, a reconcile writes nothing and forgets again.
func TestReconcileDeletion(t *testing.T) {
	deleting := newEcho(testFinalizer)
	deleting.DeletionTimestamp = &metav1.Time{Time: metav1.Now().Time}
	f := newFakeCluster(t, deleting)
	k := &finalizingKind{plainKind: plainKind{phase: echov1alpha1.EchoRunning}, c: f}
	if _, err := reconcileEcho(t, f, &OwnWrites{}, k); err != nil {
		t.Fatal(err)
	}
	if want := []string{"ForgetMetrics ns/hello", "Finalize"}; !slices.Equal(k.calls, want) {
		t.Fatalf("calls = %q, want %q (no phases)", k.calls, want)
	}
	if err := f.Get(context.Background(), echoKey, &echov1alpha1.Echo{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the Echo after its finalizer was removed: %v, want NotFound", err)
	}
	f.writes, k.calls = nil, nil
	if res, err := reconcileEcho(t, f, &OwnWrites{}, k); err != nil || res != (ctrl.Result{}) {
		t.Fatalf("reconcile of a gone Echo = %+v, %v; want an empty result", res, err)
	}
	if len(f.writes) != 0 || !slices.Equal(k.calls, []string{"ForgetMetrics ns/hello"}) {
		t.Fatalf("a gone Echo: writes %q, calls %q; want none and its series forgotten", f.writes, k.calls)
	}
}

// TestReconcileWaitsForALaggingCache: a reconcile that reads from the cache a version of the
// resource that this manager's own writes replaced waits (cacheCatchUp) without running the
// phases or writing; once the cache shows the last write it reconciles.
func TestReconcileWaitsForALaggingCache(t *testing.T) {
	f := newFakeCluster(t, newEcho())
	k := &finalizingKind{plainKind: plainKind{phase: echov1alpha1.EchoPending}, c: f}
	var writes OwnWrites
	before := f.stored(t)
	if _, err := reconcileEcho(t, f, &writes, k); err != nil {
		t.Fatal(err)
	}

	f.stale, f.writes, k.calls = before, nil, nil // the cache still shows the Echo as it was
	res, err := reconcileEcho(t, f, &writes, k)
	if err != nil || res.RequeueAfter != cacheCatchUp {
		t.Fatalf("reconcile over a lagging cache = %+v, %v; want RequeueAfter %s", res, err, cacheCatchUp)
	}
	if len(f.writes) != 0 || len(k.calls) != 0 {
		t.Fatalf("reconcile over a lagging cache: writes %q, calls %q; want none", f.writes, k.calls)
	}

	// Without the memory the stale read is acted on: the finalizer patch, sent with the stale
	// resourceVersion, fails with a Conflict (a wasted write and a retry).
	var another OwnWrites
	if _, err := reconcileEcho(t, f, &another, k); !apierrors.IsConflict(err) || !slices.Equal(f.writes, []string{"patch"}) {
		t.Fatalf("reconcile over a lagging cache without the memory = %v, writes %q; want a Conflict of the finalizer patch", err, f.writes)
	}

	f.stale, f.writes, k.calls = nil, nil, nil // the cache caught up
	if res, err := reconcileEcho(t, f, &writes, k); err != nil || res.RequeueAfter != 0 {
		t.Fatalf("reconcile once the cache caught up = %+v, %v; want no wait", res, err)
	}
	if !slices.Equal(k.calls, []string{"Phases"}) {
		t.Fatalf("calls = %q, want the phases", k.calls)
	}
}
