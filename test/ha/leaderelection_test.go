//go:build e2e

/*
Copyright 2026 The database-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package ha

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// Two managers run at a time, as a Deployment with 2 replicas would; the Lease decides which
// one reconciles. The leader is stopped gracefully (the Lease is released and the other one
// takes over at its next retry), then a new manager joins and the leader is killed (the other
// one takes over once the Lease expires). Each time the DatabaseCluster is changed while no
// manager leads, and the change converges without a duplicated child.
var _ = Describe("Leader election between manager replicas", Ordered, func() {
	const ns = "ha"
	dc := &databasev1alpha1.DatabaseCluster{}
	var leader, follower *managerProcess
	var leaderID string

	AfterEach(func() {
		if CurrentSpecReport().Failed() {
			printManagerLogs()
		}
	})

	BeforeAll(func(ctx SpecContext) {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	})

	It("elects one leader among two managers, and only the leader reconciles and writes", func(ctx SpecContext) {
		began := time.Now()
		a := startManager(ctx, "a")
		b := startManager(ctx, "b")
		hostname, err := os.Hostname()
		Expect(err).NotTo(HaveOccurred())

		// controller-runtime's identity is hostname_uuid; both managers share the hostname, so
		// the holder is told apart by the one that logs the acquisition (only one can).
		Eventually(func(g Gomega) {
			lease := getLease(g, ctx)
			g.Expect(lease.Spec.HolderIdentity).NotTo(BeNil())
			leaderID = *lease.Spec.HolderIdentity
			g.Expect(leaderID).To(HavePrefix(hostname + "_"))
			g.Expect(ptr.Deref(lease.Spec.LeaseDurationSeconds, 0)).To(Equal(int32(leaseDuration.Seconds())))
			acquired := []bool{a.logged(msgAcquiredLease), b.logged(msgAcquiredLease)}
			g.Expect(acquired).To(ConsistOf(true, false), "exactly one manager acquired the Lease")
			if acquired[0] {
				leader, follower = a, b
			} else {
				leader, follower = b, a
			}
			g.Expect(leader.reconciling()).To(BeTrue(), "the leader started the databasecluster workers")
			g.Expect(follower.logged(msgAttemptingLease)).To(BeTrue(), "the follower waits for the Lease")
		}).WithContext(ctx).Should(Succeed())
		AddReportEntry("two managers started → one leads", time.Since(began).Round(time.Millisecond).String())
		GinkgoWriter.Printf("leader: manager %s (%s); follower: manager %s\n", leader.name, leaderID, follower.name)

		sample, err := os.ReadFile(filepath.Join("..", "..", "config", "samples", "database_v1alpha1_databasecluster.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(yaml.UnmarshalStrict(sample, dc)).To(Succeed())
		dc.Namespace = ns
		began = time.Now()
		Expect(k8s.Create(ctx, dc)).To(Succeed())
		expectConverged(ctx, dc, 3)
		AddReportEntry("create → Available (3 pods) under the leader", time.Since(began).Round(time.Millisecond).String())

		// The follower never started a controller, never reconciled and never changed anything
		// in the API server; the leader did all of it.
		for _, msg := range []string{msgStartingCtrl, msgStartingWorkers, msgAcquiredLease} {
			Expect(leader.logged(msg)).To(BeTrue(), "the leader logged %q", msg)
			Expect(follower.logged(msg)).To(BeFalse(), "the follower logged %q", msg)
		}
		followerMetrics, leaderMetrics := follower.metrics(Default), leader.metrics(Default)
		Expect(sumMetric(followerMetrics, "leader_election_master_status")).To(BeZero())
		Expect(sumMetric(leaderMetrics, "leader_election_master_status")).To(Equal(1.0))
		Expect(sumMetric(followerMetrics, "controller_runtime_reconcile_total")).To(BeZero())
		Expect(sumMetric(leaderMetrics, "controller_runtime_reconcile_total", `controller="databasecluster"`)).To(BeNumerically(">", 0))
		Expect(follower.successfulWrites(Default)).To(BeZero(), "the follower wrote to the API server")
		Expect(leader.successfulWrites(Default)).To(BeNumerically(">", 0))
		Expect(ptr.Deref(getLease(Default, ctx).Spec.HolderIdentity, "")).To(Equal(leaderID), "the leadership did not move")
	}, NodeTimeout(3*time.Minute))

	It("hands off at once when the leader stops gracefully (SIGTERM releases the Lease)", func(ctx SpecContext) {
		transitions := ptr.Deref(getLease(Default, ctx).Spec.LeaseTransitions, 0)
		h := measureFailover(ctx, leader, follower, leaderID, syscall.SIGTERM,
			func() { scaleTo(ctx, dc, 4) }, func() bool { return statefulSetReplicas(ctx, dc) == 4 })
		Expect(leader.waitExit(30*time.Second)).To(Succeed(), "the leader exits 0 on SIGTERM")
		AddReportEntry("graceful hand-off (SIGTERM → new leader reconciling)", h.String())

		Expect(h.changedInGap).To(BeTrue(), "replicas 3 → 4 was patched before the new leader reconciled")
		Expect(h.appliedEarly).To(BeFalse(), "the stopped leader applied replicas 3 → 4")
		// Without the release the follower would wait for the Lease to expire (15s).
		Expect(h.total).To(BeNumerically("<", leaseDuration-5*time.Second), "the released Lease is taken at the next retry")
		Expect(ptr.Deref(getLease(Default, ctx).Spec.LeaseTransitions, 0)).To(BeNumerically(">", transitions))

		began := time.Now()
		expectConverged(ctx, dc, 4)
		AddReportEntry("replicas 3 → 4 (changed during the hand-off) Available", time.Since(began).Round(time.Millisecond).String())
		leader, leaderID = follower, h.newHolder
	}, NodeTimeout(3*time.Minute))

	It("takes over once the Lease expires when the leader is killed (SIGKILL)", func(ctx SpecContext) {
		c := startManager(ctx, "c")
		Eventually(func(g Gomega) {
			g.Expect(c.logged(msgAttemptingLease)).To(BeTrue())
		}).WithContext(ctx).Should(Succeed())
		follower = c
		Expect(follower.reconciling()).To(BeFalse())
		Expect(follower.successfulWrites(Default)).To(BeZero(), "the new follower wrote to the API server")
		Expect(ptr.Deref(getLease(Default, ctx).Spec.HolderIdentity, "")).To(Equal(leaderID))

		h := measureFailover(ctx, leader, follower, leaderID, syscall.SIGKILL,
			func() { scaleTo(ctx, dc, 2) }, func() bool { return statefulSetReplicas(ctx, dc) == 2 })
		Expect(leader.waitExit(30 * time.Second)).To(MatchError(ContainSubstring("killed")))
		AddReportEntry("crash takeover (SIGKILL → new leader reconciling)", h.String())

		Expect(h.changedInGap).To(BeTrue(), "replicas 4 → 2 was patched before the new leader reconciled")
		Expect(h.appliedEarly).To(BeFalse(), "replicas 4 → 2 was applied while no manager led")
		// The follower waits until it has seen the Lease unrenewed for its whole duration: at
		// least leaseDuration minus one (jittered) retry period after the kill; never two leaders.
		Expect(h.total).To(BeNumerically(">=", leaseDuration-5*time.Second), "the follower waited for the Lease to expire")
		Expect(h.total).To(BeNumerically("<", leaseDuration+15*time.Second))

		began := time.Now()
		expectConverged(ctx, dc, 2)
		AddReportEntry("replicas 4 → 2 (changed during the takeover) Available", time.Since(began).Round(time.Millisecond).String())
		leader, leaderID = follower, h.newHolder
		Expect(sumMetric(leader.metrics(Default), "leader_election_master_status")).To(Equal(1.0))
	}, NodeTimeout(3*time.Minute))
})

// failover is what measureFailover saw.
type failover struct {
	total        time.Duration // signal → the new holder is in the Lease and its workers started
	leaseMoved   time.Duration // signal → the Lease names the new holder
	workers      time.Duration // signal → the new leader logged "Starting workers" (databasecluster)
	changed      time.Duration // signal → the change made in the gap was accepted
	changedInGap bool          // the change was made before the new leader reconciled
	appliedEarly bool          // the change reached the StatefulSet before the new leader reconciled
	newHolder    string
}

func (f failover) String() string {
	return fmt.Sprintf("%s (Lease moved after %s, workers started after %s; change made after %s)",
		f.total.Round(time.Millisecond), f.leaseMoved.Round(time.Millisecond),
		f.workers.Round(time.Millisecond), f.changed.Round(time.Millisecond))
}

// measureFailover sends sig to the leader and measures how long the follower takes to hold the
// Lease and start reconciling. change runs once no manager leads any more: as soon as the old
// leader released the Lease or exited. applied tells whether the change reached the children;
// it must not before the new leader reconciles.
func measureFailover(ctx context.Context, leader, follower *managerProcess, leaderID string,
	sig syscall.Signal, change func(), applied func() bool) failover {
	var f failover
	began := time.Now()
	leader.signal(sig)
	deadline := began.Add(leaseDuration + 30*time.Second)
	for f.leaseMoved == 0 || f.workers == 0 {
		Expect(time.Now().Before(deadline)).To(BeTrue(), "no new leader %s after the %s", time.Since(began), sig)
		Expect(follower.running()).To(BeTrue(), "the follower exited: %v", follower.exitErr)
		holder := ptr.Deref(getLease(Default, ctx).Spec.HolderIdentity, "")
		if f.changed == 0 && (holder != leaderID || !leader.running()) {
			change()
			f.changed = time.Since(began)
			f.changedInGap = !follower.reconciling()
		}
		if f.leaseMoved == 0 && holder != "" && holder != leaderID {
			f.leaseMoved, f.newHolder = time.Since(began), holder
		}
		// Read the children before the log: the workers start before anything is applied.
		appliedNow := f.changed != 0 && applied()
		if f.workers == 0 && follower.reconciling() {
			f.workers = time.Since(began)
		}
		if appliedNow && f.workers == 0 {
			f.appliedEarly = true
		}
		time.Sleep(20 * time.Millisecond)
	}
	f.total = max(f.leaseMoved, f.workers)
	Expect(follower.logged(msgAcquiredLease)).To(BeTrue(), "the new holder is the follower")
	return f
}

func getLease(g Gomega, ctx context.Context) *coordinationv1.Lease {
	lease := &coordinationv1.Lease{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: leaseNamespace, Name: leaseName}, lease)).To(Succeed())
	return lease
}

// statefulSetReplicas is spec.replicas of the cluster's StatefulSet.
func statefulSetReplicas(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) int32 {
	sts := &appsv1.StatefulSet{}
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: dc.StatefulSetName()}, sts)).To(Succeed())
	return ptr.Deref(sts.Spec.Replicas, 0)
}

func scaleTo(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, replicas int32) {
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
	patch := client.MergeFrom(dc.DeepCopy())
	dc.Spec.Replicas = ptr.To(replicas)
	Expect(k8s.Patch(ctx, dc, patch)).To(Succeed())
}

// expectConverged waits until the cluster is Available with replicas Ready pods, and checks
// that its namespace holds exactly one StatefulSet, the two Services and one
// PodDisruptionBudget, each controlled by it.
func expectConverged(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, replicas int32) {
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		g.Expect(dc.Status.ObservedGeneration).To(Equal(dc.Generation))
		available := meta.FindStatusCondition(dc.Status.Conditions, databasev1alpha1.ConditionAvailable)
		g.Expect(available).NotTo(BeNil())
		g.Expect(available.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(available.Message).To(Equal(fmt.Sprintf("%d/%d replicas are ready", replicas, replicas)))
		g.Expect(dc.Status.ReadyReplicas).To(Equal(replicas))

		var statefulSets appsv1.StatefulSetList
		g.Expect(k8s.List(ctx, &statefulSets, client.InNamespace(dc.Namespace))).To(Succeed())
		g.Expect(names(statefulSets.Items)).To(ConsistOf(dc.StatefulSetName()))
		g.Expect(statefulSets.Items[0].Spec.Replicas).To(HaveValue(Equal(replicas)))
		controlledByCluster(g, dc, &statefulSets.Items[0])

		var services corev1.ServiceList
		g.Expect(k8s.List(ctx, &services, client.InNamespace(dc.Namespace))).To(Succeed())
		g.Expect(names(services.Items)).To(ConsistOf(dc.ClientServiceName(), dc.HeadlessServiceName()))
		for i := range services.Items {
			controlledByCluster(g, dc, &services.Items[i])
		}

		var budgets policyv1.PodDisruptionBudgetList
		g.Expect(k8s.List(ctx, &budgets, client.InNamespace(dc.Namespace))).To(Succeed())
		g.Expect(names(budgets.Items)).To(ConsistOf(dc.PodDisruptionBudgetName()))
		controlledByCluster(g, dc, &budgets.Items[0])

		var pods corev1.PodList
		g.Expect(k8s.List(ctx, &pods, client.InNamespace(dc.Namespace))).To(Succeed())
		var ready []string
		for _, pod := range pods.Items {
			g.Expect(pod.DeletionTimestamp).To(BeNil(), "pod %s is going away", pod.Name)
			for _, c := range pod.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
					ready = append(ready, pod.Name)
				}
			}
		}
		var want []string
		for i := range replicas {
			want = append(want, fmt.Sprintf("%s-%d", dc.StatefulSetName(), i))
		}
		g.Expect(ready).To(ConsistOf(want))
		g.Expect(pods.Items).To(HaveLen(int(replicas)))
	}).WithContext(ctx).Should(Succeed())
}

func controlledByCluster(g Gomega, dc *databasev1alpha1.DatabaseCluster, obj metav1.Object) {
	owner := metav1.GetControllerOf(obj)
	g.Expect(owner).NotTo(BeNil(), "%s has no controller", obj.GetName())
	g.Expect(owner.UID).To(Equal(dc.UID), "%s is controlled by %s/%s", obj.GetName(), owner.Kind, owner.Name)
}

func names[T any, PT interface {
	*T
	metav1.Object
}](items []T) []string {
	var out []string
	for i := range items {
		out = append(out, PT(&items[i]).GetName())
	}
	slices.Sort(out)
	return out
}
