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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// A real HorizontalPodAutoscaler, run by kube-controller-manager, drives a DatabaseCluster
// through its scale subresource. The local control plane has no metrics server, so the HPA is
// given bounds the cluster is outside of: the HPA controller enforces minReplicas and maxReplicas
// before it reads any metric, through the same scale client path it uses to act on metrics.
var _ = Describe("DatabaseCluster scale subresource", Ordered, func() {
	const ns = "e2e-autoscale"
	dc := &databasev1alpha1.DatabaseCluster{}

	BeforeAll(func(ctx SpecContext) {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		dc.ObjectMeta = metav1.ObjectMeta{Namespace: ns, Name: "scaled"}
		dc.Spec = databasev1alpha1.DatabaseClusterSpec{
			Replicas: ptr.To[int32](3), MinReplicas: ptr.To[int32](2), Image: "registry.example/db:1.0",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}},
			Storage:   databasev1alpha1.StorageSpec{StorageClassName: "standard", Size: "1Gi"},
		}
		Expect(k8s.Create(ctx, dc)).To(Succeed())
	})

	AfterEach(func() {
		if CurrentSpecReport().Failed() {
			printManagerLog()
		}
	})

	readyReplicas := func(g Gomega, ctx SpecContext) int32 {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		return dc.Status.ReadyReplicas
	}

	It("is scaled up to its minReplicas by a HorizontalPodAutoscaler, which reads the pods' selector", func(ctx SpecContext) {
		Eventually(readyReplicas).WithArguments(ctx).Should(Equal(int32(3)))
		Expect(dc.Status.Selector).To(Equal("app.kubernetes.io/instance=scaled,app.kubernetes.io/name=database"))
		hpa := &autoscalingv2.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "scaled"},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{
					APIVersion: databasev1alpha1.GroupVersion.String(), Kind: "DatabaseCluster", Name: "scaled",
				},
				MinReplicas: ptr.To[int32](4), MaxReplicas: 5,
				Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
					Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](80)},
				}}},
			},
		}
		began := time.Now()
		Expect(k8s.Create(ctx, hpa)).To(Succeed())
		Eventually(func(g Gomega) *int32 {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
			return dc.Spec.Replicas
		}).WithTimeout(2 * time.Minute).Should(Equal(ptr.To[int32](4)))
		Eventually(readyReplicas).WithArguments(ctx).Should(Equal(int32(4)))
		AddReportEntry("HPA created → cluster scaled to its minReplicas 4, Ready", time.Since(began).Round(time.Millisecond).String())
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(hpa), hpa)).To(Succeed())
		Expect(hpa.Status.CurrentReplicas).To(BeNumerically(">=", 3))

		// The HPA would hold it at 4; with the HPA gone, the cluster's own floor still holds.
		Expect(k8s.Delete(ctx, hpa)).To(Succeed())
		patch := client.MergeFrom(dc.DeepCopy())
		dc.Spec.Replicas = ptr.To[int32](1)
		Expect(k8s.Patch(ctx, dc, patch)).To(MatchError(ContainSubstring("replicas cannot be below minReplicas")))
	})
})
