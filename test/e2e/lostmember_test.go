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
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/test/harness/controlplane"
)

// A member lost with its node, on the local control plane: the simulated CSI driver pins each
// volume to the node the scheduler chose (local storage), kwok runs the pods, and the real
// kube-controller-manager (PodGC, StatefulSet, pvc-protection, PV binder) and scheduler do the
// rest. The node of one member is deleted: PodGC removes its pod, the StatefulSet recreates it,
// the scheduler cannot place it (its volume's node is gone). The operator tells it, and replaces
// the member only once spec.autoHeal.replaceLostMembers is true.
var _ = Describe("DatabaseCluster member lost with its node", Ordered, func() {
	const ns = "e2e-lost"
	const spare = "kwok-node-lost-spare"
	dc := smallCluster(ns, "lost", 3)
	var lostNode *corev1.Node

	BeforeAll(func(ctx SpecContext) {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		// A fourth node for the replacement: the members are spread one per node.
		Expect(k8s.Create(ctx, kwokNode(spare))).To(Succeed())
		dc.Spec.AutoHeal = &databasev1alpha1.AutoHealSpec{LostMemberAfterSeconds: ptr.To[int32](30)}
		dc.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				TopologyKey:   corev1.LabelHostname,
				LabelSelector: &metav1.LabelSelector{MatchLabels: dc.SelectorLabels()},
			}},
		}}
	})

	AfterEach(func(ctx SpecContext) {
		if CurrentSpecReport().Failed() {
			printManagerLog()
			dumpNamespace(ctx, ns)
		}
	})

	AfterAll(func(ctx SpecContext) {
		// Leave the suite its three nodes, under their names.
		Expect(client.IgnoreNotFound(k8s.Delete(ctx, dc))).To(Succeed())
		Eventually(func(g Gomega) {
			var pods corev1.PodList
			g.Expect(k8s.List(ctx, &pods, client.InNamespace(ns))).To(Succeed())
			g.Expect(pods.Items).To(BeEmpty())
		}).WithTimeout(3 * time.Minute).Should(Succeed())
		if lostNode != nil {
			Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, kwokNode(lostNode.Name)))).To(Succeed())
			// Ready and without the not-ready taint, as the suite's nodes are: a spec that runs
			// next and spreads its pods over three nodes must find three to schedule on.
			Eventually(func(g Gomega) {
				node := &corev1.Node{}
				g.Expect(k8s.Get(ctx, client.ObjectKey{Name: lostNode.Name}, node)).To(Succeed())
				g.Expect(controlplane.NodeReady(node)).To(BeTrue(), "node %s Ready", node.Name)
				for _, t := range node.Spec.Taints {
					g.Expect(t.Key).NotTo(BeElementOf(corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable), "node %s schedulable", node.Name)
				}
			}).WithTimeout(time.Minute).Should(Succeed())
		}
		Expect(client.IgnoreNotFound(k8s.Delete(ctx, kwokNode(spare)))).To(Succeed())
	})

	// members returns the pods and claims of the cluster as "name uid node" and "name uid volume".
	members := func(ctx SpecContext, g Gomega) (map[string]string, map[string]string) {
		var pods corev1.PodList
		g.Expect(k8s.List(ctx, &pods, client.InNamespace(ns))).To(Succeed())
		var claims corev1.PersistentVolumeClaimList
		g.Expect(k8s.List(ctx, &claims, client.InNamespace(ns))).To(Succeed())
		p, c := map[string]string{}, map[string]string{}
		for _, pod := range pods.Items {
			p[pod.Name] = string(pod.UID) + " " + pod.Spec.NodeName
		}
		for _, claim := range claims.Items {
			c[claim.Name] = string(claim.UID) + " " + claim.Spec.VolumeName
		}
		return p, c
	}
	condition := func(ctx SpecContext, g Gomega) metav1.Condition {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		c := meta.FindStatusCondition(dc.Status.Conditions, databasev1alpha1.ConditionMemberLost)
		g.Expect(c).NotTo(BeNil())
		return *c
	}
	events := func(ctx SpecContext, reason string) []string {
		var list eventsv1.EventList
		Expect(k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
		var notes []string
		for _, e := range list.Items {
			if e.Regarding.Kind == "DatabaseCluster" && e.Reason == reason {
				notes = append(notes, e.Note)
			}
		}
		return notes
	}

	It("is told when its node is gone, and replaced on a healthy node only once asked, the others untouched", func(ctx SpecContext) {
		createAvailable(ctx, dc)
		pods, claims := members(ctx, Default)
		Expect(pods).To(HaveLen(3))
		Expect(claims).To(HaveLen(3))
		lostNode = &corev1.Node{}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: strings.Fields(pods["lost-2"])[1]}, lostNode)).To(Succeed())
		kept := func(all map[string]string) map[string]string {
			return map[string]string{"lost-0": all["lost-0"], "lost-1": all["lost-1"],
				"data-lost-0": all["data-lost-0"], "data-lost-1": all["data-lost-1"]}
		}
		keptPods, keptClaims := kept(pods), kept(claims)

		By("the node of lost-2 is deleted: PodGC removes the pod, the StatefulSet recreates it, and it cannot be scheduled")
		began := time.Now()
		Expect(k8s.Delete(ctx, lostNode)).To(Succeed())
		Eventually(func(g Gomega) {
			c := condition(ctx, g)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Reason).To(Equal(databasev1alpha1.ReasonMemberLost))
			g.Expect(c.Message).To(Equal("member lost-2: its claim data-lost-2 is bound to volume " + strings.Fields(claims["data-lost-2"])[1] +
				", pinned to node " + lostNode.Name + ", which is gone; the pod cannot be scheduled (for longer than " +
				"spec.autoHeal.lostMemberAfterSeconds, 30s); not replaced: spec.autoHeal.replaceLostMembers is false"))
		}).WithTimeout(4 * time.Minute).Should(Succeed())
		AddReportEntry("node deleted → MemberLost", time.Since(began).Round(time.Second).String())
		// The recorder sends events after the status write, from a queue: the warning may reach the
		// API server a moment after the condition. Told once; checked again at the end.
		Eventually(func() []string { return events(ctx, databasev1alpha1.ReasonMemberLost) }).Should(HaveLen(1))
		Consistently(func(g Gomega) {
			p, c := members(ctx, g)
			g.Expect(kept(p)).To(Equal(keptPods))
			g.Expect(kept(c)).To(Equal(keptClaims))
			g.Expect(c["data-lost-2"]).To(Equal(claims["data-lost-2"]), "replaceLostMembers is false: the claim stays")
		}, 5*time.Second).Should(Succeed())

		By("replaceLostMembers: lost-2 gets a new claim on a healthy node, and the cluster is Available again")
		replaceAsked := time.Now()
		patch := client.MergeFrom(dc.DeepCopy())
		dc.Spec.AutoHeal.ReplaceLostMembers = true
		Expect(k8s.Patch(ctx, dc, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
			g.Expect(meta.IsStatusConditionTrue(dc.Status.Conditions, databasev1alpha1.ConditionAvailable)).To(BeTrue())
			p, c := members(ctx, g)
			g.Expect(c["data-lost-2"]).NotTo(BeEmpty())
			g.Expect(c["data-lost-2"]).NotTo(Equal(claims["data-lost-2"]), "a new claim")
			g.Expect(strings.Fields(p["lost-2"])[1]).NotTo(Equal(lostNode.Name))
			g.Expect(kept(p)).To(Equal(keptPods), "the other members' pods are never touched")
			g.Expect(kept(c)).To(Equal(keptClaims), "the other members' claims are never touched")
		}).WithTimeout(4 * time.Minute).Should(Succeed())
		AddReportEntry("replaceLostMembers → Available, lost-2 on a healthy node", time.Since(replaceAsked).Round(time.Second).String())
		Eventually(func(g Gomega) {
			c := condition(ctx, g)
			g.Expect([]string{string(c.Status), c.Reason}).To(Equal([]string{"False", databasev1alpha1.ReasonNoMemberLost}))
		}).Should(Succeed())
		replaced := events(ctx, "ReplacedLostMember")
		Expect(replaced).NotTo(BeEmpty())
		Expect(replaced[0]).To(HavePrefix("Deleted claim data-lost-2 and pod lost-2, lost with node " + lostNode.Name + " (gone)"))
		for _, note := range replaced {
			Expect(note).To(ContainSubstring("pod lost-2,"), "only lost-2 is ever replaced")
		}
		Expect(events(ctx, databasev1alpha1.ReasonMemberLost)).To(HaveLen(1), "the warning is told once per lost member")
	})
})

// kwokNode is a simulated node kwok runs pods on, like the suite's (controlplane's buildNode).
func kwokNode(name string) *corev1.Node {
	resources := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods: resource.MustParse("110"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{controlplane.KwokNodeAnnotation: "fake"},
			Labels: map[string]string{controlplane.NodeTypeLabel: "kwok", corev1.LabelHostname: name,
				corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64"},
		},
		Status: corev1.NodeStatus{Capacity: resources, Allocatable: resources},
	}
}
