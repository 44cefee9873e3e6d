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

package fuzzspec

import (
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SharedAdmitter is the admission of every kind, read once per test binary.
var SharedAdmitter = sync.OnceValues(NewAdmitter)

// Admitted applies the CRD's defaults to obj, decoded from a fuzz input, and returns it; it
// skips the input when the API server would refuse it, as a builder only ever sees admitted
// specs.
func Admitted[T client.Object](t testing.TB, obj T) T {
	t.Helper()
	a, err := SharedAdmitter()
	if err != nil {
		t.Fatal(err)
	}
	refused, err := a.Admit(obj)
	if err != nil {
		t.Fatal(err)
	}
	if len(refused) > 0 {
		t.Skip(refused.ToAggregate())
	}
	return obj
}

// Pure builds from in with build, named what, and fails t unless build left in as it was and
// builds the same again: a builder is a pure function of its resource.
func Pure[In client.Object, Out any](t testing.TB, what string, in In, build func(In) Out) Out {
	t.Helper()
	before := in.DeepCopyObject()
	out := build(in)
	if !equality.Semantic.DeepEqual(before, in) {
		t.Fatalf("%s changed its input %T", what, in)
	}
	if !equality.Semantic.DeepEqual(out, build(in)) {
		t.Fatalf("%s is not deterministic", what)
	}
	return out
}

// CheckDrift checks the drift check of a child (inSync and merge, as child.Spec holds them)
// against the write path, so that the operator
// never writes in a loop: desired, stored with the API server's defaults, is in sync (no write at
// all); observed, built from another spec or changed by hand, is in sync once the write path has
// merged the owned fields into it (Merge, then the merge patch that child.Ensure sends, applied
// as the API server does): one write, then none.
func CheckDrift[T client.Object](t testing.TB, desired, observed T, inSync func(desired, observed T) bool, merge func(desired, observed T)) {
	t.Helper()
	stored, err := Stored(desired)
	if err != nil {
		t.Fatal(err)
	}
	if !inSync(desired, stored) {
		t.Fatalf("%T %s as built and stored is not in sync: the operator would patch it at every reconcile", desired, desired.GetName())
	}
	before, err := Stored(observed)
	if err != nil {
		t.Fatal(err)
	}
	patched := before.DeepCopyObject().(T)
	merge(desired, patched)
	after, err := Patched(before, patched)
	if err != nil {
		t.Fatal(err)
	}
	if !inSync(desired, after) {
		t.Fatalf("%T %s is not in sync after the write path patched it: the operator would patch it again at every reconcile\nafter: %+v",
			desired, desired.GetName(), after)
	}
}

// CheckBuilder skips in unless the API server admits it (Admitted), builds from it with build
// and the operator's setting arg (e.g. the image it runs), checked as Pure does, and fails t with
// what check finds wrong in what it built.
func CheckBuilder[In client.Object, Arg, Out any](t testing.TB, what string, in In, build func(In, Arg) Out, arg Arg,
	check func(In, Out) error,
) {
	t.Helper()
	in = Admitted(t, in)
	if err := check(in, Pure(t, what, in, func(in In) Out { return build(in, arg) })); err != nil {
		t.Fatal(err)
	}
}
