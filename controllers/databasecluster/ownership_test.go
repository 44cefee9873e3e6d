// Copyright 2026 The database-operator Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
// 	http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package databasecluster

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// The ownership rule, for every child of a DatabaseCluster and every kind of holder: a name
// held by anything but the cluster is left exactly as it is and reported, never adopted.
var _ = testenv.DescribeOwnership("DatabaseCluster ownership of its children", testenv.OwnershipTable{
	Setup:    setupController,
	Resource: func(ns string) client.Object { return newCluster("db", withNamespace(ns)) },
	Held:     []client.Object{someonesStatefulSet(), service("db-headless"), service("db"), someonesPDB()},
	More: func(env *testenv.Env) {
		It("lets the second of clusters a and a-headless report the Service name the first one holds", func(ctx SpecContext) {
			expectNameHeldByFirstCluster(ctx, env)
		})
		It("writes the headless Service and the PDB but no StatefulSet while the client Service's name is held", func(ctx SpecContext) {
			expectStatefulSetWaitsForServices(ctx, env)
		})
	},
})

// expectNameHeldByFirstCluster: cluster a holds the Service a-headless, so cluster a-headless
// reports that its client Service's name is held and a keeps its Service.
func expectNameHeldByFirstCluster(ctx SpecContext, k8s *testenv.Env) {
	ns := k8s.Namespace(ctx, "own-")
	first := newCluster("a", withNamespace(ns))
	Expect(k8s.Create(ctx, first)).To(Succeed())
	Eventually(func() error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "a-headless"}, &corev1.Service{})
	}).Should(Succeed())
	second := newCluster("a-headless", withNamespace(ns))
	Expect(k8s.Create(ctx, second)).To(Succeed())
	Eventually(func(g Gomega) []string {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(second), second)).To(Succeed())
		return conditionFields(second.Status.Conditions, "Degraded")
	}).Should(Equal([]string{"True", "ChildConflict",
		"Service a-headless exists and is not controlled by this resource (held by DatabaseCluster a (uid " + string(first.UID) + ")): it is left as it is until the name is free"}))
	svc := &corev1.Service{}
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "a-headless"}, svc)).To(Succeed())
	Expect(metav1.GetControllerOf(svc).UID).To(Equal(first.UID), "the first cluster keeps its Service")
}

// expectStatefulSetWaitsForServices: the Services and the PDB are written at once, so the one
// whose name is held does not keep the others from being written; the StatefulSet waits for
// both Services, so no pod and no claim is made for the cluster meanwhile.
func expectStatefulSetWaitsForServices(ctx SpecContext, k8s *testenv.Env) {
	ns := k8s.Namespace(ctx, "own-")
	held := service("db")
	held.Namespace = ns
	Expect(k8s.Create(ctx, held)).To(Succeed())
	dc := newCluster("db", withNamespace(ns))
	Expect(k8s.Create(ctx, dc)).To(Succeed())
	Eventually(func(g Gomega) []string {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		return conditionFields(dc.Status.Conditions, "Degraded")
	}).Should(HaveExactElements("True", "ChildConflict", HavePrefix("Service db exists and is not controlled by this resource")))
	headless := &corev1.Service{}
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-headless"}, headless)).To(Succeed())
	Expect(metav1.IsControlledBy(headless, dc)).To(BeTrue())
	pdb := &policyv1.PodDisruptionBudget{}
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, pdb)).To(Succeed())
	Expect(metav1.IsControlledBy(pdb, dc)).To(BeTrue())
	Consistently(func() error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, &appsv1.StatefulSet{})
	}, 2*time.Second).Should(Satisfy(apierrors.IsNotFound), "no StatefulSet while a Service cannot be had")
}

// someonesSelector selects the pods of someone else's workload.
var someonesSelector = map[string]string{"app": "someone-elses"}

// someonesStatefulSet is a StatefulSet "db" someone else made.
func someonesStatefulSet() client.Object {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: appsv1.StatefulSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: someonesSelector},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: someonesSelector},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}},
			},
		},
	}
}

// someonesPDB is a PodDisruptionBudget "db" someone else made.
func someonesPDB() client.Object {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: ptrIntOrString(1), Selector: &metav1.LabelSelector{MatchLabels: someonesSelector},
		},
	}
}

// service is a plain ClusterIP Service someone else made.
func service(name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "web", Port: 80}}},
	}
}

func ptrIntOrString(n int) *intstr.IntOrString {
	v := intstr.FromInt(n)
	return &v
}

// conditionFields is a condition of the given type as [status, reason, message], nil if absent.
func conditionFields(conditions []metav1.Condition, conditionType string) []string {
	for _, c := range conditions {
		if c.Type == conditionType {
			return []string{string(c.Status), c.Reason, c.Message}
		}
	}
	return nil
}
