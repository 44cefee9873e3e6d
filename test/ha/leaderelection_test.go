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
	"github.com/seed1b407122/database-operator/test/harness/leader"
)

// Two managers run at a time, as a Deployment with 2 replicas would; the Lease decides which
// one reconciles. The leader is stopped gracefully (the Lease is released and the other one
// takes over at its next retry), then a new manager joins and the leader is killed (the other
// one takes over once the Lease expires). Each time the DatabaseCluster is changed while no
// manager leads, and the change converges without a duplicated child.
var _ = Describe("Leader election between manager replicas", Ordered, func() {
	const ns = "ha"
	dc := &databasev1alpha1.DatabaseCluster{}
	// lead holds the Lease (its identity is leadID); follower waits for it.
	var lead, follower *leader.Manager
	var leadID string

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

		lead, leadID, err = leader.FindLeader(ctx, k8s, []*leader.Manager{a, b}, 2*time.Minute)
		Expect(err).NotTo(HaveOccurred())
		follower = a
		if lead == a {
			follower = b
		}
		// controller-runtime's identity is hostname_uuid; both managers share the hostname, so
		// FindLeader tells the holder apart by the one that logs the acquisition (only one can).
		Eventually(func(g Gomega) {
			lease, err := leader.GetLease(ctx, k8s)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(lease.Spec.HolderIdentity).To(HaveValue(Equal(leadID)))
			g.Expect(leadID).To(HavePrefix(hostname + "_"))
			g.Expect(ptr.Deref(lease.Spec.LeaseDurationSeconds, 0)).To(Equal(int32(leader.LeaseDuration.Seconds())))
			acquired := []bool{a.Logged(leader.MsgAcquiredLease), b.Logged(leader.MsgAcquiredLease)}
			g.Expect(acquired).To(ConsistOf(true, false), "exactly one manager acquired the Lease")
			g.Expect(lead.Reconciling()).To(BeTrue(), "the leader started the databasecluster workers")
			g.Expect(follower.Logged(leader.MsgAttemptingLease)).To(BeTrue(), "the follower waits for the Lease")
		}).WithContext(ctx).Should(Succeed())
		AddReportEntry("two managers started → one leads", time.Since(began).Round(time.Millisecond).String())
		GinkgoWriter.Printf("leader: manager %s (%s); follower: manager %s\n", lead.Name, leadID, follower.Name)

		sample, err := os.ReadFile(filepath.Join("..", "..", "config", "samples", "database_v1alpha1_databasecluster_etcd.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(yaml.UnmarshalStrict(sample, dc)).To(Succeed())
		dc.Namespace = ns
		began = time.Now()
		Expect(k8s.Create(ctx, dc)).To(Succeed())
		expectConverged(ctx, dc, 3)
		AddReportEntry("create → Available (3 pods) under the leader", time.Since(began).Round(time.Millisecond).String())

		// The follower never started a controller, never reconciled and never changed anything
		// in the API server; the leader did all of it.
		for _, msg := range []string{leader.MsgStartingCtrl, leader.MsgStartingWorkers, leader.MsgAcquiredLease} {
			Expect(lead.Logged(msg)).To(BeTrue(), "the leader logged %q", msg)
			Expect(follower.Logged(msg)).To(BeFalse(), "the follower logged %q", msg)
		}
		followerMetrics, leaderMetrics := metrics(Default, follower), metrics(Default, lead)
		Expect(sumMetric(followerMetrics, "leader_election_master_status")).To(BeZero())
		Expect(sumMetric(leaderMetrics, "leader_election_master_status")).To(Equal(1.0))
		Expect(sumMetric(followerMetrics, "controller_runtime_reconcile_total")).To(BeZero())
		Expect(sumMetric(leaderMetrics, "controller_runtime_reconcile_total", `controller="databasecluster"`)).To(BeNumerically(">", 0))
		Expect(successfulWrites(Default, follower)).To(BeZero(), "the follower wrote to the API server")
		Expect(successfulWrites(Default, lead)).To(BeNumerically(">", 0))
		Expect(leader.Holder(ctx, k8s)).To(Equal(leadID), "the leadership did not move")
	}, NodeTimeout(3*time.Minute))

	It("hands off at once when the leader stops gracefully (SIGTERM releases the Lease)", func(ctx SpecContext) {
		transitions := ptr.Deref(getLease(ctx).Spec.LeaseTransitions, 0)
		h := measureFailover(ctx, lead, leadID, follower, syscall.SIGTERM, leader.ScaleChange(k8s, client.ObjectKeyFromObject(dc), 4))
		Expect(lead.WaitExit(30*time.Second)).To(Succeed(), "the leader exits 0 on SIGTERM")
		AddReportEntry("graceful hand-off (SIGTERM → new leader applied a change)", h.String())

		// The follower waits on a watch of the Lease (controllers/leaderlock): it may lead before
		// the change is even made, so only who applied it is asserted here.
		AddReportEntry("replicas 3 → 4 patched while nobody led", h.ChangedInGap)
		Expect(h.AppliedEarly).To(BeFalse(), "the stopped leader applied replicas 3 → 4")
		// Without the release the follower would wait for the Lease to expire (15s).
		Expect(h.Total).To(BeNumerically("<", leader.LeaseDuration-5*time.Second), "the released Lease is taken at the next retry")
		Expect(ptr.Deref(getLease(ctx).Spec.LeaseTransitions, 0)).To(BeNumerically(">", transitions))

		began := time.Now()
		expectConverged(ctx, dc, 4)
		AddReportEntry("replicas 3 → 4 (changed during the hand-off) Available", time.Since(began).Round(time.Millisecond).String())
		lead, leadID = follower, h.NewHolder
	}, NodeTimeout(3*time.Minute))

	It("takes over once the Lease expires when the leader is killed (SIGKILL)", func(ctx SpecContext) {
		c := startManager(ctx, "c")
		Expect(c.WaitLogged(ctx, 2*time.Minute, leader.MsgAttemptingLease)).To(Succeed())
		follower = c
		Expect(follower.Reconciling()).To(BeFalse())
		Expect(successfulWrites(Default, follower)).To(BeZero(), "the new follower wrote to the API server")
		Expect(leader.Holder(ctx, k8s)).To(Equal(leadID))

		h := measureFailover(ctx, lead, leadID, follower, syscall.SIGKILL, leader.ScaleChange(k8s, client.ObjectKeyFromObject(dc), 2))
		Expect(lead.WaitExit(30 * time.Second)).To(MatchError(ContainSubstring("killed")))
		AddReportEntry("crash takeover (SIGKILL → new leader applied a change)", h.String())

		Expect(h.ChangedInGap).To(BeTrue(), "replicas 4 → 2 was patched before the new leader reconciled")
		Expect(h.AppliedEarly).To(BeFalse(), "replicas 4 → 2 was applied while no manager led")
		// The follower waits until it has seen the Lease unrenewed for its whole duration: at
		// least leaseDuration minus one (jittered) retry period after the kill; never two leaders.
		Expect(h.LeaseMoved).To(BeNumerically(">=", leader.LeaseDuration-5*time.Second), "the follower waited for the Lease to expire")
		Expect(h.Total).To(BeNumerically("<", leader.LeaseDuration+15*time.Second))

		began := time.Now()
		expectConverged(ctx, dc, 2)
		AddReportEntry("replicas 4 → 2 (changed during the takeover) Available", time.Since(began).Round(time.Millisecond).String())
		lead, leadID = follower, h.NewHolder
		Expect(sumMetric(metrics(Default, lead), "leader_election_master_status")).To(Equal(1.0))
	}, NodeTimeout(3*time.Minute))
})

// measureFailover sends sig to the leader and measures (test/harness/leader) how long until the
// follower holds the Lease and has applied change, which is made once no manager leads any more.
func measureFailover(ctx context.Context, lead *leader.Manager, leadID string, follower *leader.Manager,
	sig syscall.Signal, change leader.Change) leader.Failover {
	h, err := leader.Measure(ctx, leader.Stop{
		Client: k8s, Leader: lead, LeaderID: leadID, Followers: []*leader.Manager{follower}, Signal: sig, Change: change,
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(h.NewLeader).To(BeIdenticalTo(follower), "the new holder is the follower")
	Expect(h.NewHolder).NotTo(Equal(leadID))
	return h
}

func getLease(ctx context.Context) *coordinationv1.Lease {
	lease, err := leader.GetLease(ctx, k8s)
	Expect(err).NotTo(HaveOccurred())
	return lease
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
