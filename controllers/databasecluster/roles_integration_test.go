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
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/certs"
	"github.com/seed1b407122/database-operator/controllers/memberagent"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// memberAgents are the member agents of the specs' pods, by pod name: the real agent server
// (memberagent.Serve, mutual TLS) on 127.0.0.1 in front of a simulated engine, since envtest's
// pods run nothing.
type memberAgents struct {
	mu    sync.Mutex
	addrs map[string]string
}

// serve starts the agent of member pod with engine and the serving pair until the spec ends.
func (a *memberAgents) serve(pod string, engine memberagent.Engine, caPEM []byte, serving certs.Pair) {
	cfg, err := memberagent.ServerConfig(caPEM, serving.CertPEM, serving.KeyPEM)
	Expect(err).NotTo(HaveOccurred())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = memberagent.Serve(ctx, l, engine, cfg) }()
	DeferCleanup(cancel)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.addrs[pod] = l.Addr().String()
}

// refuse makes member pod's agent an address where nothing listens: an agent that does not
// answer (a frozen or isolated member).
func (a *memberAgents) refuse(pod string) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	Expect(l.Close()).To(Succeed())
	a.mu.Lock()
	defer a.mu.Unlock()
	a.addrs[pod] = l.Addr().String()
}

func (a *memberAgents) address(pod *corev1.Pod) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.addrs[pod.Name]
}

// runningMember makes the Ready, Running pod of ordinal of dc, of the StatefulSet's revision
// (none: no revision label): envtest has no StatefulSet controller.
func runningMember(ctx SpecContext, c client.Client, dc *databasev1alpha1.DatabaseCluster, sts *appsv1.StatefulSet, ordinal int,
	revision ...string,
) {
	labels := dc.Labels()
	if len(revision) > 0 {
		labels[appsv1.ControllerRevisionHashLabelKey] = revision[0]
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: dc.Name + "-" + strconv.Itoa(ordinal), Namespace: dc.Namespace, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(sts, appsv1.SchemeGroupVersion.WithKind("StatefulSet"))}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "database", Image: dc.Spec.Image}}},
	}
	Expect(c.Create(ctx, pod)).To(Succeed())
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0." + strconv.Itoa(ordinal+1), Conditions: []corev1.PodCondition{
		{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}}
	Expect(c.Status().Update(ctx, pod)).To(Succeed())
}

// withAgents sets up the DatabaseCluster controller reading its members through the agents of
// agents, every 200 ms.
func withAgents(agents *memberAgents) func(ctrl.Manager) error {
	return func(mgr ctrl.Manager) error {
		return (&Reconciler{ReconcilerBase: testenv.ReconcilerBase(mgr), PodReadyTimeout: podReadyTimeout,
			Members: &AgentMembers{APIReader: mgr.GetAPIReader(), Address: agents.address}, ObserveInterval: 200 * time.Millisecond}).SetupWithManager(mgr)
	}
}

// clusterKind is the specs' view of DatabaseClusters and their StatefulSets in k8s.
func clusterKind(k8s *testenv.Env) testenv.Kind[*databasev1alpha1.DatabaseCluster, *appsv1.StatefulSet] {
	return testenv.Kind[*databasev1alpha1.DatabaseCluster, *appsv1.StatefulSet]{
		Env: k8s, Name: "DatabaseCluster", ChildName: (*databasev1alpha1.DatabaseCluster).StatefulSetName,
	}
}

// The envtest specs of the roles phase: the operator reads each member through its agent over
// mutual TLS and publishes the roles in the pods' labels and the status.
var _ = Describe("DatabaseCluster roles", Ordered, Label("integration"), func() {
	agents := &memberAgents{addrs: map[string]string{}}
	k8s := testenv.StartInBeforeAll(withAgents(agents))
	clusters := clusterKind(k8s)
	roleLabels := func(ctx SpecContext, ns string) func(Gomega) map[string]string {
		return func(g Gomega) map[string]string {
			var pods corev1.PodList
			g.Expect(k8s.List(ctx, &pods, client.InNamespace(ns))).To(Succeed())
			out := map[string]string{}
			for _, p := range pods.Items {
				out[p.Name] = p.Labels[databasev1alpha1.RoleLabel]
			}
			return out
		}
	}
	published := func(ctx SpecContext, dc *databasev1alpha1.DatabaseCluster) func(Gomega) []any {
		return func(g Gomega) []any {
			cur := clusters.Current(ctx, dc)(g)
			return []any{cur.Status.CurrentPrimary, cur.Status.Members}
		}
	}
	status := func(name string, role databasev1alpha1.MemberRole, position string) databasev1alpha1.MemberStatus {
		return databasev1alpha1.MemberStatus{Name: name, Role: role, Position: position}
	}

	It("publishes the roles the agents report, follows a role change, and routes no writes in a split brain", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "dbc-")), withEngine(databasev1alpha1.EngineEtcd))
		dc.Spec.TLS = &databasev1alpha1.TLSSpec{}
		sts := clusters.Create(ctx, dc)
		secret := &corev1.Secret{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: dc.CASecretName()}, secret)).To(Succeed())
		ca, err := certs.PairFromSecretData(secret.Data)
		Expect(err).NotTo(HaveOccurred())
		impostorCA, err := certs.NewCA("impostor", time.Now())
		Expect(err).NotTo(HaveOccurred())

		engines := []*memberagent.SimEngine{
			memberagent.NewSimEngine("db-0", memberagent.RolePrimary),
			memberagent.NewSimEngine("db-1", memberagent.RoleReplica),
			memberagent.NewSimEngine("db-2", memberagent.RoleReplica),
		}
		engines[0].Advance(300)
		engines[1].Advance(200)
		for i, engine := range engines {
			name := "db-" + strconv.Itoa(i)
			issuer := ca
			if i == 2 {
				issuer = impostorCA // an agent the cluster's CA did not certify is not believed
			}
			serving, err := certs.NewServing(issuer, []string{memberDNSName(dc, name)}, time.Now())
			Expect(err).NotTo(HaveOccurred())
			agents.serve(name, engine, ca.CertPEM, serving)
			runningMember(ctx, k8s, dc, sts, i)
		}
		ns := dc.Namespace
		Eventually(roleLabels(ctx, ns)).Should(Equal(map[string]string{"db-0": "primary", "db-1": "replica", "db-2": ""}))
		Eventually(published(ctx, dc)).Should(Equal([]any{"db-0", []databasev1alpha1.MemberStatus{
			status("db-0", "primary", "300"), status("db-1", "replica", "200"), status("db-2", "unknown", ""),
		}}))

		By("a role change the database made: db-1 is the primary")
		Expect(engines[0].AddMember(ctx, "db-1", peerURL(dc, "db-1"))).To(Succeed())
		Expect(engines[0].TransferLeadership(ctx, "db-1")).To(Succeed())
		Expect(engines[1].Promote(ctx)).To(Succeed())
		Eventually(roleLabels(ctx, ns)).Should(Equal(map[string]string{"db-0": "replica", "db-1": "primary", "db-2": ""}))
		Eventually(published(ctx, dc)).Should(HaveExactElements("db-1", HaveLen(3)))
		Eventually(k8s.Condition(ctx, dc, "Degraded")).Should(Equal([]string{"False", "AsExpected", "every child is as specified"}))

		By("a split brain: db-0 claims the role too")
		Expect(engines[0].Promote(ctx)).To(Succeed())
		Eventually(roleLabels(ctx, ns)).Should(Equal(map[string]string{"db-0": "", "db-1": "", "db-2": ""}))
		Eventually(k8s.Condition(ctx, dc, "Degraded")).Should(Equal([]string{"True", "SplitBrain",
			"db-0 and db-1 each report themselves primary: no member is routed to for writes (db-rw) until one of them steps down"}))
		Expect(published(ctx, dc)(Default)[0]).To(Equal("db-1"), "the status keeps the last primary observed alone")

		By("db-0 steps down")
		Expect(engines[0].AddMember(ctx, "db-1", peerURL(dc, "db-1"))).To(Succeed())
		Expect(engines[0].TransferLeadership(ctx, "db-1")).To(Succeed())
		Eventually(roleLabels(ctx, ns)).Should(Equal(map[string]string{"db-0": "replica", "db-1": "primary", "db-2": ""}))
		Eventually(k8s.Condition(ctx, dc, "Degraded")).Should(Equal([]string{"False", "AsExpected", "every child is as specified"}))
	})
})

// startMembers serves the agents of dc's members db-0..db-2 with the engines of sims, certified by
// the cluster's CA, and makes their pods Running and Ready at revision.
func startMembers(ctx SpecContext, c client.Client, agents *memberAgents, dc *databasev1alpha1.DatabaseCluster, sts *appsv1.StatefulSet,
	engines map[string]memberagent.Engine, revision string,
) {
	for i := range len(engines) {
		startMember(ctx, c, agents, dc, sts, i, engines[dc.Name+"-"+strconv.Itoa(i)], revision)
	}
}

// startMember starts the agent of member ordinal in front of engine, with a serving certificate
// of dc's CA, and makes its Ready, Running pod.
func startMember(ctx SpecContext, c client.Client, agents *memberAgents, dc *databasev1alpha1.DatabaseCluster, sts *appsv1.StatefulSet,
	ordinal int, engine memberagent.Engine, revision string,
) {
	secret := &corev1.Secret{}
	Eventually(func() error {
		return c.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: dc.CASecretName()}, secret)
	}).Should(Succeed())
	ca, err := certs.PairFromSecretData(secret.Data)
	Expect(err).NotTo(HaveOccurred())
	name := dc.Name + "-" + strconv.Itoa(ordinal)
	serving, err := certs.NewServing(ca, []string{memberDNSName(dc, name)}, time.Now())
	Expect(err).NotTo(HaveOccurred())
	agents.serve(name, engine, ca.CertPEM, serving)
	runningMember(ctx, c, dc, sts, ordinal, revision)
}

// setRevisions writes the StatefulSet status envtest's missing controller would: 3 Ready
// replicas, at current and update revisions.
func setRevisions(ctx SpecContext, c client.Client, sts *appsv1.StatefulSet, current, update string) {
	Eventually(func(g Gomega) {
		cur := &appsv1.StatefulSet{}
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(sts), cur)).To(Succeed())
		cur.Status.Replicas, cur.Status.ReadyReplicas = 3, 3
		cur.Status.CurrentRevision, cur.Status.UpdateRevision = current, update
		cur.Status.ObservedGeneration = cur.Generation
		g.Expect(c.Status().Update(ctx, cur)).To(Succeed())
	}).Should(Succeed())
}

var _ = Describe("DatabaseCluster ordered updates", Ordered, Label("integration"), func() {
	agents := &memberAgents{addrs: map[string]string{}}
	k8s := testenv.StartInBeforeAll(withAgents(agents))
	clusters := clusterKind(k8s)

	It("updates an etcd's replicas first, one at a time, then moves the leadership once and updates the old leader last", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "dbc-")), withEngine(databasev1alpha1.EngineEtcd))
		sts := clusters.Create(ctx, dc)
		Expect(sts.Spec.UpdateStrategy.Type).To(Equal(appsv1.OnDeleteStatefulSetStrategyType), "the operator orders the deletions")
		sims := map[string]*memberagent.SimEngine{"db-0": memberagent.NewSimEngine("db-0", memberagent.RolePrimary),
			"db-1": memberagent.NewSimEngine("db-1", memberagent.RoleReplica), "db-2": memberagent.NewSimEngine("db-2", memberagent.RoleReplica)}
		sims["db-0"].Advance(300)
		sims["db-1"].Advance(280)
		sims["db-2"].Advance(290)
		transfers := &atomic.Int32{}
		engines := map[string]memberagent.Engine{}
		for name, sim := range sims {
			engines[name] = memberagent.LeaderSim{SimEngine: sim, Sims: sims, Transfers: transfers}
		}
		startMembers(ctx, k8s, agents, dc, sts, engines, "r1")
		setRevisions(ctx, k8s, sts, "r1", "r1")
		Eventually(func(g Gomega) string { return clusters.Current(ctx, dc)(g).Status.CurrentPrimary }).Should(Equal("db-0"))

		By("a new template: revision r2")
		setRevisions(ctx, k8s, sts, "r1", "r2")
		// The StatefulSet controller's part, which envtest lacks: a deleted pod comes back at the
		// update revision. The order of the deletions is the operator's.
		var deleted []string
		Eventually(func(g Gomega) []string {
			var pods corev1.PodList
			g.Expect(k8s.List(ctx, &pods, client.InNamespace(dc.Namespace))).To(Succeed())
			present := map[string]bool{}
			for _, p := range pods.Items {
				present[p.Name] = true
			}
			for i := range 3 {
				if name := "db-" + strconv.Itoa(i); !present[name] {
					deleted = append(deleted, name)
					runningMember(ctx, k8s, dc, sts, i, "r2")
				}
			}
			return deleted
		}).WithTimeout(30 * time.Second).Should(HaveLen(3))
		Expect(deleted).To(Equal([]string{"db-2", "db-1", "db-0"}), "replicas first, highest ordinal first, the old leader last")
		Expect(transfers.Load()).To(Equal(int32(1)), "exactly one leadership change")
		Eventually(func(g Gomega) string { return clusters.Current(ctx, dc)(g).Status.CurrentPrimary }).Should(Equal("db-2"),
			"the most advanced updated replica took over")
		Eventually(func(g Gomega) []string {
			return k8s.EventsAbout(ctx, "DatabaseCluster", dc, testenv.TypeReasonNote)(g)
		}).Should(ContainElements(
			ContainSubstring("SwitchoverDone: db-2 is the only primary (from db-0, Update)"),
			ContainSubstring("Switchover: Moved the leadership from db-0 to db-2"),
		))
		Expect(clusters.Current(ctx, dc)(Default).Status.Switchover).To(BeNil())
	})

	It("switches over on request to the member named, and refuses one that is not a healthy replica", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "dbc-")), withEngine(databasev1alpha1.EngineEtcd))
		sts := clusters.Create(ctx, dc)
		sims := map[string]*memberagent.SimEngine{"db-0": memberagent.NewSimEngine("db-0", memberagent.RolePrimary),
			"db-1": memberagent.NewSimEngine("db-1", memberagent.RoleReplica), "db-2": memberagent.NewSimEngine("db-2", memberagent.RoleReplica)}
		transfers := &atomic.Int32{}
		engines := map[string]memberagent.Engine{}
		for name, sim := range sims {
			engines[name] = memberagent.LeaderSim{SimEngine: sim, Sims: sims, Transfers: transfers}
		}
		startMembers(ctx, k8s, agents, dc, sts, engines, "r1")
		setRevisions(ctx, k8s, sts, "r1", "r1")
		Eventually(func(g Gomega) string { return clusters.Current(ctx, dc)(g).Status.CurrentPrimary }).Should(Equal("db-0"))
		annotate := func(to string) {
			clusters.Update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) {
				dc.Annotations = map[string]string{databasev1alpha1.SwitchoverAnnotation: to}
			})
		}
		annotationGone := func(g Gomega) bool {
			_, ok := clusters.Current(ctx, dc)(g).Annotations[databasev1alpha1.SwitchoverAnnotation]
			return !ok
		}

		annotate("db-7")
		Eventually(annotationGone).Should(BeTrue())
		Eventually(func(g Gomega) []string {
			return k8s.EventsAbout(ctx, "DatabaseCluster", dc, testenv.TypeReasonNote)(g)
		}).Should(ContainElement(ContainSubstring("Warning SwitchoverRefused")))
		Expect(transfers.Load()).To(BeZero())

		annotate("db-1")
		Eventually(annotationGone).Should(BeTrue())
		Eventually(func(g Gomega) string { return clusters.Current(ctx, dc)(g).Status.CurrentPrimary }).Should(Equal("db-1"))
		Eventually(func(g Gomega) []string {
			return k8s.EventsAbout(ctx, "DatabaseCluster", dc, testenv.TypeReasonNote)(g)
		}).Should(ContainElement(ContainSubstring("SwitchoverDone: db-1 is the only primary (from db-0, Requested)")))
		Expect(transfers.Load()).To(Equal(int32(1)))
		// The event is recorded in the pass that sees the switchover done; the status that clears
		// it is written at the end of that pass.
		Eventually(func(g Gomega) *databasev1alpha1.SwitchoverStatus {
			return clusters.Current(ctx, dc)(g).Status.Switchover
		}).Should(BeNil())
		Consistently(transfers.Load, 2*time.Second).Should(Equal(int32(1)), "a request is carried out once")

		By("a request for any replica while a member's agent is silent waits for it")
		sims["db-2"].Fail(memberagent.ActionObserve, errors.New("frozen"))
		Eventually(func(g Gomega) databasev1alpha1.MemberRole {
			return clusters.Current(ctx, dc)(g).Status.Members[2].Role
		}).Should(Equal(databasev1alpha1.MemberRoleUnknown))
		annotate(databasev1alpha1.SwitchoverToAny)
		Consistently(annotationGone, 2*time.Second).Should(BeFalse(), "the request is kept while not every member is up")
		Expect(transfers.Load()).To(Equal(int32(1)))
		sims["db-2"].Fail(memberagent.ActionObserve, nil)
		Eventually(annotationGone).Should(BeTrue())
		Eventually(transfers.Load).Should(Equal(int32(2)))
		Eventually(func(g Gomega) string { return clusters.Current(ctx, dc)(g).Status.CurrentPrimary }).Should(Not(Equal("db-1")))
	})
})

// The failover specs run on a fake clock: spec.roles.failover.afterSeconds is at least 10.
var _ = Describe("DatabaseCluster failover", Ordered, Label("integration"), func() {
	clock := clocktesting.NewFakePassiveClock(time.Now().Truncate(time.Second))
	agents := &memberAgents{addrs: map[string]string{}}
	k8s := testenv.StartInBeforeAll(func(mgr ctrl.Manager) error {
		return (&Reconciler{ReconcilerBase: testenv.ReconcilerBase(mgr), PodReadyTimeout: podReadyTimeout, Clock: clock,
			Members: &AgentMembers{APIReader: mgr.GetAPIReader(), Address: agents.address}, ObserveInterval: 200 * time.Millisecond}).SetupWithManager(mgr)
	})
	clusters := testenv.Kind[*databasev1alpha1.DatabaseCluster, *appsv1.StatefulSet]{
		Env: k8s, Name: "DatabaseCluster", ChildName: (*databasev1alpha1.DatabaseCluster).StatefulSetName,
	}
	// tick moves the operator's clock on, in steps past the observe interval, so that every
	// pass in between reads the members again.
	tick := func(d time.Duration) {
		for step := time.Duration(0); step < d; step += time.Second {
			clock.SetTime(clock.Now().Add(time.Second))
			time.Sleep(50 * time.Millisecond)
		}
	}
	withFailover := func(dc *databasev1alpha1.DatabaseCluster) {
		dc.Spec.Roles = &databasev1alpha1.RolesSpec{Failover: &databasev1alpha1.FailoverSpec{Enabled: true, AfterSeconds: ptr.To[int32](10)}}
	}
	postgres := func(ctx SpecContext) (*databasev1alpha1.DatabaseCluster, map[string]*memberagent.SimEngine) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "dbc-")), withEngine(databasev1alpha1.EnginePostgreSQL), withFailover)
		sts := clusters.Create(ctx, dc)
		sims := map[string]*memberagent.SimEngine{"db-0": memberagent.NewSimEngine("db-0", memberagent.RolePrimary),
			"db-1": memberagent.NewSimEngine("db-1", memberagent.RoleReplica), "db-2": memberagent.NewSimEngine("db-2", memberagent.RoleReplica)}
		sims["db-0"].Advance(300)
		sims["db-1"].Advance(280)
		sims["db-2"].Advance(290)
		engines := map[string]memberagent.Engine{}
		for name, sim := range sims {
			engines[name] = sim
		}
		startMembers(ctx, k8s, agents, dc, sts, engines, "r1")
		setRevisions(ctx, k8s, sts, "r1", "r1")
		Eventually(func(g Gomega) string { return clusters.Current(ctx, dc)(g).Status.CurrentPrimary }).Should(Equal("db-0"))
		return dc, sims
	}
	role := func(sim *memberagent.SimEngine) func() string {
		return func() string {
			o, err := sim.Observe(context.Background())
			Expect(err).NotTo(HaveOccurred())
			return o.Role
		}
	}

	// expectFailedOverToDB2 waits for db-2, the most advanced replica of postgres, to be promoted
	// and published, db-1 left a replica.
	expectFailedOverToDB2 := func(ctx SpecContext, dc *databasev1alpha1.DatabaseCluster, sims map[string]*memberagent.SimEngine) {
		GinkgoHelper()
		// The operator's clock keeps moving a little while the spec waits: a read of a replica's
		// agent that timed out on a busy machine is retried only once the clock passes the read
		// interval, which a frozen fake clock never does (the real one always moves).
		Eventually(func() string {
			clock.SetTime(clock.Now().Add(250 * time.Millisecond))
			return role(sims["db-2"])()
		}).WithPolling(100*time.Millisecond).Should(Equal(memberagent.RolePrimary), "db-2 is the most advanced replica (290 > 280)")
		Expect(role(sims["db-1"])()).To(Equal(memberagent.RoleReplica))
		Eventually(func(g Gomega) string { return clusters.Current(ctx, dc)(g).Status.CurrentPrimary }).Should(Equal("db-2"))
	}

	It("promotes the most advanced replica once the primary's pod is gone for afterSeconds, and not before", func(ctx SpecContext) {
		dc, sims := postgres(ctx)
		primary := &corev1.Pod{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: "db-0"}, primary)).To(Succeed())
		Expect(k8s.Delete(ctx, primary)).To(Succeed())
		// The clock moves only once the operator has seen the pod gone (its members no longer
		// list it): the count of afterSeconds starts at that pass, whenever a busy machine runs it.
		Eventually(func(g Gomega) []databasev1alpha1.MemberStatus {
			return clusters.Current(ctx, dc)(g).Status.Members
		}).Should(HaveLen(2))
		tick(5 * time.Second)
		Consistently(role(sims["db-2"]), 2*time.Second).Should(Equal(memberagent.RoleReplica), "not before afterSeconds")
		tick(6 * time.Second)
		expectFailedOverToDB2(ctx, dc, sims)
		Eventually(func(g Gomega) []string {
			return k8s.EventsAbout(ctx, "DatabaseCluster", dc, testenv.TypeReasonNote)(g)
		}).Should(ContainElements(ContainSubstring("Promoted: Promoted db-2"),
			ContainSubstring("SwitchoverDone: db-2 is the only primary (from db-0, Failover)")))
	})

	It("changes no role of a hibernated cluster, whose members are down on purpose", func(ctx SpecContext) {
		dc, sims := postgres(ctx)
		clusters.Update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Hibernated = true })
		Eventually(func(g Gomega) int32 {
			sts := &appsv1.StatefulSet{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: dc.StatefulSetName()}, sts)).To(Succeed())
			return *sts.Spec.Replicas
		}).Should(BeZero())
		// The StatefulSet controller's part, which envtest lacks: the pods go, slowly (a finalizer
		// holds them terminating, as a database's long shutdown would).
		const hold = "test.example.com/hold"
		var pods corev1.PodList
		Expect(k8s.List(ctx, &pods, client.InNamespace(dc.Namespace))).To(Succeed())
		for i := range pods.Items {
			pod := &pods.Items[i]
			// The operator labels the pods meanwhile: read again on a conflict.
			Eventually(func() error {
				cur := &corev1.Pod{}
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(pod), cur); err != nil {
					return err
				}
				cur.Finalizers = append(cur.Finalizers, hold)
				return k8s.Update(ctx, cur)
			}).Should(Succeed())
			DeferCleanup(func(ctx SpecContext) {
				Eventually(func() error {
					cur := &corev1.Pod{}
					if err := k8s.Get(ctx, client.ObjectKeyFromObject(pod), cur); err != nil {
						return client.IgnoreNotFound(err)
					}
					cur.Finalizers = nil
					return k8s.Update(ctx, cur)
				}).Should(Succeed())
			})
		}
		Expect(k8s.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(dc.Namespace))).To(Succeed())
		tick(30 * time.Second)
		Consistently(k8s.Condition(ctx, dc, "Degraded"), 2*time.Second).Should(HaveExactElements("False", "AsExpected", Not(BeEmpty())))
		for _, name := range []string{"db-1", "db-2"} {
			Expect(role(sims[name])()).To(Equal(memberagent.RoleReplica), name)
		}
		Expect(clusters.Current(ctx, dc)(Default).Status.Switchover).To(BeNil())
	})

	It("fences a primary that does not answer and is not Ready by deleting its pod; promotes only once the pod is gone", func(ctx SpecContext) {
		// The operator's clock not behind the API server's: the failover's start must come after
		// the creation of the pods (a pod created after it is a replacement, never deleted).
		if now := time.Now(); clock.Now().Before(now) {
			clock.SetTime(now)
		}
		dc, sims := postgres(ctx)
		DeferCleanup(func(ctx SpecContext) {
			if CurrentSpecReport().Failed() {
				cur := &databasev1alpha1.DatabaseCluster{}
				_ = k8s.Get(ctx, client.ObjectKeyFromObject(dc), cur)
				GinkgoWriter.Printf("status at the failure, the operator's clock %s: %+v\n", clock.Now(), cur.Status)
			}
		})
		old := &corev1.Pod{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: "db-0"}, old)).To(Succeed())
		// The frozen primary: its agent does not answer, its readiness fails; the kubelet takes
		// its time to stop it (a finalizer holds the pod terminating).
		const hold = "test.example.com/hold"
		Eventually(func(g Gomega) {
			cur := &corev1.Pod{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(old), cur)).To(Succeed())
			cur.Finalizers = append(cur.Finalizers, hold)
			g.Expect(k8s.Update(ctx, cur)).To(Succeed())
			// Not Ready since the operator's now.
			cur.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(clock.Now())}}
			g.Expect(k8s.Status().Update(ctx, cur)).To(Succeed())
		}).Should(Succeed())
		agents.refuse("db-0")
		tick(time.Second)
		Eventually(func(g Gomega) databasev1alpha1.MemberRole {
			return clusters.Current(ctx, dc)(g).Status.Members[0].Role
		}).Should(Equal(databasev1alpha1.MemberRoleUnknown))
		tick(12 * time.Second)

		// The failover is recorded, then the pod deleted; nothing is promoted while it is
		// terminating: its database may still run. The clock keeps moving (a busy machine's
		// first pass that saw the agent silent may have come late in the ticks).
		Eventually(func(g Gomega) *metav1.Time {
			clock.SetTime(clock.Now().Add(250 * time.Millisecond))
			cur := &corev1.Pod{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(old), cur)).To(Succeed())
			return cur.DeletionTimestamp
		}).WithTimeout(30 * time.Second).WithPolling(100 * time.Millisecond).ShouldNot(BeNil())
		recorded := clusters.Current(ctx, dc)(Default).Status.Switchover
		Expect(recorded).NotTo(BeNil())
		Expect([]string{recorded.From, recorded.To, recorded.Reason}).To(Equal([]string{"db-0", "db-2", "Failover"}))
		Eventually(func(g Gomega) []string {
			return k8s.EventsAbout(ctx, "DatabaseCluster", dc, testenv.TypeReasonNote)(g)
		}).Should(ContainElement(HavePrefix("Warning Fenced: Deleted pod db-0 to fence it: Deleting the pod of the unavailable primary db-0")))
		tick(3 * time.Second)
		Eventually(k8s.Condition(ctx, dc, "Degraded")).Should(HaveExactElements("True", "FailoverWaitingForFence", Not(BeEmpty())))
		Consistently(role(sims["db-2"]), 2*time.Second).Should(Equal(memberagent.RoleReplica), "promoted while the old pod may still run")

		// The kubelet stopped it: the pod is gone. (Its replacement, which StatefulSet would make
		// and envtest does not, is fenced as it waits for the target: startsAsReplica's table,
		// the planner's, and the real node's story. Its creation time is the API server's, which
		// this spec's fake clock cannot be compared with.)
		Eventually(func(g Gomega) {
			cur := &corev1.Pod{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(old), cur)).To(Succeed())
			cur.Finalizers = nil
			g.Expect(k8s.Update(ctx, cur)).To(Succeed())
		}).Should(Succeed())
		Eventually(func() error { return k8s.Get(ctx, client.ObjectKeyFromObject(old), &corev1.Pod{}) }).Should(Satisfy(apierrors.IsNotFound))
		expectFailedOverToDB2(ctx, dc, sims)
		Eventually(func(g Gomega) []string {
			return k8s.EventsAbout(ctx, "DatabaseCluster", dc, testenv.TypeReasonNote)(g)
		}).Should(ContainElement(ContainSubstring("SwitchoverDone: db-2 is the only primary (from db-0, Failover)")))
	})

	It("never promotes while the primary may still take writes: its pod is there and its agent silent", func(ctx SpecContext) {
		dc, sims := postgres(ctx)
		agents.refuse("db-0") // the isolated primary: it may still accept writes
		tick(time.Second)     // past the observe interval: the next pass reads the agents again
		Eventually(func(g Gomega) databasev1alpha1.MemberRole {
			return clusters.Current(ctx, dc)(g).Status.Members[0].Role
		}).Should(Equal(databasev1alpha1.MemberRoleUnknown))
		tick(30 * time.Second)
		Eventually(k8s.Condition(ctx, dc, "Degraded")).Should(HaveExactElements("True", "FailoverWaitingForFence", Not(BeEmpty())))
		Consistently(role(sims["db-1"]), 2*time.Second).Should(Equal(memberagent.RoleReplica))
		Expect(role(sims["db-2"])()).To(Equal(memberagent.RoleReplica))
		Expect(role(sims["db-0"])()).To(Equal(memberagent.RolePrimary))
	})
})
