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
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive,staticcheck // the specs' own vocabulary
	. "github.com/onsi/gomega"    //nolint:revive,staticcheck // the specs' own vocabulary
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/seed1b407122/database-operator/api/conditions"
	"github.com/seed1b407122/database-operator/api/scheme"
)

// Holder says who holds the name of a child before its resource is created.
type Holder string

// The holders the ownership rule is tried against.
const (
	// NoController: an object made by hand or by another tool, without a controller reference.
	NoController Holder = "no controller"
	// AnotherResource: an object controlled by another resource of the same kind.
	AnotherResource Holder = "another resource"
	// EarlierResource: an object left by a resource of the same name that was deleted and made
	// again (the same kind and name, another UID).
	EarlierResource Holder = "an earlier resource of the same name"
)

// Holders are every Holder, for tables.
var Holders = []Holder{NoController, AnotherResource, EarlierResource}

// SomeonesPod is the pod template of a Job someone else made, for the held children of the
// ownership tables: one container of its own, never restarted.
func SomeonesPod(container string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers:    []corev1.Container{{Name: container, Image: "registry.example/" + container + ":1"}},
	}}
}

// OwnershipCase is one row of the ownership table: a resource whose child's name is held.
type OwnershipCase struct {
	// Resource is the custom resource, not created yet.
	Resource client.Object
	// Child is an object of the child's type with the child's name and namespace and a valid
	// spec, not created yet; the case creates it as Holder says.
	Child client.Object
	// Kind names the child's kind as the condition does, e.g. "Service".
	Kind   string
	Holder Holder
}

// OwnershipTable is the ownership rule of one kind: its controller, a resource, and its children
// as someone else made them.
type OwnershipTable struct {
	// Setup installs the kind's controller into the manager of the environment.
	Setup func(ctrl.Manager) error
	// Resource returns the custom resource in namespace ns, not created yet.
	Resource func(ns string) client.Object
	// Held are objects of the children's types with the children's names and specs of their
	// own: what someone else made. Each case creates a copy in its own namespace, labelled
	// made-by=hand.
	Held []client.Object
	// More registers further specs of the kind's ownership in the same environment, which runs
	// once the specs run.
	More func(env *Env)
}

// DescribeOwnership registers one envtest spec per held child and Holder of t: the ownership
// rule of ExpectOwnershipRule, each in a namespace of its own.
func DescribeOwnership(text string, t OwnershipTable) bool {
	return Describe(text, Ordered, Label("integration"), func() {
		env := StartInBeforeAll(t.Setup)
		ownershipSpecs(env, t.Resource, t.Held)
		if t.More != nil {
			t.More(env)
		}
	})
}

// OwnershipSpecs registers, in the current Ordered container of the kind's envtest specs, the
// ownership rule for its main child: one spec per Holder of held, an object of the child's type
// with a spec of its own (what someone else made), named as the main child of the resource that
// resource returns in a namespace, not created yet.
func (k Kind[R, C]) OwnershipSpecs(resource func(ns string) R, held C) {
	held.SetName(k.ChildName(resource("")))
	ownershipSpecs(k.Env, func(ns string) client.Object { return resource(ns) }, []client.Object{held})
}

// ownershipSpecs registers one spec per held child and Holder: the ownership rule of
// ExpectOwnershipRule in env, each in a namespace of its own.
func ownershipSpecs(env *Env, resource func(ns string) client.Object, held []client.Object) {
	for _, h := range held {
		gvk, err := apiutil.GVKForObject(h, scheme.Must())
		if err != nil {
			panic(err) // a table of a kind the operator does not know: a mistake in the spec itself
		}
		for _, holder := range Holders {
			It("leaves the "+gvk.Kind+" "+h.GetName()+" held by "+string(holder)+" as it is, reports it, and takes the name once it is free", func(ctx SpecContext) {
				ns := env.Namespace(ctx, "own-")
				took := ExpectOwnershipRule(ctx, env, OwnershipCase{
					Resource: resource(ns), Child: madeByHand(h, ns), Kind: gvk.Kind, Holder: holder,
				})
				AddReportEntry("recovered after the holder was deleted", took.String())
			})
		}
	}
}

// madeByHand is a copy of held in namespace ns, labelled made-by=hand.
func madeByHand(held client.Object, ns string) client.Object {
	child := held.DeepCopyObject().(client.Object)
	child.SetNamespace(ns)
	labels := child.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels["made-by"] = "hand"
	child.SetLabels(labels)
	return child
}

// ExpectOwnershipRule runs one case against the manager of the environment: the child's holder
// is left exactly as it was (same resourceVersion, labels, annotations, owners), the resource
// reports Degraded=True ChildConflict naming the kind, name and holder (and 1 in
// database_operator_resource_child_conflict) and gets exactly one ChildConflict event; once the
// holder is deleted the operator creates its own child, Degraded turns False and the series 0. It returns how long the recovery took.
func ExpectOwnershipRule(ctx context.Context, k8s client.Client, c OwnershipCase) time.Duration {
	kinds := scheme.Must()
	gvk, err := apiutil.GVKForObject(c.Resource, kinds)
	Expect(err).NotTo(HaveOccurred())
	holder := "no controller"
	switch c.Holder {
	case AnotherResource:
		c.Child.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind,
			Name: "someone-else", UID: "uid-of-someone-else", Controller: ptr.To(true)}})
		holder = gvk.Kind + " someone-else (uid uid-of-someone-else)"
	case EarlierResource:
		c.Child.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind,
			Name: c.Resource.GetName(), UID: "uid-of-an-earlier-one", Controller: ptr.To(true)}})
		holder = gvk.Kind + " " + c.Resource.GetName() + " (uid uid-of-an-earlier-one)"
	}
	Expect(k8s.Create(ctx, c.Child)).To(Succeed())
	before := c.Child.DeepCopyObject().(client.Object)
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c.Child), before)).To(Succeed())
	Expect(k8s.Create(ctx, c.Resource)).To(Succeed())

	want := []string{"True", conditions.ReasonChildConflict, fmt.Sprintf(
		"%s %s exists and is not controlled by this resource (held by %s): it is left as it is until the name is free",
		c.Kind, c.Child.GetName(), holder)}
	Eventually(degraded(ctx, k8s, c.Resource, gvk.Kind)).Should(Equal(want))
	conflict := func() (map[string]float64, error) {
		return ChildConflictSeries(gvk.Kind, c.Resource.GetNamespace(), c.Resource.GetName())
	}
	Eventually(conflict).Should(Equal(map[string]float64{"{}": 1}), "the conflict in the operator's metrics")
	untouched := func(g Gomega) {
		now := c.Child.DeepCopyObject().(client.Object)
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c.Child), now)).To(Succeed())
		g.Expect(now.GetResourceVersion()).To(Equal(before.GetResourceVersion()), "the holder was written")
		g.Expect(now.GetOwnerReferences()).To(Equal(before.GetOwnerReferences()))
		g.Expect(now.GetLabels()).To(Equal(before.GetLabels()))
		g.Expect(now.GetAnnotations()).To(Equal(before.GetAnnotations()))
	}
	Consistently(untouched, 2*time.Second).Should(Succeed())
	Expect(conflictEvents(ctx, k8s, c.Resource, gvk.Kind)).To(Equal(1), "one event, not one per retry")

	began := time.Now()
	// Background: Jobs and CronJobs default to orphaning, which waits for a garbage collector
	// envtest does not run.
	Expect(k8s.Delete(ctx, c.Child, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
	Eventually(func(g Gomega) types.UID {
		now := c.Child.DeepCopyObject().(client.Object)
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c.Child), now)).To(Succeed())
		owner := metav1.GetControllerOf(now)
		g.Expect(owner).NotTo(BeNil())
		return owner.UID
	}, time.Minute).Should(Equal(c.Resource.GetUID()))
	Eventually(degraded(ctx, k8s, c.Resource, gvk.Kind), time.Minute).Should(HaveExactElements("False", conditions.ReasonAsExpected, Not(BeEmpty())))
	Eventually(conflict).Should(Equal(map[string]float64{"{}": 0}))
	return time.Since(began)
}

// degraded reads the Degraded condition of obj as [status, reason, message].
func degraded(ctx context.Context, k8s client.Client, obj client.Object, kind string) func(g Gomega) []string {
	return func(g Gomega) []string {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
		if u.GetKind() == "" {
			gvk, err := apiutil.GVKForObject(obj, scheme.Must())
			g.Expect(err).NotTo(HaveOccurred())
			u.SetGroupVersionKind(gvk)
		}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(obj), u)).To(Succeed())
		raw, _, err := unstructured.NestedSlice(u.Object, "status", "conditions")
		g.Expect(err).NotTo(HaveOccurred())
		var list []metav1.Condition
		for _, item := range raw {
			var c metav1.Condition
			fields, ok := item.(map[string]any)
			g.Expect(ok).To(BeTrue())
			g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(fields, &c)).To(Succeed())
			list = append(list, c)
		}
		c := meta.FindStatusCondition(list, conditions.Degraded)
		g.Expect(c).NotTo(BeNil(), "%s has no Degraded condition", kind)
		return []string{string(c.Status), c.Reason, c.Message}
	}
}

// conflictEvents counts the ChildConflict events about obj.
func conflictEvents(ctx context.Context, k8s client.Client, obj client.Object, kind string) int {
	var list eventsv1.EventList
	Expect(k8s.List(ctx, &list, client.InNamespace(obj.GetNamespace()))).To(Succeed())
	n := 0
	for _, e := range list.Items {
		if e.Regarding.Kind == kind && e.Regarding.Name == obj.GetName() && e.Reason == conditions.ReasonChildConflict {
			n++
		}
	}
	return n
}
