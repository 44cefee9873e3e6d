//go:build e2e

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

package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed1b407122/database-operator/api/conditions"
	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// The ownership rule with the real garbage collector: a Service a Helm release made under the
// name the cluster needs is never adopted, so deleting the cluster cannot take it along.
var _ = Describe("DatabaseCluster next to a Service it does not own", func() {
	It("reports the conflict, leaves the Service as it is and does not take it along when deleted", func(ctx SpecContext) {
		const ns = "e2e-ownership"
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		helms := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "shop-headless", Namespace: ns,
				Labels:      map[string]string{"app.kubernetes.io/managed-by": "Helm"},
				Annotations: map[string]string{"meta.helm.sh/release-name": "shop"}},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "shop"}, Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
		}
		Expect(k8s.Create(ctx, helms)).To(Succeed())
		before := helms.DeepCopy()

		dc := &databasev1alpha1.DatabaseCluster{
			ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: ns},
			Spec: databasev1alpha1.DatabaseClusterSpec{
				Replicas:  ptr.To[int32](1),
				Image:     "registry.example/db:1",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}},
				Storage:   databasev1alpha1.StorageSpec{StorageClassName: "standard", Size: "1Gi"},
			},
		}
		Expect(k8s.Create(ctx, dc)).To(Succeed())
		Eventually(func(g Gomega) []string {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
			c := meta.FindStatusCondition(dc.Status.Conditions, conditions.Degraded)
			g.Expect(c).NotTo(BeNil())
			return []string{string(c.Status), c.Reason, c.Message}
		}).Should(Equal([]string{"True", "ChildConflict",
			"Service shop-headless exists and is not controlled by this resource (held by no controller): it is left as it is until the name is free"}))

		Expect(k8s.Delete(ctx, dc)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc))
		}).Should(BeTrue())
		Consistently(func(g Gomega) {
			now := &corev1.Service{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(helms), now)).To(Succeed(), "the garbage collector took Helm's Service")
			g.Expect(now.ResourceVersion).To(Equal(before.ResourceVersion), "Helm's Service was written")
			g.Expect(now.OwnerReferences).To(BeEmpty())
		}, "5s").Should(Succeed())
	})
})
