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
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/seed1b407122/database-operator/api/conditions"
	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/test/harness/controlplane"
)

// The DatabaseCluster lifecycle with real pods: the StatefulSet controller creates them, the
// scheduler places them on kwok's nodes, kwok makes them Ready, the simulated CSI driver of the
// local cluster binds their claims.
var _ = Describe("DatabaseCluster lifecycle", Ordered, func() {
	const ns = "e2e-lifecycle"
	dc := &databasev1alpha1.DatabaseCluster{}

	BeforeAll(func(ctx SpecContext) {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	})

	AfterEach(func() {
		if CurrentSpecReport().Failed() {
			printManagerLog()
		}
	})

	// readyPods lists the Ready pods of the cluster.
	readyPods := func(g Gomega, ctx SpecContext) []corev1.Pod {
		var pods corev1.PodList
		g.Expect(k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels(dc.SelectorLabels()))).To(Succeed())
		var ready []corev1.Pod
		for _, pod := range pods.Items {
			for _, c := range pod.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && pod.DeletionTimestamp == nil {
					ready = append(ready, pod)
				}
			}
		}
		return ready
	}
	available := func(g Gomega, ctx SpecContext) *metav1.Condition {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		c := meta.FindStatusCondition(dc.Status.Conditions, databasev1alpha1.ConditionAvailable)
		g.Expect(c).NotTo(BeNil())
		return c
	}
	claimNames := func(g Gomega, ctx SpecContext) []string {
		var claims corev1.PersistentVolumeClaimList
		g.Expect(k8s.List(ctx, &claims, client.InNamespace(ns))).To(Succeed())
		var names []string
		for _, claim := range claims.Items {
			g.Expect(claim.Status.Phase).To(Equal(corev1.ClaimBound), claim.Name)
			names = append(names, claim.Name)
		}
		return names
	}
	scaleTo := func(ctx SpecContext, replicas int32) {
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		patch := client.MergeFrom(dc.DeepCopy())
		dc.Spec.Replicas = ptr.To(replicas)
		Expect(k8s.Patch(ctx, dc, patch)).To(Succeed())
	}

	It("brings the sample of config/samples to Available with 3 Ready pods on 3 nodes", func(ctx SpecContext) {
		sample, err := os.ReadFile(filepath.Join(samplesDir, "database_v1alpha1_databasecluster_etcd.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(yaml.UnmarshalStrict(sample, dc)).To(Succeed())
		dc.Namespace = ns

		began := time.Now()
		Expect(k8s.Create(ctx, dc)).To(Succeed())
		Eventually(func(g Gomega) {
			c := available(g, ctx)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Message).To(Equal("3/3 replicas are ready"))
			g.Expect(dc.Status.ReadyReplicas).To(Equal(int32(3)))
		}).Should(Succeed())
		AddReportEntry("create → Available (3 pods)", time.Since(began).Round(time.Millisecond).String())

		pods := readyPods(Default, ctx)
		Expect(pods).To(HaveLen(3))
		nodes := map[string]bool{}
		for _, pod := range pods {
			nodes[pod.Spec.NodeName] = true
			Expect(pod.Spec.Containers[0].Image).To(Equal(dc.Spec.Image))
		}
		Expect(nodes).To(HaveLen(3), "the default anti-affinity spreads the pods over the 3 nodes")
		Expect(claimNames(Default, ctx)).To(ConsistOf("data-etcd-sample-0", "data-etcd-sample-1", "data-etcd-sample-2"))
	})

	It("scales up from 3 to 5 and back to 3, keeping the claims of removed pods", func(ctx SpecContext) {
		began := time.Now()
		scaleTo(ctx, 5)
		Eventually(func(g Gomega) {
			g.Expect(readyPods(g, ctx)).To(HaveLen(5))
			c := available(g, ctx)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Message).To(Equal("5/5 replicas are ready"))
		}).Should(Succeed())
		AddReportEntry("replicas 3 → 5 Ready and Available", time.Since(began).Round(time.Millisecond).String())

		scaleTo(ctx, 3)
		Eventually(func(g Gomega) {
			g.Expect(readyPods(g, ctx)).To(HaveLen(3))
			g.Expect(available(g, ctx).Message).To(Equal("3/3 replicas are ready"))
			g.Expect(dc.Status.Replicas).To(Equal(int32(3)))
		}).Should(Succeed())
		Expect(claimNames(Default, ctx)).To(HaveLen(5), "whenScaled Retain keeps the claims of pods 3 and 4")
	})

	It("keeps a PodDisruptionBudget of maxUnavailable 1 that counts the Ready pods", func(ctx SpecContext) {
		Eventually(func(g Gomega) {
			pdb := &policyv1.PodDisruptionBudget{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: dc.PodDisruptionBudgetName()}, pdb)).To(Succeed())
			g.Expect(pdb.Spec.MaxUnavailable.IntValue()).To(Equal(1))
			g.Expect(pdb.Status.CurrentHealthy).To(Equal(int32(3)))
			g.Expect(pdb.Status.DisruptionsAllowed).To(Equal(int32(1)))
		}).Should(Succeed())
	})

	It("changes nothing while paused and applies the pending change on resume", func(ctx SpecContext) {
		sts := &appsv1.StatefulSet{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: dc.StatefulSetName()}, sts)).To(Succeed())
		generation := sts.Generation
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		patch := client.MergeFrom(dc.DeepCopy())
		dc.Spec.Paused = true
		dc.Spec.Replicas = ptr.To[int32](4)
		Expect(k8s.Patch(ctx, dc, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
			g.Expect(meta.IsStatusConditionTrue(dc.Status.Conditions, databasev1alpha1.ConditionPaused)).To(BeTrue())
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: dc.StatefulSetName()}, sts)).To(Succeed())
			g.Expect(sts.Generation).To(Equal(generation))
			g.Expect(readyPods(g, ctx)).To(HaveLen(3))
		}, 3*time.Second).Should(Succeed())

		patch = client.MergeFrom(dc.DeepCopy())
		dc.Spec.Paused = false
		Expect(k8s.Patch(ctx, dc, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(readyPods(g, ctx)).To(HaveLen(4), "the replicas change made while paused is applied")
			g.Expect(available(g, ctx).Message).To(Equal("4/4 replicas are ready"))
			g.Expect(meta.IsStatusConditionFalse(dc.Status.Conditions, databasev1alpha1.ConditionPaused)).To(BeTrue())
		}).Should(Succeed())
		scaleTo(ctx, 3)
		Eventually(func(g Gomega) {
			g.Expect(readyPods(g, ctx)).To(HaveLen(3))
			g.Expect(available(g, ctx).Message).To(Equal("3/3 replicas are ready"))
		}).Should(Succeed())
	})

	It("rolls out a new image to every pod", func(ctx SpecContext) {
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		patch := client.MergeFrom(dc.DeepCopy())
		dc.Spec.Image = "docker.io/library/postgres:17.1"
		dc.Spec.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}
		Expect(k8s.Patch(ctx, dc, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			pods := readyPods(g, ctx)
			g.Expect(pods).To(HaveLen(3))
			for _, pod := range pods {
				g.Expect(pod.Spec.Containers[0].Image).To(Equal("docker.io/library/postgres:17.1"))
			}
			g.Expect(available(g, ctx).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(dc.Status.UpdatedReplicas).To(Equal(int32(3)))
			g.Expect(dc.Status.CurrentImage).To(Equal("docker.io/library/postgres:17.1"))
			progressing := meta.FindStatusCondition(dc.Status.Conditions, databasev1alpha1.ConditionProgressing)
			g.Expect(progressing.Reason).To(Equal(databasev1alpha1.ReasonRolloutComplete))
		}).Should(Succeed())
	})

	podUIDs := func(g Gomega, ctx SpecContext) []string {
		var uids []string
		for _, pod := range readyPods(g, ctx) {
			uids = append(uids, pod.Name+"/"+string(pod.UID))
		}
		return uids
	}

	It("grows every claim and replaces the StatefulSet while its pods keep running", func(ctx SpecContext) {
		before := podUIDs(Default, ctx)
		Expect(before).To(HaveLen(3))
		sts := &appsv1.StatefulSet{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: dc.StatefulSetName()}, sts)).To(Succeed())
		oldUID := sts.UID

		began := time.Now()
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		patch := client.MergeFrom(dc.DeepCopy())
		dc.Spec.Storage.Size = "2Gi"
		Expect(k8s.Patch(ctx, dc, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: dc.StatefulSetName()}, sts)).To(Succeed())
			g.Expect(sts.UID).NotTo(Equal(oldUID), "the StatefulSet was replaced")
			g.Expect(sts.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage]).
				To(Equal(resource.MustParse("2Gi")))
			var claims corev1.PersistentVolumeClaimList
			g.Expect(k8s.List(ctx, &claims, client.InNamespace(ns))).To(Succeed())
			g.Expect(claims.Items).To(HaveLen(5))
			for _, claim := range claims.Items {
				g.Expect(claim.Status.Capacity[corev1.ResourceStorage]).To(Equal(resource.MustParse("2Gi")), claim.Name)
			}
			g.Expect(available(g, ctx).Status).To(Equal(metav1.ConditionTrue))
			resizing := meta.FindStatusCondition(dc.Status.Conditions, databasev1alpha1.ConditionResizing)
			g.Expect(resizing).NotTo(BeNil())
			g.Expect([]string{string(resizing.Status), resizing.Reason, resizing.Message}).
				To(Equal([]string{"False", "StorageAsRequested", "every bound claim has at least 2Gi"}))
		}).Should(Succeed())
		AddReportEntry("storage growth 1Gi → 2Gi of 5 claims (3 in use)", time.Since(began).Round(time.Millisecond).String())
		Expect(podUIDs(Default, ctx)).To(Equal(before), "no pod was restarted")
		Eventually(func() []string { return eventReasons(ctx) }).Should(ContainElements("Expanding", "Replacing", "Resized"))
	})

	It("restarts every pod once for a new restartedAt annotation", func(ctx SpecContext) {
		before := podUIDs(Default, ctx)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		patch := client.MergeFrom(dc.DeepCopy())
		dc.Annotations = map[string]string{databasev1alpha1.RestartedAtAnnotation: "2026-11-22T03:00:00Z"}
		Expect(k8s.Patch(ctx, dc, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			after := podUIDs(g, ctx)
			g.Expect(after).To(HaveLen(3))
			for _, uid := range after {
				g.Expect(before).NotTo(ContainElement(uid))
			}
			g.Expect(available(g, ctx).Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())
	})

	// claimUIDs maps each claim of the namespace to its UID, and fails on one being deleted.
	claimUIDs := func(g Gomega, ctx SpecContext) map[string]string {
		var claims corev1.PersistentVolumeClaimList
		g.Expect(k8s.List(ctx, &claims, client.InNamespace(ns))).To(Succeed())
		uids := map[string]string{}
		for _, claim := range claims.Items {
			g.Expect(claim.DeletionTimestamp).To(BeNil(), claim.Name)
			uids[claim.Name] = string(claim.UID)
		}
		return uids
	}
	hibernate := func(ctx SpecContext, hibernated bool, whenScaled databasev1alpha1.PVCRetentionPolicyType) {
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		patch := client.MergeFrom(dc.DeepCopy())
		dc.Spec.Hibernated = hibernated
		dc.Spec.PVCRetentionPolicy.WhenScaled = whenScaled
		Expect(k8s.Patch(ctx, dc, patch)).To(Succeed())
	}
	condition := func(g Gomega, conditionType string) []string {
		c := meta.FindStatusCondition(dc.Status.Conditions, conditionType)
		g.Expect(c).NotTo(BeNil(), conditionType)
		return []string{string(c.Status), c.Reason, c.Message}
	}

	It("hibernates to zero pods keeping every claim, even with whenScaled Delete, and wakes on the same claims", func(ctx SpecContext) {
		claimsBefore := claimUIDs(Default, ctx)
		Expect(claimsBefore).To(HaveLen(5))
		began := time.Now()
		// whenScaled Delete would delete the claims of every pod a scale-down removes:
		// hibernation must not count as one.
		hibernate(ctx, true, databasev1alpha1.DeletePVC)
		Eventually(func(g Gomega) {
			g.Expect(readyPods(g, ctx)).To(BeEmpty())
			var pods corev1.PodList
			g.Expect(k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels(dc.SelectorLabels()))).To(Succeed())
			g.Expect(pods.Items).To(BeEmpty())
			available(g, ctx)
			g.Expect(condition(g, databasev1alpha1.ConditionHibernated)).To(Equal([]string{"True", "Hibernated",
				"spec.hibernated is true: no pod runs; claims, Services and status are kept"}))
			g.Expect(condition(g, databasev1alpha1.ConditionAvailable)).To(Equal([]string{"False", "Hibernated",
				"spec.hibernated is true: the cluster is stopped (0 ready pods left); its claims are kept"}))
		}).Should(Succeed())
		AddReportEntry("hibernate: 3 pods → 0", time.Since(began).Round(time.Millisecond).String())
		// The StatefulSet controller and the garbage collector act on whenScaled after the pods
		// are gone: give them time.
		Consistently(func(g Gomega) { g.Expect(claimUIDs(g, ctx)).To(Equal(claimsBefore)) }).
			WithTimeout(5 * time.Second).Should(Succeed())
		sts := &appsv1.StatefulSet{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: dc.StatefulSetName()}, sts)).To(Succeed())
		Expect(sts.Spec.PersistentVolumeClaimRetentionPolicy.WhenScaled).To(Equal(appsv1.RetainPersistentVolumeClaimRetentionPolicyType))
		for _, name := range []string{dc.HeadlessServiceName(), dc.ClientServiceName()} {
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.Service{})).To(Succeed(), name)
		}

		began = time.Now()
		hibernate(ctx, false, databasev1alpha1.RetainPVC)
		Eventually(func(g Gomega) {
			g.Expect(readyPods(g, ctx)).To(HaveLen(3))
			g.Expect(available(g, ctx).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(condition(g, databasev1alpha1.ConditionHibernated)).To(Equal([]string{"False", "NotHibernated",
				"the cluster runs spec.replicas (3) pods"}))
		}).Should(Succeed())
		AddReportEntry("wake: 0 pods → 3 Ready and Available", time.Since(began).Round(time.Millisecond).String())
		Expect(claimUIDs(Default, ctx)).To(Equal(claimsBefore), "the pods came back on the same claims")
	})

	It("puts back a StatefulSet deleted by hand, without losing the claims", func(ctx SpecContext) {
		sts := &appsv1.StatefulSet{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: dc.StatefulSetName()}, sts)).To(Succeed())
		oldUID := sts.UID
		Expect(k8s.Delete(ctx, sts, client.PropagationPolicy(metav1.DeletePropagationForeground))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: dc.StatefulSetName()}, sts)).To(Succeed())
			g.Expect(sts.UID).NotTo(Equal(oldUID))
			g.Expect(readyPods(g, ctx)).To(HaveLen(3))
			g.Expect(available(g, ctx).Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())
		Expect(claimNames(Default, ctx)).To(HaveLen(5))
	})

	It("goes away on delete: children garbage collected, claims kept", func(ctx SpecContext) {
		Expect(k8s.Delete(ctx, dc)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc))).To(BeTrue())
			err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: dc.StatefulSetName()}, &appsv1.StatefulSet{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the StatefulSet is garbage collected")
			g.Expect(readyPods(g, ctx)).To(BeEmpty())
		}).Should(Succeed())
		Expect(claimNames(Default, ctx)).To(HaveLen(5), "whenDeleted Retain keeps every claim")
	})
})

// eventReasons lists the reasons of the events about the sample cluster.
func eventReasons(ctx SpecContext) []string {
	var list eventsv1.EventList
	Expect(k8s.List(ctx, &list, client.InNamespace("e2e-lifecycle"))).To(Succeed())
	var reasons []string
	for _, e := range list.Items {
		if e.Regarding.Kind == "DatabaseCluster" {
			reasons = append(reasons, e.Reason)
		}
	}
	return reasons
}

func tail(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	return b[len(b)-n:]
}

var _ = Describe("DatabaseCluster data retention", func() {
	newCluster := func(ns, name string, replicas int32, policy databasev1alpha1.PVCRetentionPolicyType) *databasev1alpha1.DatabaseCluster {
		return &databasev1alpha1.DatabaseCluster{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: databasev1alpha1.DatabaseClusterSpec{
				Replicas:           ptr.To(replicas),
				Image:              "registry.example/db:1",
				Resources:          corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}},
				Storage:            databasev1alpha1.StorageSpec{StorageClassName: "standard", Size: "1Gi"},
				PVCRetentionPolicy: &databasev1alpha1.PVCRetentionPolicy{WhenDeleted: policy, WhenScaled: policy},
			},
		}
	}
	claimsOf := func(g Gomega, ctx SpecContext, ns string) []string {
		var claims corev1.PersistentVolumeClaimList
		g.Expect(k8s.List(ctx, &claims, client.InNamespace(ns))).To(Succeed())
		var names []string
		for _, claim := range claims.Items {
			if claim.DeletionTimestamp == nil {
				names = append(names, claim.Name)
			}
		}
		return names
	}
	availableWith := func(ctx SpecContext, dc *databasev1alpha1.DatabaseCluster, message string) {
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
			c := meta.FindStatusCondition(dc.Status.Conditions, databasev1alpha1.ConditionAvailable)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Message).To(Equal(message))
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())
	}

	It("deletes claims on scale-down and on delete when the policy says Delete", func(ctx SpecContext) {
		const ns = "e2e-delete-policy"
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		dc := newCluster(ns, "scratch", 2, databasev1alpha1.DeletePVC)
		Expect(k8s.Create(ctx, dc)).To(Succeed())
		availableWith(ctx, dc, "2/2 replicas are ready")
		Eventually(func(g Gomega) []string { return claimsOf(g, ctx, ns) }).
			Should(ConsistOf("data-scratch-0", "data-scratch-1"))

		patch := client.MergeFrom(dc.DeepCopy())
		dc.Spec.Replicas = ptr.To[int32](1)
		Expect(k8s.Patch(ctx, dc, patch)).To(Succeed())
		availableWith(ctx, dc, "1/1 replicas are ready")
		Eventually(func(g Gomega) []string { return claimsOf(g, ctx, ns) }).Should(ConsistOf("data-scratch-0"))

		Expect(k8s.Delete(ctx, dc)).To(Succeed())
		Eventually(func(g Gomega) []string { return claimsOf(g, ctx, ns) }).Should(BeEmpty())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc))
		}).Should(BeTrue())
	})

	It("does not hold up the deletion of its namespace", func(ctx SpecContext) {
		const ns = "e2e-namespace-deletion"
		namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		Expect(k8s.Create(ctx, namespace)).To(Succeed())
		dc := newCluster(ns, "doomed", 3, databasev1alpha1.RetainPVC)
		Expect(k8s.Create(ctx, dc)).To(Succeed())
		availableWith(ctx, dc, "3/3 replicas are ready")

		began := time.Now()
		Expect(k8s.Delete(ctx, namespace)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(namespace), namespace))
		}).Should(BeTrue(), "the namespace is gone: the finalizer of the DatabaseCluster did not block it")
		AddReportEntry("namespace with a 3-replica cluster deleted", time.Since(began).Round(time.Millisecond).String())
	})
})

var _ = Describe("DatabaseCluster with an image that never gets Ready", func() {
	It("reports Degraded without crash-looping, and recovers when the image is fixed", func(ctx SpecContext) {
		const ns = "e2e-broken-image"
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		dc := &databasev1alpha1.DatabaseCluster{
			ObjectMeta: metav1.ObjectMeta{Name: "broken", Namespace: ns},
			Spec: databasev1alpha1.DatabaseClusterSpec{
				Replicas:  ptr.To[int32](2),
				Image:     controlplane.NeverReadyImage,
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}},
				Storage:   databasev1alpha1.StorageSpec{StorageClassName: "standard", Size: "1Gi"},
			},
		}
		Expect(k8s.Create(ctx, dc)).To(Succeed())
		conditionOf := func(g Gomega, conditionType string) []string {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
			c := meta.FindStatusCondition(dc.Status.Conditions, conditionType)
			g.Expect(c).NotTo(BeNil())
			return []string{string(c.Status), c.Reason, c.Message}
		}
		Eventually(func(g Gomega) {
			degraded := conditionOf(g, conditions.Degraded)
			g.Expect(degraded[:2]).To(Equal([]string{"True", "PodNotReady"}))
			g.Expect(degraded[2]).To(MatchRegexp(`^pod broken-0 has not been Ready for \d+s \(ImagePullBackOff: Back-off pulling image "localcluster.test/never-ready:v1"\)$`))
			g.Expect(conditionOf(g, databasev1alpha1.ConditionAvailable)).
				To(Equal([]string{"False", "ReplicasNotReady", "0/2 replicas are ready"}))
		}).Should(Succeed())
		Expect(mgr.Running()).To(BeTrue(), "the manager is still running")

		began := time.Now()
		patch := client.MergeFrom(dc.DeepCopy())
		dc.Spec.Image = "registry.example/db:2"
		Expect(k8s.Patch(ctx, dc, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(conditionOf(g, databasev1alpha1.ConditionAvailable)).
				To(Equal([]string{"True", "AllReplicasReady", "2/2 replicas are ready"}))
			g.Expect(conditionOf(g, conditions.Degraded)).
				To(Equal([]string{"False", "AsExpected", "every child is as specified"}))
		}).Should(Succeed())
		AddReportEntry("broken image fixed → Available", time.Since(began).Round(time.Millisecond).String())
	})
})
