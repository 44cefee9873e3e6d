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

package child

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// laggingCache is a client whose reads never see anything (a cache that has not caught up) and
// whose writes go to server; it counts the creates.
func laggingCache(server client.WithWatch, creates *int) client.Client {
	return interceptor.NewClient(server, interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "")
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			*creates++
			return c.Create(ctx, obj, opts...)
		},
	})
}

func ownedConfigMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: "ns",
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "Owner", Name: "o", UID: "uid-1", Controller: ptr.To(true),
		}},
	}}
}

var configMapSpec = Spec[*corev1.ConfigMap]{
	InSync: func(_, _ *corev1.ConfigMap) bool { return true },
	Merge:  func(_, _ *corev1.ConfigMap) {},
}

// TestEnsureDoesNotCreateWhatItJustCreated: the reconcile right after a create, whose cache does
// not show the child yet, reads it from the API server instead of creating it again; a child
// that is gone from the server too is created again.
func TestEnsureDoesNotCreateWhatItJustCreated(t *testing.T) {
	ctx := context.Background()
	server := fake.NewClientBuilder().WithScheme(runtime.NewScheme()).Build()
	if err := corev1.AddToScheme(server.Scheme()); err != nil {
		t.Fatal(err)
	}
	created := 0
	c := ReadsOwnCreates(laggingCache(server, &created), server)
	name := "ensure-recent-" + time.Now().Format("150405.000000000")

	if _, res, err := Ensure(ctx, c, server, ownedConfigMap(name), &corev1.ConfigMap{}, configMapSpec); err != nil || res != Created {
		t.Fatalf("first Ensure = %q, %v; want Created", res, err)
	}
	got, res, err := Ensure(ctx, c, server, ownedConfigMap(name), &corev1.ConfigMap{}, configMapSpec)
	if err != nil || res != Unchanged || created != 1 || got.GetResourceVersion() == "" {
		t.Fatalf("second Ensure = %q, %v after %d creates; want Unchanged, the server's object, 1 create", res, err, created)
	}
	if err := server.Delete(ctx, ownedConfigMap(name)); err != nil {
		t.Fatal(err)
	}
	if _, res, err := Ensure(ctx, c, server, ownedConfigMap(name), &corev1.ConfigMap{}, configMapSpec); err != nil || res != Created || created != 2 {
		t.Fatalf("Ensure after a delete = %q, %v after %d creates; want Created again, 2 creates", res, err, created)
	}
}

// TestReadsOwnCreates: only a Get of what the client itself created (not a dry run) reads
// through a cache that does not show it; anything else answers as the cache does.
func TestReadsOwnCreates(t *testing.T) {
	ctx := context.Background()
	server := fake.NewClientBuilder().WithScheme(runtime.NewScheme()).Build()
	if err := corev1.AddToScheme(server.Scheme()); err != nil {
		t.Fatal(err)
	}
	created := 0
	c := ReadsOwnCreates(laggingCache(server, &created), server)
	if err := c.Create(ctx, ownedConfigMap("dry"), client.DryRunAll); err != nil {
		t.Fatal(err)
	}
	if err := server.Create(ctx, ownedConfigMap("theirs")); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, ownedConfigMap("ours")); err != nil {
		t.Fatal(err)
	}
	for name, wantFound := range map[string]bool{"ours": true, "theirs": false, "dry": false} {
		err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: name}, &corev1.ConfigMap{})
		if found := err == nil; found != wantFound || (err != nil && !apierrors.IsNotFound(err)) {
			t.Errorf("Get %s: %v; want found %v, else NotFound", name, err, wantFound)
		}
	}
	// Another type under the same key is another object.
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "ours"}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("Get of a Secret named as the ConfigMap created: %v, want NotFound", err)
	}
}

func TestRecentCreates(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	var r recentCreates
	r.add("a", t0)
	if !r.recent("a", t0.Add(createWindow)) || r.recent("a", t0.Add(createWindow+time.Millisecond)) || r.recent("b", t0) {
		t.Fatal("a create is not remembered for exactly createWindow")
	}
	r.add("b", t0.Add(2*createWindow)) // sweeps a
	if _, ok := r.m["a"]; ok || len(r.m) != 1 {
		t.Fatalf("entries after a sweep: %v; want only b", r.m)
	}
}
