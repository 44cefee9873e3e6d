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

package databasecluster

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// withLoadBalancer exposes the client Service as a LoadBalancer with an annotation, a label, a
// source range, a class, the Local traffic policy and a metrics port.
func withLoadBalancer() clusterOption {
	return func(dc *databasev1alpha1.DatabaseCluster) {
		dc.Spec.Service = &databasev1alpha1.ServiceSpec{
			Type:                     corev1.ServiceTypeLoadBalancer,
			Annotations:              map[string]string{"example.com/internal": "true", "example.com/idle-timeout": "60"},
			Labels:                   map[string]string{"team": "payments"},
			LoadBalancerSourceRanges: []string{"10.0.0.0/8"},
			LoadBalancerClass:        ptr.To("example.com/internal"),
			ExternalTrafficPolicy:    corev1.ServiceExternalTrafficPolicyLocal,
			Ports:                    []databasev1alpha1.ServicePort{{Name: "metrics", Port: 9187, TargetPort: ptr.To(intstr.FromString("metrics"))}},
		}
	}
}

var _ = Describe("DatabaseCluster pod extensions and exposure", Ordered, Label("integration"), func() {
	k8s := testenv.StartInBeforeAll(setupController)
	clusters := testenv.Kind[*databasev1alpha1.DatabaseCluster, *appsv1.StatefulSet]{
		Env: k8s, Name: "DatabaseCluster", ChildName: (*databasev1alpha1.DatabaseCluster).StatefulSetName,
	}
	clientService := func(ctx SpecContext, dc *databasev1alpha1.DatabaseCluster) func(Gomega) *corev1.Service {
		return testenv.Read[*corev1.Service](ctx, k8s, client.ObjectKey{Namespace: dc.Namespace, Name: dc.ClientServiceName()})
	}

	It("stores every extension and the exposed Service in sync with the API server's defaults", func(ctx SpecContext) {
		ns := k8s.Namespace(ctx, "drift-ext-")
		for _, dc := range []*databasev1alpha1.DatabaseCluster{
			newCluster("db", withNamespace(ns), withExtensions(), withLoadBalancer()),
			newCluster("plain", withNamespace(ns)),
			newCluster("inputs", withNamespace(ns), withConfigFiles(map[string]string{"db.conf": "a = 1"}),
				withCredentials(databasev1alpha1.CredentialsSpec{Username: "app"})),
		} {
			sts, err := specs.BuildStatefulSet(dc, specs.Inputs{})
			Expect(err).NotTo(HaveOccurred())
			testenv.ExpectStoredInSync(ctx, k8s, dc.Name, sts, statefulSetStoredInSync)
			testenv.ExpectStoredInSync(ctx, k8s, dc.Name, specs.BuildClientService(dc), serviceSpec.InSync)
		}
	})

	It("writes the extensions and the Service once, then leaves them alone", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "ext-")), withExtensions(), withLoadBalancer())
		sts := clusters.Create(ctx, dc)
		Expect(sts.Spec.Template.Spec.InitContainers).To(HaveLen(2))
		Expect(sts.Spec.Template.Spec.InitContainers[1].RestartPolicy).To(Equal(ptr.To(corev1.ContainerRestartPolicyAlways)))

		var svc *corev1.Service
		Eventually(func(g Gomega) {
			svc = clientService(ctx, dc)(g)
			g.Expect(svc.Spec.Type).To(Equal(corev1.ServiceTypeLoadBalancer))
		}).Should(Succeed())
		Expect(svc.Annotations).To(HaveKeyWithValue("example.com/internal", "true"))
		Expect(svc.Labels).To(HaveKeyWithValue("team", "payments"))
		Expect(svc.Spec.LoadBalancerClass).To(Equal(ptr.To("example.com/internal")))
		Expect(svc.Spec.LoadBalancerSourceRanges).To(Equal([]string{"10.0.0.0/8"}))
		Expect(svc.Spec.ExternalTrafficPolicy).To(Equal(corev1.ServiceExternalTrafficPolicyLocal))
		Expect(svc.Spec.Ports).To(HaveLen(2))
		Expect(svc.Spec.Ports[1].Name).To(Equal("metrics"))
		Expect(svc.Spec.Ports[1].NodePort).NotTo(BeZero(), "the API server allocates node ports to a LoadBalancer")

		// No write loop: the StatefulSet and the Service keep their versions.
		Consistently(func(g Gomega) [2]string {
			return [2]string{clusters.Child(ctx, dc)(g).ResourceVersion, clientService(ctx, dc)(g).ResourceVersion}
		}, 2*time.Second).Should(Equal([2]string{sts.ResourceVersion, svc.ResourceVersion}))
	})

	It("removes what spec.service no longer says, keeps what others added and the allocated node ports", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "expose-")), withLoadBalancer())
		clusters.Create(ctx, dc)
		var svc *corev1.Service
		Eventually(func(g Gomega) { svc = clientService(ctx, dc)(g); g.Expect(svc.Spec.Ports).To(HaveLen(2)) }).Should(Succeed())
		testenv.Update(ctx, k8s, svc, func(s *corev1.Service) { s.Annotations["cloud.example.com/assigned"] = "lb-1" })
		nodePort := svc.Spec.Ports[0].NodePort

		clusters.Update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) {
			dc.Spec.Service.Annotations = map[string]string{"example.com/internal": "true"}
			dc.Spec.Service.Labels = nil
			dc.Spec.Service.ExternalTrafficPolicy = ""
		})
		Eventually(func(g Gomega) {
			svc = clientService(ctx, dc)(g)
			g.Expect(svc.Annotations).NotTo(HaveKey("example.com/idle-timeout"))
			g.Expect(svc.Labels).NotTo(HaveKey("team"))
		}).Should(Succeed())
		Expect(svc.Annotations).To(HaveKeyWithValue("example.com/internal", "true"))
		Expect(svc.Annotations).To(HaveKeyWithValue("cloud.example.com/assigned", "lb-1"))
		Expect(svc.Spec.ExternalTrafficPolicy).To(Equal(corev1.ServiceExternalTrafficPolicyCluster))
		Expect(svc.Spec.Ports[0].NodePort).To(Equal(nodePort))

		clusters.Update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Service = nil })
		Eventually(func(g Gomega) *corev1.Service { return clientService(ctx, dc)(g) }).Should(And(
			WithTransform(func(s *corev1.Service) corev1.ServiceType { return s.Spec.Type }, Equal(corev1.ServiceTypeClusterIP)),
			WithTransform(func(s *corev1.Service) int { return len(s.Spec.Ports) }, Equal(1)),
			WithTransform(func(s *corev1.Service) map[string]string { return s.Annotations }, Equal(map[string]string{"cloud.example.com/assigned": "lb-1"})),
		))
	})

	It("tells a pod template that breaks the restricted profile in a warning event", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "psa-")), withExtensions(), func(dc *databasev1alpha1.DatabaseCluster) {
			dc.Spec.Sidecars[0].SecurityContext = &corev1.SecurityContext{RunAsUser: ptr.To[int64](0)}
		})
		clusters.Create(ctx, dc)
		Eventually(clusters.Events(ctx, dc)).Should(ContainElement(
			`Warning NotRestricted: The pods of StatefulSet db do not meet the restricted Pod Security profile: runAsUser=0 (container "agent" must not set runAsUser=0)`))
	})

	It("reports a clash admission cannot see in Degraded and changes no pod", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "clash-")), withExtensions())
		sts := clusters.Create(ctx, dc)
		clusters.Update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) {
			dc.Spec.Sidecars[0].Name = "prepare"
			dc.Spec.Image = "registry.example/db:2.0"
		})
		Eventually(k8s.Condition(ctx, dc, "Degraded")).Should(Equal([]string{"True", "ReconcileFailed",
			`spec.sidecars and spec.initContainers both have a container named "prepare": containers of one pod need different names`}))
		Expect(clusters.Child(ctx, dc)(Default).Spec.Template).To(Equal(sts.Spec.Template))
	})

	It("serves the scale subresource: kubectl scale and autoscalers change spec.replicas and read the selector", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "scale-")),
			func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.MinReplicas = ptr.To[int32](3) })
		clusters.Create(ctx, dc)
		scale := &autoscalingv1.Scale{}
		Eventually(func(g Gomega) {
			g.Expect(k8s.SubResource("scale").Get(ctx, dc, scale)).To(Succeed())
			g.Expect(scale.Status.Selector).To(Equal("app.kubernetes.io/instance=db,app.kubernetes.io/name=database"))
		}).Should(Succeed())
		Expect(scale.Spec.Replicas).To(Equal(int32(3)))

		scale.ResourceVersion = ""
		scale.Spec.Replicas = 5
		Expect(k8s.SubResource("scale").Update(ctx, dc, client.WithSubResourceBody(scale))).To(Succeed())
		Eventually(func(g Gomega) *int32 { return clusters.Child(ctx, dc)(g).Spec.Replicas }).Should(Equal(ptr.To[int32](5)))

		// Like kubectl scale: no resourceVersion, so the status the operator writes meanwhile
		// does not make it a conflict.
		scale.ResourceVersion = ""
		scale.Spec.Replicas = 10
		err := k8s.SubResource("scale").Update(ctx, dc, client.WithSubResourceBody(scale))
		Expect(err).To(MatchError(ContainSubstring("should be less than or equal to 9")))

		scale.Spec.Replicas = 2
		err = k8s.SubResource("scale").Update(ctx, dc, client.WithSubResourceBody(scale))
		Expect(err).To(MatchError(ContainSubstring("replicas cannot be below minReplicas: the cluster needs that many members")))
		Expect(clusters.Current(ctx, dc)(Default).Spec.Replicas).To(Equal(ptr.To[int32](5)))
	})
})
