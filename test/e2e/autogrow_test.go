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
	"context"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/storageagent"
)

// agentIP is the pod IP the spec gives the member: a loopback address, where the spec itself
// runs the real storage agent, so that the manager process reads it exactly as it reads a pod's
// agent (kwok's pods run no container, and their addresses lead nowhere).
const agentIP = "127.0.0.77"

// The manager, a separate process, reads the agent at the pod IP; kwok leaves the status of a
// pod annotated kwok.x-k8s.io/status=custom to the spec, which writes it as the kubelet would
// (Running, Ready, the agent's sidecar started, the pod IP). The claim is provisioned and
// expanded by the simulated CSI driver; the pods and the StatefulSet are the real controllers'.
var _ = Describe("DatabaseCluster storage auto-grow", Ordered, func() {
	const ns = "e2e-grow"
	dc := smallCluster(ns, "grow", 1)
	var used atomic.Int64

	BeforeAll(func(ctx SpecContext) {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		dc.Spec.PodAnnotations = map[string]string{"kwok.x-k8s.io/status": "custom"}
		dc.Spec.Storage.AutoGrow = &databasev1alpha1.AutoGrowSpec{MaxSize: resource.MustParse("1400Mi"), MinIntervalSeconds: ptr.To[int32](60)}
		l, err := net.Listen("tcp", net.JoinHostPort(agentIP, strconv.Itoa(int(databasev1alpha1.StorageAgentPort))))
		Expect(err).NotTo(HaveOccurred())
		agentCtx, stop := context.WithCancel(context.Background())
		go func() {
			_ = storageagent.Serve(agentCtx, l, databasev1alpha1.DataMountPath, func(string) (storageagent.Usage, error) {
				return storageagent.Usage{UsedBytes: used.Load(), CapacityBytes: 1000}, nil
			})
		}()
		DeferCleanup(stop)
	})
	AfterAll(func(ctx SpecContext) {
		if CurrentSpecReport().Failed() {
			dumpNamespace(ctx, ns)
		}
	})

	claimOf := func(ctx SpecContext, g Gomega) *corev1.PersistentVolumeClaim {
		c := &corev1.PersistentVolumeClaim{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: dc.ClaimName(0)}, c)).To(Succeed())
		return c
	}
	sizes := func(ctx SpecContext) func(Gomega) []string {
		return func(g Gomega) []string {
			c := claimOf(ctx, g)
			request, capacity := c.Spec.Resources.Requests[corev1.ResourceStorage], c.Status.Capacity[corev1.ResourceStorage]
			return []string{request.String(), capacity.String()}
		}
	}
	condition := func(ctx SpecContext) func(Gomega) []string {
		return func(g Gomega) []string {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
			c := meta.FindStatusCondition(dc.Status.Conditions, databasev1alpha1.ConditionStorageAutoGrow)
			g.Expect(c).NotTo(BeNil())
			return []string{string(c.Status), c.Reason, c.Message}
		}
	}
	events := func(ctx SpecContext) []string {
		var list eventsv1.EventList
		Expect(k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
		var notes []string
		for _, e := range list.Items {
			if e.Regarding.Kind == "DatabaseCluster" && (e.Reason == "StorageGrown" || e.Reason == databasev1alpha1.ReasonAtMaxSize) {
				notes = append(notes, e.Type+" "+e.Reason+": "+e.Note)
			}
		}
		return notes
	}

	It("grows the claim of a filling member through the simulated CSI driver, pods kept, and stops at maxSize", func(ctx SpecContext) {
		By("the member's pod carries the agent; the spec writes its status as the kubelet would, with the agent's address")
		used.Store(500)
		Expect(k8s.Create(ctx, dc)).To(Succeed())
		pod := &corev1.Pod{}
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "grow-0"}, pod)).To(Succeed())
			g.Expect(pod.Spec.NodeName).NotTo(BeEmpty())
			g.Expect(pod.Spec.InitContainers).To(HaveExactElements(HaveField("Name", databasev1alpha1.StorageAgentContainerName)))
		}).Should(Succeed())
		running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}
		now := metav1.Now()
		pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: agentIP, PodIPs: []corev1.PodIP{{IP: agentIP}},
			HostIP: "10.240.0.1", StartTime: &now,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}},
			InitContainerStatuses: []corev1.ContainerStatus{{Name: databasev1alpha1.StorageAgentContainerName, State: running,
				Ready: true, Started: ptr.To(true), Image: "registry.example/database-operator:e2e"}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "database", State: running, Ready: true, Started: ptr.To(true),
				Image: dc.Spec.Image}}}
		Expect(k8s.Status().Update(ctx, pod)).To(Succeed())
		podUID := pod.UID
		Eventually(condition(ctx)).Should(Equal([]string{"True", "BelowThreshold", "1 measured members are below 80% full"}))
		Eventually(sizes(ctx)).Should(Equal([]string{"1Gi", "1Gi"}))
		sts := &appsv1.StatefulSet{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), sts)).To(Succeed())

		By("90% full: the claim grows by 20% and the driver expands it; the pod and the StatefulSet stay")
		began := time.Now()
		used.Store(900)
		Eventually(sizes(ctx)).Should(Equal([]string{"1229Mi", "1229Mi"}))
		AddReportEntry("auto-grow: 90% full → capacity 1229Mi (usage is measured every "+measureInterval.String()+" here)",
			time.Since(began).Round(time.Second).String())
		Eventually(condition(ctx)).Should(HaveExactElements("True", "Growing",
			HavePrefix("claim data-grow-0 is 90% full and grows again after ")))
		Consistently(sizes(ctx), 5*time.Second).Should(Equal([]string{"1229Mi", "1229Mi"}), "not again within minIntervalSeconds")
		Eventually(func() []string { return events(ctx) }).Should(Equal(
			[]string{"Normal StorageGrown: Grew claim data-grow-0 from 1Gi to 1229Mi: used 90% >= threshold 80%"}))

		By("after minIntervalSeconds the last growth stops at maxSize, and the cluster says it is at maxSize")
		Eventually(sizes(ctx), 2*time.Minute, time.Second).Should(Equal([]string{"1400Mi", "1400Mi"}))
		Eventually(condition(ctx)).Should(Equal([]string{"False", "AtMaxSize", "claim data-grow-0 is at maxSize 1400Mi and 90% full"}))
		Eventually(func() []string { return events(ctx) }).Should(ConsistOf(
			"Normal StorageGrown: Grew claim data-grow-0 from 1Gi to 1229Mi: used 90% >= threshold 80%",
			"Normal StorageGrown: Grew claim data-grow-0 from 1229Mi to 1400Mi: used 90% >= threshold 80%",
			"Warning AtMaxSize: Claim data-grow-0 is at maxSize 1400Mi and 90% full"))
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		Expect(pod.UID).To(Equal(podUID), "the pod keeps running")
		current := &appsv1.StatefulSet{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), current)).To(Succeed())
		Expect(current.UID).To(Equal(sts.UID), "the StatefulSet is not replaced: its claim template stays at spec.storage.size")
		Expect(dc.Spec.Storage.Size).To(Equal("1Gi"), "the spec is left as written")
	})
})
