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
	"crypto/tls"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/api/labels"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
	"github.com/seed1b407122/database-operator/controllers/internal/certs"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// podReadyTimeout is short in the envtest specs so that a stuck pod is seen within seconds.
const podReadyTimeout = 2 * time.Second

// setupController installs the DatabaseCluster reconciler, with that pod-ready timeout,
// into the manager of an envtest environment.
func setupController(mgr ctrl.Manager) error {
	return (&Reconciler{ReconcilerBase: testenv.ReconcilerBase(mgr), PodReadyTimeout: podReadyTimeout}).SetupWithManager(mgr)
}

// The envtest specs run the controller in a manager against a real kube-apiserver and etcd.
// envtest runs no other controller: nothing creates pods, and the specs play the StatefulSet
// controller by writing the StatefulSet's status themselves.
var _ = Describe("DatabaseCluster controller", Ordered, Label("integration"), func() {
	k8s := testenv.StartInBeforeAll(setupController)

	clusters := testenv.Kind[*databasev1alpha1.DatabaseCluster, *appsv1.StatefulSet]{
		Env: k8s, Name: "DatabaseCluster", ChildName: (*databasev1alpha1.DatabaseCluster).StatefulSetName,
	}
	key := func(dc *databasev1alpha1.DatabaseCluster, name string) client.ObjectKey {
		return client.ObjectKey{Namespace: dc.Namespace, Name: name}
	}
	// markReady plays the StatefulSet controller: all pods exist, are Ready and current.
	markReady := func(ctx SpecContext, dc *databasev1alpha1.DatabaseCluster, ready int32) {
		Eventually(func(g Gomega) {
			sts := &appsv1.StatefulSet{}
			g.Expect(k8s.Get(ctx, clusters.ChildKey(dc), sts)).To(Succeed())
			sts.Status = appsv1.StatefulSetStatus{
				ObservedGeneration: sts.Generation, Replicas: *sts.Spec.Replicas, ReadyReplicas: ready,
				AvailableReplicas: ready, UpdatedReplicas: *sts.Spec.Replicas, CurrentReplicas: *sts.Spec.Replicas,
				CurrentRevision: "rev-1", UpdateRevision: "rev-1",
			}
			g.Expect(k8s.Status().Update(ctx, sts)).To(Succeed())
		}).Should(Succeed())
	}
	// events lists the events about dc as "Reason: note".
	events := func(ctx SpecContext, dc *databasev1alpha1.DatabaseCluster) func(g Gomega) []string {
		return k8s.EventsAbout(ctx, "DatabaseCluster", dc, func(e eventsv1.Event) string { return e.Reason + ": " + e.Note })
	}
	eventReasons := func(ctx SpecContext, dc *databasev1alpha1.DatabaseCluster) func(g Gomega) []string {
		return k8s.EventsAbout(ctx, "DatabaseCluster", dc, func(e eventsv1.Event) string { return e.Reason })
	}
	// series reads the operator's series about dc from the manager's metrics registry: its
	// conditions by type and status, and its replicas by metric name.
	series := func(dc *databasev1alpha1.DatabaseCluster) func(g Gomega) map[string]float64 {
		return func(g Gomega) map[string]float64 {
			got, err := testenv.ConditionSeries("DatabaseCluster", dc.Namespace, dc.Name)
			g.Expect(err).NotTo(HaveOccurred())
			for _, metric := range []string{
				"database_operator_databasecluster_replicas", "database_operator_databasecluster_ready_replicas",
			} {
				replicas, err := testenv.Gauges(metric, map[string]string{"namespace": dc.Namespace, "name": dc.Name})
				g.Expect(err).NotTo(HaveOccurred())
				for key, value := range replicas {
					got[metric+key] = value
				}
			}
			return got
		}
	}
	// wantSeries is what series returns for a cluster of 3 replicas with the given conditions.
	wantSeries := func(ready float64, conditions map[string]string) map[string]float64 {
		want := testenv.WantConditionSeries(conditions)
		want["database_operator_databasecluster_replicas{}"] = 3
		want["database_operator_databasecluster_ready_replicas{}"] = ready
		return want
	}

	It("creates the exact children, with owner references and a finalizer", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "dbc-")))
		sts := clusters.Create(ctx, dc)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		Expect(dc.Finalizers).To(Equal([]string{"database.seed1b407122.io/finalizer"}))
		Expect(dc.Spec.Port).To(Equal(int32(9000)), "the API server defaults the port")

		parent := testenv.Parent{APIVersion: "database.seed1b407122.io/v1alpha1", Kind: "DatabaseCluster", App: "database", Name: "db", UID: dc.UID}
		owner, childLabels, selector := parent.OwnerReferences(), parent.Labels(), parent.Selector()

		Expect(sts.OwnerReferences).To(Equal(owner))
		Expect(sts.Labels).To(Equal(childLabels))
		Expect(*sts.Spec.Replicas).To(Equal(int32(3)))
		Expect(sts.Spec.ServiceName).To(Equal("db-headless"))
		Expect(sts.Spec.Selector.MatchLabels).To(Equal(selector))
		Expect(sts.Spec.PodManagementPolicy).To(Equal(appsv1.ParallelPodManagement))
		Expect(sts.Spec.VolumeClaimTemplates).To(HaveLen(1))
		Expect(sts.Spec.VolumeClaimTemplates[0].Name).To(Equal("data"))
		Expect(*sts.Spec.VolumeClaimTemplates[0].Spec.StorageClassName).To(Equal("standard"))
		Expect(sts.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage]).To(Equal(resource.MustParse("1Gi")))
		container := sts.Spec.Template.Spec.Containers[0]
		Expect(container.Image).To(Equal("registry.example/db:1.0"))
		Expect(container.Ports).To(Equal([]corev1.ContainerPort{{Name: "db", ContainerPort: 9000, Protocol: corev1.ProtocolTCP}}))
		Expect(container.VolumeMounts).To(Equal([]corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/database"}}))
		Expect(container.ReadinessProbe.TCPSocket.Port).To(Equal(intstr.FromString("db")))
		Expect(container.LivenessProbe.TCPSocket.Port).To(Equal(intstr.FromString("db")))
		Expect(*container.SecurityContext.AllowPrivilegeEscalation).To(BeFalse())
		Expect(container.SecurityContext.Capabilities.Drop).To(Equal([]corev1.Capability{"ALL"}))
		Expect(*sts.Spec.Template.Spec.SecurityContext.RunAsNonRoot).To(BeTrue())

		headless := &corev1.Service{}
		Expect(k8s.Get(ctx, key(dc, "db-headless"), headless)).To(Succeed())
		Expect(headless.OwnerReferences).To(Equal(owner))
		Expect(headless.Labels).To(Equal(childLabels))
		Expect(headless.Spec.ClusterIP).To(Equal("None"))
		Expect(headless.Spec.PublishNotReadyAddresses).To(BeTrue())
		Expect(headless.Spec.Selector).To(Equal(selector))
		Expect(headless.Spec.Ports).To(Equal([]corev1.ServicePort{{
			Name: "db", Port: 9000, TargetPort: intstr.FromString("db"), Protocol: corev1.ProtocolTCP,
		}}))

		clientSvc := &corev1.Service{}
		Expect(k8s.Get(ctx, key(dc, "db"), clientSvc)).To(Succeed())
		Expect(clientSvc.OwnerReferences).To(Equal(owner))
		Expect(clientSvc.Spec.Type).To(Equal(corev1.ServiceTypeClusterIP))
		Expect(clientSvc.Spec.ClusterIP).NotTo(Equal("None"))
		Expect(clientSvc.Spec.Ports[0].Port).To(Equal(int32(9000)))

		pdb := &policyv1.PodDisruptionBudget{}
		Expect(k8s.Get(ctx, key(dc, "db"), pdb)).To(Succeed())
		Expect(pdb.OwnerReferences).To(Equal(owner))
		Expect(*pdb.Spec.MaxUnavailable).To(Equal(intstr.FromInt32(1)))
		Expect(pdb.Spec.Selector.MatchLabels).To(Equal(selector))

		Eventually(k8s.Condition(ctx, dc, "Available")).Should(Equal([]string{"False", "ReplicasNotReady", "0/3 replicas are ready"}))
		Eventually(k8s.Condition(ctx, dc, "Progressing")).Should(Equal([]string{"True", "Creating",
			"the new StatefulSet has no pod yet; 3 to create"}))
		Eventually(k8s.Condition(ctx, dc, "Degraded")).Should(Equal([]string{"False", "AsExpected", "every child is as specified"}))
		Eventually(k8s.Condition(ctx, dc, "Paused")).Should(Equal([]string{"False", "NotPaused", "changes to the spec are applied"}))
		Eventually(events(ctx, dc)).Should(ConsistOf(
			"Created: Created Service db-headless, Service db, PodDisruptionBudget db, StatefulSet db"))
		Consistently(events(ctx, dc), 2*time.Second).Should(HaveLen(1), "nothing else happened")
	})

	It("creates NAME-rw and NAME-ro, selecting by role, and the agent's certificate only for a cluster with an engine", func(ctx SpecContext) {
		ns := k8s.Namespace(ctx, "dbc-")
		plain := newCluster("plain", withNamespace(ns))
		clusters.Create(ctx, plain)
		dc := newCluster("db", withNamespace(ns), withEngine(databasev1alpha1.EngineEtcd))
		clusters.Create(ctx, dc)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())

		parent := testenv.Parent{APIVersion: "database.seed1b407122.io/v1alpha1", Kind: "DatabaseCluster", App: "database", Name: "db", UID: dc.UID}
		for name, role := range map[string]string{"db-rw": "primary", "db-ro": "replica"} {
			svc := &corev1.Service{}
			Expect(k8s.Get(ctx, key(dc, name), svc)).To(Succeed())
			Expect(svc.OwnerReferences).To(Equal(parent.OwnerReferences()))
			Expect(svc.Labels).To(Equal(parent.Labels()))
			want := parent.Selector()
			want["database.seed1b407122.io/role"] = role
			Expect(svc.Spec.Selector).To(Equal(want))
			Expect(svc.Spec.Type).To(Equal(corev1.ServiceTypeClusterIP))
			Expect(svc.Spec.Ports).To(Equal([]corev1.ServicePort{{
				Name: "db", Port: 9000, TargetPort: intstr.FromString("db"), Protocol: corev1.ProtocolTCP,
			}}))
		}
		Eventually(events(ctx, dc)).Should(ConsistOf("Created: Created Service db-headless, Service db, PodDisruptionBudget db, " +
			"Service db-rw, Service db-ro, Secret db-ca, Secret db-agent-tls, StatefulSet db"))
		agentTLS := &corev1.Secret{}
		Expect(k8s.Get(ctx, key(dc, "db-agent-tls"), agentTLS)).To(Succeed())
		Expect(agentTLS.OwnerReferences).To(Equal(parent.OwnerReferences()))
		caSecret := &corev1.Secret{}
		Expect(k8s.Get(ctx, key(dc, "db-ca"), caSecret)).To(Succeed())
		Expect(agentTLS.Data["ca.crt"]).To(Equal(caSecret.Data["tls.crt"]), "the agent trusts the cluster's CA, which the operator's client certificate comes from")
		_, err := tls.X509KeyPair(agentTLS.Data["tls.crt"], agentTLS.Data["tls.key"])
		Expect(err).NotTo(HaveOccurred())
		serving, err := certs.ParseCertificate(agentTLS.Data["tls.crt"])
		Expect(err).NotTo(HaveOccurred())
		Expect(serving.DNSNames).To(ContainElements("db-0.db-headless."+dc.Namespace+".svc", "db-2.db-headless."+dc.Namespace+".svc"))
		for _, name := range []string{"plain-rw", "plain-ro", "plain-ca", "plain-agent-tls"} {
			Expect(apierrors.IsNotFound(k8s.Get(ctx, key(plain, name), &corev1.Service{}))).To(BeTrue(), name)
			Expect(apierrors.IsNotFound(k8s.Get(ctx, key(plain, name), &corev1.Secret{}))).To(BeTrue(), name)
		}
	})

	It("turns Available true when the StatefulSet reports every replica ready", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "dbc-")))
		clusters.Create(ctx, dc)
		Eventually(k8s.Condition(ctx, dc, "Available")).Should(Equal([]string{"False", "ReplicasNotReady", "0/3 replicas are ready"}))

		markReady(ctx, dc, 2)
		Eventually(k8s.Condition(ctx, dc, "Available")).Should(Equal([]string{"False", "ReplicasNotReady", "2/3 replicas are ready"}))

		markReady(ctx, dc, 3)
		Eventually(k8s.Condition(ctx, dc, "Available")).Should(Equal([]string{"True", "AllReplicasReady", "3/3 replicas are ready"}))
		Eventually(k8s.Condition(ctx, dc, "Progressing")).Should(Equal([]string{"False", "RolloutComplete", "all 3 pods run the current revision"}))
		current := &databasev1alpha1.DatabaseCluster{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), current)).To(Succeed())
		Expect(current.Status.Replicas).To(Equal(int32(3)))
		Expect(current.Status.ReadyReplicas).To(Equal(int32(3)))
		Expect(current.Status.UpdatedReplicas).To(Equal(int32(3)))
		Expect(current.Status.CurrentImage).To(Equal("registry.example/db:1.0"))
		Expect(current.Status.ObservedGeneration).To(Equal(current.Generation))
		Eventually(eventReasons(ctx, dc)).Should(ContainElement("Available"))
	})

	It("makes no write when a reconcile finds nothing to change", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "dbc-")))
		clusters.Create(ctx, dc)
		markReady(ctx, dc, 3)
		Eventually(k8s.Condition(ctx, dc, "Available")).Should(Equal([]string{"True", "AllReplicasReady", "3/3 replicas are ready"}))

		// An annotation change passes the watch predicate and triggers a reconcile.
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		patch := client.MergeFrom(dc.DeepCopy())
		dc.Annotations = map[string]string{"example.com/touched": "yes"}
		Expect(k8s.Patch(ctx, dc, patch)).To(Succeed())
		versions := func(g Gomega) []string {
			objects := []client.Object{
				&databasev1alpha1.DatabaseCluster{}, &appsv1.StatefulSet{}, &policyv1.PodDisruptionBudget{},
				&corev1.Service{}, &corev1.Service{},
			}
			names := []string{"db", "db", "db", "db", "db-headless"}
			var out []string
			for i, obj := range objects {
				g.Expect(k8s.Get(ctx, key(dc, names[i]), obj)).To(Succeed())
				out = append(out, fmt.Sprintf("%T=%s", obj, obj.GetResourceVersion()))
			}
			return out
		}
		before := versions(Default)
		Consistently(versions, 3*time.Second, 250*time.Millisecond).Should(Equal(before))
	})

	It("applies replica changes to the StatefulSet", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "dbc-")))
		clusters.Create(ctx, dc)
		markReady(ctx, dc, 3)
		Eventually(k8s.Condition(ctx, dc, "Available")).Should(HaveExactElements("True", "AllReplicasReady", "3/3 replicas are ready"))

		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		patch := client.MergeFrom(dc.DeepCopy())
		dc.Spec.Replicas = ptr.To[int32](5)
		Expect(k8s.Patch(ctx, dc, patch)).To(Succeed())
		Eventually(func(g Gomega) int32 {
			sts := &appsv1.StatefulSet{}
			g.Expect(k8s.Get(ctx, key(dc, "db"), sts)).To(Succeed())
			return *sts.Spec.Replicas
		}).Should(Equal(int32(5)))
		Eventually(k8s.Condition(ctx, dc, "Available")).Should(Equal([]string{"False", "ReplicasNotReady", "3/5 replicas are ready"}))
		Eventually(eventReasons(ctx, dc)).Should(ContainElements("Scaled", "Unavailable"))

		By("scaling to one replica, the PodDisruptionBudget goes away")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		patch = client.MergeFrom(dc.DeepCopy())
		dc.Spec.Replicas = ptr.To[int32](1)
		Expect(k8s.Patch(ctx, dc, patch)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, key(dc, "db"), &policyv1.PodDisruptionBudget{}))
		}).Should(BeTrue())
	})

	It("applies image and resources changes to the pod template", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "dbc-")))
		clusters.Create(ctx, dc)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		patch := client.MergeFrom(dc.DeepCopy())
		dc.Spec.Image = "registry.example/db:2.0"
		dc.Spec.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}
		Expect(k8s.Patch(ctx, dc, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			sts := &appsv1.StatefulSet{}
			g.Expect(k8s.Get(ctx, key(dc, "db"), sts)).To(Succeed())
			c := sts.Spec.Template.Spec.Containers[0]
			g.Expect(c.Image).To(Equal("registry.example/db:2.0"))
			g.Expect(c.Resources.Limits).To(Equal(corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}))
		}).Should(Succeed())
		Eventually(eventReasons(ctx, dc)).Should(ContainElement("Updating"))
	})

	It("records the generation of the pod template it wrote, and reads and compares it again after a hand edit of the template alone", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "checked-")))
		sts := clusters.Create(ctx, dc)
		hash := sts.Annotations[specs.TemplateHashAnnotation]
		Expect(hash).To(Equal(specs.TemplateHash(&buildStatefulSet(dc, specs.Inputs{}).Spec.Template)))
		Expect(sts.Annotations).To(HaveKeyWithValue(specs.TemplateGenerationAnnotation, "1"))

		patch := client.MergeFrom(sts.DeepCopy())
		sts.Spec.Template.Spec.Containers[0].Image = "someone/else:latest"
		Expect(k8s.Patch(ctx, sts, patch)).To(Succeed())
		Expect(sts.Generation).To(Equal(int64(2)))
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, key(dc, "db"), sts)).To(Succeed())
			g.Expect(sts.Spec.Template.Spec.Containers[0].Image).To(Equal("registry.example/db:1.0"))
		}).Should(Succeed())
		Expect(sts.Generation).To(Equal(int64(3)), "the edit, then the operator's patch that put the template back")
		Expect(sts.Annotations).To(HaveKeyWithValue(specs.TemplateHashAnnotation, hash))
		Expect(sts.Annotations).To(HaveKeyWithValue(specs.TemplateGenerationAnnotation, "3"),
			"the patch records the generation it makes")
		Consistently(func(g Gomega) string {
			g.Expect(k8s.Get(ctx, key(dc, "db"), sts)).To(Succeed())
			return sts.ResourceVersion
		}, "2s").Should(Equal(sts.ResourceVersion), "no write follows once the template is in sync")
	})

	It("upgrades a StatefulSet written by 0.4.0 without a pod restart: one write of metadata records its template", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "upgrade-")), withPaused(true))
		// What 0.4.0 left: its StatefulSet with the template hash and the empty rollback
		// annotations of a rollback it released, and no record of the template's generation.
		Expect(k8s.Create(ctx, dc)).To(Succeed())
		old := buildStatefulSet(newCluster("db", withNamespace(dc.Namespace)), specs.Inputs{})
		delete(old.Annotations, specs.TemplateGenerationAnnotation)
		old.Annotations[specs.RolledBackFromAnnotation], old.Annotations[specs.RolledBackToAnnotation] = "", ""
		old.OwnerReferences[0].UID = dc.UID
		Expect(k8s.Create(ctx, old)).To(Succeed())
		// Two writes of the spec by 0.4.0 (a scale down and up) left the generation at 3.
		patch := client.MergeFrom(old.DeepCopy())
		old.Spec.Replicas = ptr.To(int32(2))
		Expect(k8s.Patch(ctx, old, patch)).To(Succeed())
		patch = client.MergeFrom(old.DeepCopy())
		old.Spec.Replicas = ptr.To(dc.DesiredReplicas())
		Expect(k8s.Patch(ctx, old, patch)).To(Succeed())
		Expect(old.Generation).To(Equal(int64(3)))
		patch = client.MergeFrom(dc.DeepCopy())
		dc.Spec.Paused = false
		Expect(k8s.Patch(ctx, dc, patch)).To(Succeed())

		sts := &appsv1.StatefulSet{}
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, key(dc, "db"), sts)).To(Succeed())
			g.Expect(sts.Annotations).To(HaveKeyWithValue(specs.TemplateGenerationAnnotation, "3"))
		}).Should(Succeed())
		Expect(sts.Generation).To(Equal(int64(3)), "the pod template was not written: no pod restarts")
		Expect(sts.Annotations).NotTo(HaveKey(specs.RolledBackFromAnnotation))
		Expect(sts.Annotations).NotTo(HaveKey(specs.RolledBackToAnnotation))
		Expect(eventReasons(ctx, dc)(Default)).NotTo(ContainElement("Updating"))
	})

	It("puts back a deleted headless Service and a hand-edited StatefulSet", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "dbc-")))
		sts := clusters.Create(ctx, dc)
		headless := &corev1.Service{}
		Eventually(func() error { return k8s.Get(ctx, key(dc, "db-headless"), headless) }).Should(Succeed())
		oldUID := headless.UID
		Expect(k8s.Delete(ctx, headless)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, key(dc, "db-headless"), headless)).To(Succeed())
			g.Expect(headless.UID).NotTo(Equal(oldUID))
			g.Expect(headless.Spec.ClusterIP).To(Equal("None"))
		}).Should(Succeed())

		patch := client.MergeFrom(sts.DeepCopy())
		sts.Spec.Template.Spec.Containers[0].Image = "someone/else:latest"
		sts.Spec.Replicas = ptr.To[int32](7)
		Expect(k8s.Patch(ctx, sts, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, key(dc, "db"), sts)).To(Succeed())
			g.Expect(sts.Spec.Template.Spec.Containers[0].Image).To(Equal("registry.example/db:1.0"))
			g.Expect(*sts.Spec.Replicas).To(Equal(int32(3)))
		}).Should(Succeed())

		By("a hand-edited PodDisruptionBudget and client Service are put back")
		pdb := &policyv1.PodDisruptionBudget{}
		Expect(k8s.Get(ctx, key(dc, "db"), pdb)).To(Succeed())
		patch = client.MergeFrom(pdb.DeepCopy())
		pdb.Spec.MaxUnavailable = ptr.To(intstr.FromInt32(3))
		Expect(k8s.Patch(ctx, pdb, patch)).To(Succeed())
		clientSvc := &corev1.Service{}
		Expect(k8s.Get(ctx, key(dc, "db"), clientSvc)).To(Succeed())
		patch = client.MergeFrom(clientSvc.DeepCopy())
		clientSvc.Spec.Ports[0].Port = 1234
		Expect(k8s.Patch(ctx, clientSvc, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, key(dc, "db"), pdb)).To(Succeed())
			g.Expect(*pdb.Spec.MaxUnavailable).To(Equal(intstr.FromInt32(1)))
			g.Expect(k8s.Get(ctx, key(dc, "db"), clientSvc)).To(Succeed())
			g.Expect(clientSvc.Spec.Ports[0].Port).To(Equal(int32(9000)))
		}).Should(Succeed())
		Eventually(eventReasons(ctx, dc)).Should(ContainElement("Repaired"))

		By("a child whose managed-by label was removed is found and labelled again")
		svc := &corev1.Service{}
		Expect(k8s.Get(ctx, key(dc, "db"), svc)).To(Succeed())
		patch = client.MergeFrom(svc.DeepCopy())
		delete(svc.Labels, labels.ManagedBy)
		Expect(k8s.Patch(ctx, svc, patch)).To(Succeed())
		Eventually(func(g Gomega) map[string]string {
			g.Expect(k8s.Get(ctx, key(dc, "db"), svc)).To(Succeed())
			return svc.Labels
		}).Should(HaveKeyWithValue(labels.ManagedBy, labels.ManagedByValue))
	})

	It("changes no child while paused and applies the pending change on resume", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "dbc-")))
		clusters.Create(ctx, dc)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		patch := client.MergeFrom(dc.DeepCopy())
		dc.Spec.Paused = true
		dc.Spec.Image = "registry.example/db:3.0"
		Expect(k8s.Patch(ctx, dc, patch)).To(Succeed())
		Eventually(k8s.Condition(ctx, dc, "Paused")).Should(Equal([]string{"True", "PausedByUser",
			"spec.paused is true: no child is changed until it is false"}))
		sts := &appsv1.StatefulSet{}
		Consistently(func(g Gomega) string {
			g.Expect(k8s.Get(ctx, key(dc, "db"), sts)).To(Succeed())
			return sts.Spec.Template.Spec.Containers[0].Image
		}, 2*time.Second).Should(Equal("registry.example/db:1.0"))

		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		patch = client.MergeFrom(dc.DeepCopy())
		dc.Spec.Paused = false
		Expect(k8s.Patch(ctx, dc, patch)).To(Succeed())
		Eventually(func(g Gomega) string {
			g.Expect(k8s.Get(ctx, key(dc, "db"), sts)).To(Succeed())
			return sts.Spec.Template.Spec.Containers[0].Image
		}).Should(Equal("registry.example/db:3.0"))
		Eventually(eventReasons(ctx, dc)).Should(ContainElements("Paused", "Resumed"))
	})

	It("serves spec.port on the Services and the container", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "dbc-")), withPort(5432))
		sts := clusters.Create(ctx, dc)
		Expect(sts.Spec.Template.Spec.Containers[0].Ports[0].ContainerPort).To(Equal(int32(5432)))
		svc := &corev1.Service{}
		Eventually(func() error { return k8s.Get(ctx, key(dc, "db"), svc) }).Should(Succeed())
		Expect(svc.Spec.Ports[0].Port).To(Equal(int32(5432)))
	})

	// claimsOf creates the claims the StatefulSet controller would have made for dc.
	// dataClaim is member ordinal's data claim of dc, as the StatefulSet controller makes it, with
	// the given owners.
	dataClaim := func(dc *databasev1alpha1.DatabaseCluster, ordinal int32, owners ...metav1.OwnerReference) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: dc.ClaimName(ordinal), Namespace: dc.Namespace, Labels: dc.Labels(), OwnerReferences: owners},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				StorageClassName: ptr.To("standard"),
				Resources: corev1.VolumeResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				},
			},
		}
	}
	claimsOf := func(ctx SpecContext, dc *databasev1alpha1.DatabaseCluster) []string {
		var names []string
		for i := range *dc.Spec.Replicas {
			claim := dataClaim(dc, i)
			Expect(k8s.Create(ctx, claim)).To(Succeed())
			names = append(names, claim.Name)
		}
		return names
	}

	It("goes away on delete, removing its finalizer and keeping its claims", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "dbc-")))
		clusters.Create(ctx, dc)
		claims := claimsOf(ctx, dc)
		Expect(claims).To(Equal([]string{"data-db-0", "data-db-1", "data-db-2"}))
		k8s.DeleteAndWait(ctx, dc)
		for _, name := range claims {
			claim := &corev1.PersistentVolumeClaim{}
			Expect(k8s.Get(ctx, key(dc, name), claim)).To(Succeed())
			Expect(claim.DeletionTimestamp).To(BeNil())
		}
		Eventually(eventReasons(ctx, dc)).Should(ContainElement("Deleting"))
	})

	It("records its conditions and replicas in the operator's metrics, and removes them once deleted", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "dbc-")))
		clusters.Create(ctx, dc)
		Eventually(series(dc)).Should(Equal(wantSeries(0, map[string]string{
			"Available": "false", "Progressing": "true", "Degraded": "false", "Paused": "false", "Resizing": "false", "Hibernated": "false", "MemberLost": "false",
		})))

		By("the 1 moves to the new status of a condition")
		markReady(ctx, dc, 3)
		Eventually(series(dc)).Should(Equal(wantSeries(3, map[string]string{
			"Available": "true", "Progressing": "false", "Degraded": "false", "Paused": "false", "Resizing": "false", "Hibernated": "false", "MemberLost": "false",
		})))

		k8s.DeleteAndWait(ctx, dc)
		Eventually(series(dc)).Should(BeEmpty())
	})

	It("deletes its claims on delete when whenDeleted is Delete", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "dbc-")), withWhenDeleted(databasev1alpha1.DeletePVC))
		clusters.Create(ctx, dc)
		claims := claimsOf(ctx, dc)
		// The claims must be in the operator's cache before the delete, as they would be for
		// claims made long before.
		time.Sleep(500 * time.Millisecond)
		k8s.DeleteAndWait(ctx, dc)
		for _, name := range claims {
			// The pvc-protection finalizer keeps a deleted claim until a controller-manager
			// removes it; envtest has none, so "being deleted" is the end state here.
			claim := &corev1.PersistentVolumeClaim{}
			err := k8s.Get(ctx, key(dc, name), claim)
			Expect(apierrors.IsNotFound(err) || claim.DeletionTimestamp != nil).To(BeTrue(), "claim %s was not deleted", name)
		}
	})

	It("holds a scale-up below a claim the StatefulSet controller condemned, until the claim is gone", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "dbc-")), withReplicas(1))
		clusters.Create(ctx, dc)
		markReady(ctx, dc, 1)
		Eventually(k8s.Condition(ctx, dc, "Available")).Should(HaveExactElements("True", "AllReplicasReady", "1/1 replicas are ready"))
		stsReplicas := func(g Gomega) int32 {
			sts := &appsv1.StatefulSet{}
			g.Expect(k8s.Get(ctx, key(dc, "db"), sts)).To(Succeed())
			return *sts.Spec.Replicas
		}

		By("the claim of member 1, removed under whenScaled: Delete, still names its pod (the garbage collector has not deleted it yet)")
		condemned := dataClaim(dc, 1, metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: "db-1", UID: "removed-pod-uid"})
		Expect(k8s.Create(ctx, condemned)).To(Succeed())
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		patch := client.MergeFrom(dc.DeepCopy())
		dc.Spec.Replicas = ptr.To[int32](3)
		Expect(k8s.Patch(ctx, dc, patch)).To(Succeed())
		Eventually(k8s.Condition(ctx, dc, "Progressing")).Should(HaveExactElements("True", "Scaling",
			"scaling from 1 to 3 pods; waiting for the claims of removed members to be deleted first: data-db-1"))
		Consistently(stsReplicas, "2s").Should(Equal(int32(1)), "the StatefulSet would not create pod db-1 while its claim is stale")

		By("the claim goes (deleted, and its pvc-protection finalizer removed as the controller-manager would): the scale-up goes on")
		Expect(k8s.Delete(ctx, condemned)).To(Succeed())
		Eventually(func(g Gomega) {
			err := k8s.Get(ctx, client.ObjectKeyFromObject(condemned), condemned)
			if apierrors.IsNotFound(err) {
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			base := condemned.DeepCopy()
			condemned.Finalizers = nil
			g.Expect(k8s.Patch(ctx, condemned, client.MergeFrom(base))).To(Succeed())
			g.Expect(apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(condemned), condemned))).To(BeTrue())
		}).Should(Succeed())
		Eventually(stsReplicas).Should(Equal(int32(3)))
		Eventually(events(ctx, dc)).Should(ContainElement("Scaled: Scaled StatefulSet db from 1 to 3 replicas"))
		Eventually(k8s.Condition(ctx, dc, "Progressing")).Should(HaveExactElements("True", "RollingUpdate",
			"waiting for the StatefulSet controller to observe generation 2"))
	})

	It("reports a claim it cannot expand in Degraded, with the API server's reason", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "dbc-")))
		clusters.Create(ctx, dc)
		claimsOf(ctx, dc)
		Eventually(k8s.Condition(ctx, dc, "Degraded")).Should(HaveExactElements("False", "AsExpected", "every child is as specified"))

		// The claims are not bound (envtest provisions nothing), and the API server refuses to
		// resize an unbound claim.
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		patch := client.MergeFrom(dc.DeepCopy())
		dc.Spec.Storage.Size = "2Gi"
		Expect(k8s.Patch(ctx, dc, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			got := k8s.Condition(ctx, dc, "Degraded")(g)
			g.Expect(got[:2]).To(Equal([]string{"True", "ReconcileFailed"}))
			g.Expect(got[2]).To(HavePrefix("expanding claim data-db-0 to 2Gi: "))
			g.Expect(got[2]).To(HaveSuffix("spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"))
		}).Should(Succeed())
		Eventually(eventReasons(ctx, dc)).Should(ContainElement("ReconcileFailed"))
		sts := &appsv1.StatefulSet{}
		Expect(k8s.Get(ctx, key(dc, "db"), sts)).To(Succeed())
		Expect(sts.DeletionTimestamp).To(BeNil(), "the StatefulSet is not replaced while its claims cannot grow")
	})

	It("turns Degraded when a pod stays not Ready past the bound, and back when it gets Ready", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "dbc-")), withReplicas(1))
		clusters.Create(ctx, dc)
		// envtest has no StatefulSet controller and no kubelet: the spec makes the pod and
		// reports what a kubelet would for an image that cannot be pulled.
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "db-0", Namespace: dc.Namespace, Labels: dc.Labels()},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "database", Image: "registry.example/missing:1"}}},
		}
		Expect(k8s.Create(ctx, pod)).To(Succeed())
		setReady := func(ready corev1.ConditionStatus, waiting *corev1.ContainerStateWaiting) {
			pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: ready, LastTransitionTime: metav1.Now()}}
			pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "database", Image: pod.Spec.Containers[0].Image,
				State: corev1.ContainerState{Waiting: waiting}, Ready: ready == corev1.ConditionTrue}}
			if waiting == nil {
				pod.Status.ContainerStatuses[0].State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.Now()}
			}
			Expect(k8s.Status().Update(ctx, pod)).To(Succeed())
		}
		setReady(corev1.ConditionFalse, &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "Back-off pulling image"})

		// Nothing else happens: only the requeue at the bound can notice the pod is stuck.
		Eventually(func(g Gomega) {
			got := k8s.Condition(ctx, dc, "Degraded")(g)
			g.Expect(got[:2]).To(Equal([]string{"True", "PodNotReady"}))
			g.Expect(got[2]).To(MatchRegexp(`^pod db-0 has not been Ready for \d+s \(ImagePullBackOff: Back-off pulling image\)$`))
		}).WithTimeout(10 * time.Second).Should(Succeed())
		Eventually(eventReasons(ctx, dc)).Should(ContainElement("PodNotReady"))

		setReady(corev1.ConditionTrue, nil)
		Eventually(k8s.Condition(ctx, dc, "Degraded")).Should(Equal([]string{"False", "AsExpected", "every child is as specified"}))
	})

	Describe("admission", func() {
		var ns string
		BeforeAll(func(ctx SpecContext) { ns = k8s.Namespace(ctx, "dbc-") })

		DescribeTable("rejects an invalid new cluster with a message a user understands", k8s.CreateRefused(&ns),
			Entry("replicas 0", newCluster("zero", withReplicas(0)),
				"spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1"),
			Entry("replicas 10", newCluster("ten", withReplicas(10)),
				"spec.replicas: Invalid value: 10: spec.replicas in body should be less than or equal to 9"),
			Entry("empty image", newCluster("noimage", withImage("")),
				"spec.image: Invalid value: \"\": spec.image in body should be at least 1 chars long"),
			Entry("size that is not a quantity", newCluster("badsize", withSize("ten gigs")),
				"spec.storage.size: Invalid value: \"ten gigs\": spec.storage.size in body should match"),
			Entry("port 0 is defaulted, port 70000 is not", newCluster("badport", withPort(70000)),
				"spec.port: Invalid value: 70000: spec.port in body should be less than or equal to 65535"),
		)

		// raw is a valid DatabaseCluster as a plain map, so that entries can remove required
		// fields, misspell them or give them values of the wrong type.
		raw := func(edit func(spec map[string]any)) *unstructured.Unstructured {
			spec := map[string]any{
				"replicas":  int64(3),
				"image":     "registry.example/db:1.0",
				"resources": map[string]any{"requests": map[string]any{"cpu": "100m"}},
				"storage":   map[string]any{"storageClassName": "standard", "size": "1Gi"},
			}
			edit(spec)
			u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
			u.SetGroupVersionKind(databasev1alpha1.GroupVersion.WithKind("DatabaseCluster"))
			u.SetGenerateName("bad-")
			return u
		}
		set := func(path string, value any) func(map[string]any) {
			return func(spec map[string]any) {
				Expect(unstructured.SetNestedField(spec, value, strings.Split(path, ".")...)).To(Succeed())
			}
		}
		remove := func(path string) func(map[string]any) {
			return func(spec map[string]any) { unstructured.RemoveNestedField(spec, strings.Split(path, ".")...) }
		}

		DescribeTable("rejects a malformed cluster at admission, strictly decoded",
			func(ctx SpecContext, edit func(map[string]any), message string) {
				u := raw(edit)
				u.SetNamespace(ns)
				err := k8s.Create(ctx, u, client.FieldValidation("Strict"))
				Expect(err).To(HaveOccurred())
				Expect(apierrors.IsInvalid(err) || apierrors.IsBadRequest(err)).To(BeTrue(), "got %v", err)
				Expect(err.Error()).To(ContainSubstring(message))
			},
			Entry("replicas missing", remove("replicas"), "spec.replicas: Required value"),
			Entry("replicas negative", set("replicas", int64(-1)), "spec.replicas in body should be greater than or equal to 1"),
			Entry("replicas not a number", set("replicas", "three"), `spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer`),
			Entry("image missing", remove("image"), "spec.image: Required value"),
			Entry("resources missing", remove("resources"), "spec.resources: Required value"),
			Entry("resources with a bad quantity", set("resources.requests.cpu", "lots"), "spec.resources.requests.cpu"),
			Entry("storage missing", remove("storage"), "spec.storage: Required value"),
			Entry("storageClassName empty", set("storage.storageClassName", ""),
				"spec.storage.storageClassName in body should be at least 1 chars long"),
			Entry("size negative", set("storage.size", "-1Gi"), "spec.storage.size in body should match"),
			Entry("size with a unit that is not one", set("storage.size", "10GB"), "spec.storage.size in body should match"),
			Entry("port negative", set("port", int64(-5)), "spec.port in body should be greater than or equal to 1"),
			Entry("whenDeleted not Retain or Delete", set("pvcRetentionPolicy.whenDeleted", "Forever"),
				`spec.pvcRetentionPolicy.whenDeleted: Unsupported value: "Forever": supported values: "Retain", "Delete"`),
			Entry("whenScaled not Retain or Delete", set("pvcRetentionPolicy.whenScaled", "Sometimes"),
				`spec.pvcRetentionPolicy.whenScaled: Unsupported value: "Sometimes": supported values: "Retain", "Delete"`),
			Entry("misspelled field", set("replica", int64(3)), `strict decoding error: unknown field "spec.replica"`),
			Entry("paused not a boolean", set("paused", "yes"), `spec.paused: Invalid value: "string": spec.paused in body must be of type boolean`),
		)

		update := func(ctx SpecContext, name string, change func(*databasev1alpha1.DatabaseCluster)) error {
			dc := newCluster(name, withNamespace(ns), withPaused(true))
			Expect(k8s.Create(ctx, dc)).To(Succeed())
			patch := client.MergeFrom(dc.DeepCopy())
			change(dc)
			return k8s.Patch(ctx, dc, patch)
		}

		It("rejects a smaller storage size and accepts a larger one", func(ctx SpecContext) {
			err := update(ctx, "shrink", func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Storage.Size = "512Mi" })
			testenv.ExpectInvalid(err, "spec.storage.size: Invalid value: \"512Mi\": storage size cannot shrink: volumes can only be expanded")
			Expect(update(ctx, "grow", func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Storage.Size = "2Gi" })).To(Succeed())
		})

		It("rejects a changed storageClassName", func(ctx SpecContext) {
			err := update(ctx, "newclass", func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Storage.StorageClassName = "fast" })
			testenv.ExpectInvalid(err, "storageClassName is immutable: create a new DatabaseCluster to move to another StorageClass")
		})
	})
})
