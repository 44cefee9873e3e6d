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

package testenv

import (
	"context"
	"encoding/json"
	"reflect"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed1b407122/database-operator/test/harness/fuzzspec"
)

// What the envtest specs of every controller read and write the same way: their own namespace,
// a resource as it is now, its conditions and events, a spec change by merge patch.

// Namespace creates a namespace of its own for one spec, named prefix and a random suffix, so
// that names never collide.
func (e *Env) Namespace(ctx context.Context, prefix string) string {
	ginkgo.GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}}
	gomega.Expect(e.Create(ctx, ns)).To(gomega.Succeed())
	return ns.Name
}

// Kind is what the specs of one controller read and write the same way as every other's: its
// resources R, each with one main child C named by ChildName, in the environment's API server.
type Kind[R, C client.Object] struct {
	*Env
	// Name is the kind as events and metrics name it, e.g. "Echo".
	Name string
	// ChildName names the main child of a resource, in the resource's namespace.
	ChildName func(R) string
}

// ChildKey is the key of the main child of r.
func (k Kind[R, C]) ChildKey(r R) client.ObjectKey {
	return client.ObjectKey{Namespace: r.GetNamespace(), Name: k.ChildName(r)}
}

// Create stores r and waits until the operator created its main child, which it returns.
func (k Kind[R, C]) Create(ctx context.Context, r R) C {
	ginkgo.GinkgoHelper()
	gomega.Expect(k.Env.Create(ctx, r)).To(gomega.Succeed())
	var child C
	gomega.Eventually(func(g gomega.Gomega) { child = k.Child(ctx, r)(g) }).Should(gomega.Succeed())
	return child
}

// Child returns a function for Eventually that reads the main child of r afresh each time.
func (k Kind[R, C]) Child(ctx context.Context, r R) func(gomega.Gomega) C {
	return Read[C](ctx, k.Env, k.ChildKey(r))
}

// Current returns a function for Eventually that reads r afresh each time.
func (k Kind[R, C]) Current(ctx context.Context, r R) func(gomega.Gomega) R {
	return Current(ctx, k.Env, r)
}

// Update reads r again, lets change edit it and sends the edit as a merge patch (see Update).
func (k Kind[R, C]) Update(ctx context.Context, r R, change func(R)) {
	Update(ctx, k.Env, r, change)
}

// Events returns a function for Eventually that lists the events about r as "Type Reason: note".
func (k Kind[R, C]) Events(ctx context.Context, r R) func(gomega.Gomega) []string {
	return k.EventsAbout(ctx, k.Name, r, TypeReasonNote)
}

// Series returns a function for Eventually that reads the condition series of r from the
// manager's metrics registry.
func (k Kind[R, C]) Series(r R) func(gomega.Gomega) map[string]float64 {
	return Series(k.Name, r)
}

// Read returns a function for Eventually that reads the object key, of type T (a pointer to a
// struct), afresh each time.
func Read[T client.Object](ctx context.Context, c client.Reader, key client.ObjectKey) func(gomega.Gomega) T {
	var zero T
	return read[T](ctx, c, key, reflect.TypeOf(zero))
}

// Current returns a function for Eventually that reads obj afresh each time.
func Current[T client.Object](ctx context.Context, c client.Reader, obj T) func(gomega.Gomega) T {
	return read[T](ctx, c, client.ObjectKeyFromObject(obj), reflect.TypeOf(obj))
}

// read reads key into a new object of type pointer each time, so that nothing of an earlier
// read stays in what it returns.
func read[T client.Object](ctx context.Context, c client.Reader, key client.ObjectKey, pointer reflect.Type) func(gomega.Gomega) T {
	return func(g gomega.Gomega) T {
		got := reflect.New(pointer.Elem()).Interface().(T)
		g.Expect(c.Get(ctx, key, got)).To(gomega.Succeed())
		return got
	}
}

// Update reads obj again, lets change edit it and sends the edit as a merge patch, as a user's
// kubectl edit would.
func Update[T client.Object](ctx context.Context, c client.Client, obj T, change func(T)) {
	ginkgo.GinkgoHelper()
	gomega.Expect(c.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(gomega.Succeed())
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	change(obj)
	gomega.Expect(c.Patch(ctx, obj, patch)).To(gomega.Succeed())
}

// Condition returns a function for Eventually that reads obj afresh and returns its condition
// conditionType as status, reason and message. The condition must exist and have observed the
// current generation. Every kind of the operator keeps its conditions in status.conditions.
func (e *Env) Condition(ctx context.Context, obj client.Object, conditionType string) func(gomega.Gomega) []string {
	return func(g gomega.Gomega) []string {
		got := Current(ctx, e, obj)(g)
		var fields struct {
			Status struct {
				Conditions []metav1.Condition `json:"conditions"`
			} `json:"status"`
		}
		data, err := json.Marshal(got)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		g.Expect(json.Unmarshal(data, &fields)).To(gomega.Succeed())
		c := meta.FindStatusCondition(fields.Status.Conditions, conditionType)
		g.Expect(c).NotTo(gomega.BeNil(), "condition %s", conditionType)
		g.Expect(c.ObservedGeneration).To(gomega.Equal(got.GetGeneration()))
		return []string{string(c.Status), c.Reason, c.Message}
	}
}

// EventsAbout returns a function for Eventually that lists the events regarding obj, of kind,
// each as line formats it.
func (e *Env) EventsAbout(ctx context.Context, kind string, obj client.Object, line func(eventsv1.Event) string) func(gomega.Gomega) []string {
	return func(g gomega.Gomega) []string {
		var list eventsv1.EventList
		g.Expect(e.List(ctx, &list, client.InNamespace(obj.GetNamespace()))).To(gomega.Succeed())
		var out []string
		for _, ev := range list.Items {
			if ev.Regarding.Name == obj.GetName() && ev.Regarding.Kind == kind {
				out = append(out, line(ev))
			}
		}
		return out
	}
}

// TypeReasonNote formats an event as "Type Reason: note".
func TypeReasonNote(ev eventsv1.Event) string {
	return ev.Type + " " + ev.Reason + ": " + ev.Note
}

// Series returns a function for Eventually that reads the condition series of obj, of kind, from
// the manager's metrics registry (see ConditionSeries).
func Series(kind string, obj client.Object) func(gomega.Gomega) map[string]float64 {
	return func(g gomega.Gomega) map[string]float64 {
		series, err := ConditionSeries(kind, obj.GetNamespace(), obj.GetName())
		g.Expect(err).NotTo(gomega.HaveOccurred())
		return series
	}
}

// quietPeriod is how long ExpectQuiet watches for writes.
const quietPeriod = 2 * time.Second

// ExpectQuiet checks that nothing writes obj for a while (its resourceVersion stays): the
// controller is not in a retry or write loop.
func (e *Env) ExpectQuiet(ctx context.Context, obj client.Object) {
	ginkgo.GinkgoHelper()
	version := Current(ctx, e, obj)(gomega.Default).GetResourceVersion()
	gomega.Consistently(func(g gomega.Gomega) string { return Current(ctx, e, obj)(g).GetResourceVersion() }, quietPeriod).
		Should(gomega.Equal(version))
}

// DeleteAndWait deletes obj and waits until the API server no longer has it (its finalizers,
// if any, removed).
func (e *Env) DeleteAndWait(ctx context.Context, obj client.Object) {
	ginkgo.GinkgoHelper()
	gomega.Expect(e.Delete(ctx, obj)).To(gomega.Succeed())
	gomega.Eventually(func() bool {
		return apierrors.IsNotFound(e.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object)))
	}).Should(gomega.BeTrue())
}

// ExpectInvalid checks that the API server refused a request as Invalid, with message in what
// it said.
func ExpectInvalid(err error, message string) {
	ginkgo.GinkgoHelper()
	gomega.Expect(apierrors.IsInvalid(err)).To(gomega.BeTrue(), "expected Invalid, got %v", err)
	gomega.Expect(err.Error()).To(gomega.ContainSubstring(message))
}

// ExpectStoredInSync dry-run creates desired (a child built from the fuzz seed file) and expects
// what the API server would store, with every default, to be in sync with it by inSync: the
// operator never patches a child it has just created.
func ExpectStoredInSync[T client.Object](ctx context.Context, c client.Client, seed string, desired T, inSync func(desired, observed T) bool) {
	ginkgo.GinkgoHelper()
	stored := desired.DeepCopyObject().(T)
	gomega.Expect(c.Create(ctx, stored, client.DryRunAll)).To(gomega.Succeed(), "%s: %T %s", seed, desired, desired.GetName())
	gomega.Expect(inSync(desired, stored)).To(gomega.BeTrue(),
		"%s: the %T %s as the API server stores it is not in sync with the one built: the operator would patch it at every reconcile",
		seed, desired, desired.GetName())
}

// ExpectCreateRefused checks that the API server refuses to create obj as Invalid, with message
// in what it said.
func (e *Env) ExpectCreateRefused(ctx context.Context, obj client.Object, message string) {
	ginkgo.GinkgoHelper()
	ExpectInvalid(e.Create(ctx, obj), message)
}

// CreateRefused is the body of a table of new resources the API server refuses: each entry's
// resource is created in namespace *ns (made by the table's container before its specs run) and
// must be refused as Invalid, with the entry's message in what the API server said.
func (e *Env) CreateRefused(ns *string) func(ctx ginkgo.SpecContext, obj client.Object, message string) {
	return func(ctx ginkgo.SpecContext, obj client.Object, message string) {
		obj.SetNamespace(*ns)
		e.ExpectCreateRefused(ctx, obj, message)
	}
}

// ExpectConditionSeries follows the condition series of r, created, through its life: first as
// the controller reports them, then once change has moved a condition, and none once r is
// deleted. Each map holds the status of every condition type ("true", "false", "unknown").
func (k Kind[R, C]) ExpectConditionSeries(ctx context.Context, r R, first map[string]string, change func(), then map[string]string) {
	ginkgo.GinkgoHelper()
	gomega.Eventually(k.Series(r)).Should(gomega.Equal(WantConditionSeries(first)))
	ginkgo.By("the 1 moves to the new status of a condition")
	change()
	gomega.Eventually(k.Series(r)).Should(gomega.Equal(WantConditionSeries(then)))
	k.DeleteAndWait(ctx, r)
	gomega.Eventually(k.Series(r)).Should(gomega.BeEmpty())
}

// DescribeSeedsStoredInSync registers an envtest spec, with no controller running, over the
// admitted seeds of the fuzz target in pkg (decoded by decode: see fuzzspec.AdmittedSeeds).
// check builds the children of one seed and expects each in sync as the API server would store
// it (ExpectStoredInSync); it returns false for a seed the controller builds nothing from. Some
// seed must be checked. The fuzz target checks the same with emulated defaults.
func DescribeSeedsStoredInSync[T client.Object](text, pkg, target string, decode any,
	check func(ctx context.Context, c client.Client, seed fuzzspec.AdmittedSeed[T]) bool,
) bool {
	return ginkgo.Describe(text, ginkgo.Ordered, ginkgo.Label("integration"), func() {
		env := StartInBeforeAll(func(ctrl.Manager) error { return nil })

		ginkgo.It("finds the children of every admitted seed in sync once stored", func(ctx ginkgo.SpecContext) {
			seeds, err := fuzzspec.AdmittedSeeds[T](pkg, target, decode, env.Namespace(ctx, "drift-"))
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			checked := 0
			for _, seed := range seeds {
				if check(ctx, env, seed) {
					checked++
				}
			}
			gomega.Expect(checked).To(gomega.BeNumerically(">", 0), "no seed of %s checked", target)
			ginkgo.GinkgoWriter.Printf("%d admitted seeds: every child in sync as the API server stores it\n", checked)
		})
	})
}
