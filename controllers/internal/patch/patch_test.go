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

package patch

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	"github.com/seed1b407122/database-operator/api/scheme"
)

const finalizer = "echo.example/finalizer"

// newEcho returns an Echo as the fake API server stores it, with the given finalizers.
func newEcho(finalizers ...string) *echov1alpha1.Echo {
	return &echov1alpha1.Echo{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "ns", Finalizers: finalizers},
		Spec:       echov1alpha1.EchoSpec{Message: "hello"},
		Status:     echov1alpha1.EchoStatus{Phase: echov1alpha1.EchoPending},
	}
}

// newClient returns a fake client holding objs, and the patches it is sent, each as
// "<subresource> <body>" (the subresource is empty for the object itself).
func newClient(t *testing.T, objs ...client.Object) (client.Client, *[]string) {
	t.Helper()
	sent := &[]string{}
	record := func(subresource string, obj client.Object, p client.Patch) {
		data, err := p.Data(obj)
		if err != nil {
			t.Fatalf("computing the patch: %v", err)
		}
		*sent = append(*sent, subresource+" "+string(data))
	}
	c := fake.NewClientBuilder().WithScheme(scheme.Must()).WithObjects(objs...).WithStatusSubresource(objs...).
		WithInterceptorFuncs(interceptor.Funcs{
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
				record("", obj, p)
				return c.Patch(ctx, obj, p, opts...)
			},
			SubResourcePatch: func(ctx context.Context, c client.Client, subresource string, obj client.Object, p client.Patch,
				opts ...client.SubResourcePatchOption,
			) error {
				record(subresource, obj, p)
				return c.SubResource(subresource).Patch(ctx, obj, p, opts...)
			},
		}).Build()
	return c, sent
}

// stored reads the Echo back from the fake API server.
func stored(t *testing.T, c client.Client) *echov1alpha1.Echo {
	t.Helper()
	e := &echov1alpha1.Echo{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "hello"}, e); err != nil {
		t.Fatalf("reading the Echo: %v", err)
	}
	return e
}

// withStatus returns a copy of e whose status has the given phase and Job name.
func withStatus(e *echov1alpha1.Echo, phase echov1alpha1.EchoPhase, jobName string) *echov1alpha1.Echo {
	updated := e.DeepCopy()
	updated.Status.Phase, updated.Status.JobName = phase, jobName
	return updated
}

func expectSent(t *testing.T, sent *[]string, want ...string) {
	t.Helper()
	if len(*sent) != len(want) {
		t.Fatalf("sent %q, want %q", *sent, want)
	}
	for i := range want {
		if (*sent)[i] != want[i] {
			t.Fatalf("sent %q, want %q", *sent, want)
		}
	}
}

func TestStatusSendsOnlyTheChangedStatusOnce(t *testing.T) {
	ctx := context.Background()
	c, sent := newClient(t, newEcho())
	original := stored(t, c)
	updated := withStatus(original, echov1alpha1.EchoRunning, "hello-echo")

	written, err := Status(ctx, c, original, updated)
	if err != nil || !written {
		t.Fatalf("Status() = %t, %v; want true, nil", written, err)
	}
	expectSent(t, sent, `status {"metadata":{"resourceVersion":"`+original.ResourceVersion+`"},"status":{"jobName":"hello-echo","phase":"Running"}}`)
	if got := stored(t, c).Status.Phase; got != echov1alpha1.EchoRunning {
		t.Fatalf("stored phase %q, want Running", got)
	}
	if updated.ResourceVersion == original.ResourceVersion {
		t.Fatal("updated does not hold the object the server returned")
	}
}

// A status computed from a stale read must not be merged into a newer one: the merge patch
// would leave out the fields whose new value equals the stale one and keep the newer values
// (readyReplicas 0 under "Available: 3/3" in test/faults). The API server refuses it.
func TestStatusFromAStaleReadIsRefused(t *testing.T) {
	ctx := context.Background()
	c, _ := newClient(t, newEcho())
	stale := stored(t, c)

	// A status write the reader has not seen yet (e.g. its cache lags behind).
	newer := withStatus(stale, echov1alpha1.EchoFailed, "hello-echo")
	if written, err := Status(ctx, c, stale.DeepCopy(), newer); err != nil || !written {
		t.Fatalf("first write: %t, %v", written, err)
	}

	// Computed from the stale read: phase Pending equals the stale value, so a plain merge
	// patch would send only jobName and leave phase Failed on the server.
	updated := withStatus(stale, echov1alpha1.EchoPending, "hello-echo-2")
	written, err := Status(ctx, c, stale, updated)
	if !apierrors.IsConflict(err) || written {
		t.Fatalf("Status() from a stale read = %t, %v; want false and a Conflict", written, err)
	}
	if got := stored(t, c).Status; got.Phase != echov1alpha1.EchoFailed || got.JobName != "hello-echo" {
		t.Fatalf("stored status %+v, want the newer write untouched", got)
	}
}

func TestStatusSendsNothingWhenTheStatusIsUnchanged(t *testing.T) {
	c, sent := newClient(t, newEcho())
	original := stored(t, c)
	written, err := Status(context.Background(), c, original, original.DeepCopy())
	if err != nil || written {
		t.Fatalf("Status() = %t, %v; want false, nil", written, err)
	}
	expectSent(t, sent)
}

func TestStatusOfAGoneResourceIsNotAnError(t *testing.T) {
	c, _ := newClient(t)
	original := newEcho()
	original.ResourceVersion = "7" // as read before it was deleted
	written, err := Status(context.Background(), c, original, withStatus(original, echov1alpha1.EchoRunning, ""))
	if err != nil || written {
		t.Fatalf("Status() = %t, %v; want false, nil", written, err)
	}
}

func TestAddFinalizerPatchesWithTheResourceVersionOnce(t *testing.T) {
	ctx := context.Background()
	c, sent := newClient(t, newEcho("other.example/keep"))
	e := stored(t, c)
	for range 2 {
		if err := AddFinalizer(ctx, c, e, finalizer); err != nil {
			t.Fatal(err)
		}
	}
	expectSent(t, sent, ` {"metadata":{"finalizers":["other.example/keep","echo.example/finalizer"],"resourceVersion":"999"}}`)
	if got := stored(t, c).Finalizers; len(got) != 2 || got[1] != finalizer {
		t.Fatalf("stored finalizers %q", got)
	}
}

func TestAddFinalizerFailsOnAStaleObject(t *testing.T) {
	c, _ := newClient(t, newEcho())
	e := stored(t, c)
	e.ResourceVersion = "1"
	if err := AddFinalizer(context.Background(), c, e, finalizer); !apierrors.IsConflict(err) {
		t.Fatalf("AddFinalizer() = %v, want a Conflict", err)
	}
}

func TestRemoveFinalizerPatchesWithTheResourceVersionOnce(t *testing.T) {
	ctx := context.Background()
	c, sent := newClient(t, newEcho(finalizer, "other.example/keep"))
	e := stored(t, c)
	for range 2 {
		if err := RemoveFinalizer(ctx, c, e, finalizer); err != nil {
			t.Fatal(err)
		}
	}
	expectSent(t, sent, ` {"metadata":{"finalizers":["other.example/keep"],"resourceVersion":"999"}}`)
	if got := stored(t, c).Finalizers; len(got) != 1 || got[0] != "other.example/keep" {
		t.Fatalf("stored finalizers %q", got)
	}
}

func TestRemoveFinalizerOfAGoneResourceIsNotFound(t *testing.T) {
	c, _ := newClient(t)
	e := newEcho(finalizer)
	e.ResourceVersion = "999" // as read before someone else deleted it
	if err := RemoveFinalizer(context.Background(), c, e, finalizer); !apierrors.IsNotFound(err) {
		t.Fatalf("RemoveFinalizer() = %v, want NotFound", err)
	}
}

// LockedMergeFrom, as the callers outside the package use it (a label): the patch carries the
// resourceVersion read, and a write decided from a stale read is refused.
func TestLockedMergeFromCarriesTheResourceVersion(t *testing.T) {
	ctx := context.Background()
	c, sent := newClient(t, newEcho())
	read := stored(t, c)
	labelled := read.DeepCopy()
	labelled.SetLabels(map[string]string{"role": "primary"})
	if err := c.Patch(ctx, labelled, LockedMergeFrom(read)); err != nil {
		t.Fatal(err)
	}
	expectSent(t, sent, ` {"metadata":{"labels":{"role":"primary"},"resourceVersion":"`+read.ResourceVersion+`"}}`)

	// read is stale now: the same kind of write from it is refused, the label kept.
	relabelled := read.DeepCopy()
	relabelled.SetLabels(map[string]string{"role": "replica"})
	if err := c.Patch(ctx, relabelled, LockedMergeFrom(read)); !apierrors.IsConflict(err) {
		t.Fatalf("a patch from a stale read = %v, want a Conflict", err)
	}
	if got := stored(t, c).GetLabels()["role"]; got != "primary" {
		t.Fatalf("stored role label %q, want primary", got)
	}
}
