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
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/certs"
	"github.com/seed1b407122/database-operator/controllers/memberagent"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// etcdList is the member list of a simulated etcd, shared by its members' engines: a member is
// added as a learner without a name (etcd learns it when the member starts), promoted by a second
// add once started, and removed by name.
type etcdList struct {
	mu      sync.Mutex
	members []memberagent.Peer
	changes []string
}

func (l *etcdList) snapshot() []memberagent.Peer {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.members)
}

// names are the names of the listed members, "" for one not started.
func (l *etcdList) names() []string {
	var names []string
	for _, m := range l.snapshot() {
		names = append(names, m.Name)
	}
	return names
}

func (l *etcdList) log() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.changes)
}

// start is the member at peerURL starting: it reports its name.
func (l *etcdList) start(name, peerURL string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.members {
		if slices.Contains(l.members[i].PeerURLs, peerURL) {
			l.members[i].Name = name
		}
	}
}

// etcdListMember is one member of a simulated etcd: its own role and position (SimEngine), the
// cluster's member list (etcdList).
type etcdListMember struct {
	*memberagent.SimEngine
	list *etcdList
}

func (m etcdListMember) Observe(ctx context.Context) (memberagent.Observation, error) {
	obs, err := m.SimEngine.Observe(ctx)
	obs.Members = m.list.snapshot()
	return obs, err
}

func (m etcdListMember) AddMember(ctx context.Context, name, peerURL string) error {
	if err := m.SimEngine.AddMember(ctx, name, peerURL); err != nil { // the failures SimEngine.Fail set
		return err
	}
	l := m.list
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.members {
		if slices.Contains(l.members[i].PeerURLs, peerURL) {
			if l.members[i].Learner && l.members[i].Name != "" {
				l.members[i].Learner = false
				l.changes = append(l.changes, "promote "+name)
			}
			return nil
		}
	}
	l.members = append(l.members, memberagent.Peer{PeerURLs: []string{peerURL}, Learner: true})
	l.changes = append(l.changes, "add "+name)
	return nil
}

func (m etcdListMember) RemoveMember(ctx context.Context, name string) error {
	if err := m.SimEngine.RemoveMember(ctx, name); err != nil { // the failures SimEngine.Fail set
		return err
	}
	l := m.list
	l.mu.Lock()
	defer l.mu.Unlock()
	l.members = slices.DeleteFunc(l.members, func(p memberagent.Peer) bool { return p.Name == name })
	l.changes = append(l.changes, "remove "+name)
	return nil
}

// peerURL is the peer URL withEngine's args advertise for member name of dc.
func peerURL(dc *databasev1alpha1.DatabaseCluster, name string) string {
	return "http://" + name + "." + dc.Name + "-headless:2380"
}

var _ = Describe("DatabaseCluster etcd membership", Ordered, Label("integration"), func() {
	agents := &memberAgents{addrs: map[string]string{}}
	k8s := testenv.StartInBeforeAll(withAgents(agents))
	clusters := clusterKind(k8s)
	announcement := func(ctx SpecContext, dc *databasev1alpha1.DatabaseCluster, name string) func(Gomega) []string {
		return func(g Gomega) []string {
			pod := &corev1.Pod{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: name}, pod)).To(Succeed())
			return []string{pod.Annotations[databasev1alpha1.EtcdInitialClusterAnnotation], pod.Annotations[databasev1alpha1.EtcdInitialClusterStateAnnotation]}
		}
	}
	initialCluster := func(dc *databasev1alpha1.DatabaseCluster, n int) string {
		var entries []string
		for i := range n {
			name := dc.Name + "-" + strconv.Itoa(i)
			entries = append(entries, name+"="+peerURL(dc, name))
		}
		return strings.Join(entries, ",")
	}
	stsReplicas := func(ctx SpecContext, sts *appsv1.StatefulSet) func(Gomega) int32 {
		return func(g Gomega) int32 {
			cur := &appsv1.StatefulSet{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(sts), cur)).To(Succeed())
			return ptr.Deref(cur.Spec.Replicas, 0)
		}
	}

	It("announces a new cluster, grows it 3 -> 5 one learner at a time, and shrinks it 5 -> 3 removing each member before its pod goes", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "dbc-")), withEngine(databasev1alpha1.EngineEtcd))
		sts := clusters.Create(ctx, dc)

		By("a new cluster: every pod announced the three members, state new, before any etcd runs")
		for i := range 3 {
			runningMember(ctx, k8s, dc, sts, i)
		}
		for i := range 3 {
			Eventually(announcement(ctx, dc, "db-"+strconv.Itoa(i))).Should(Equal([]string{initialCluster(dc, 3), "new"}))
		}

		By("etcd formed: db-0 leads")
		secret := &corev1.Secret{}
		Eventually(func() error {
			return k8s.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: dc.CASecretName()}, secret)
		}).Should(Succeed())
		ca, err := certs.PairFromSecretData(secret.Data)
		Expect(err).NotTo(HaveOccurred())
		list := &etcdList{}
		sims := map[string]*memberagent.SimEngine{}
		serve := func(i int) {
			name := "db-" + strconv.Itoa(i)
			role := memberagent.RoleReplica
			if i == 0 {
				role = memberagent.RolePrimary
			}
			serving, err := certs.NewServing(ca, []string{memberDNSName(dc, name)}, time.Now())
			Expect(err).NotTo(HaveOccurred())
			sims[name] = memberagent.NewSimEngine(name, role)
			agents.serve(name, etcdListMember{SimEngine: sims[name], list: list}, ca.CertPEM, serving)
		}
		for i := range 3 {
			list.members = append(list.members, memberagent.Peer{Name: "db-" + strconv.Itoa(i), PeerURLs: []string{peerURL(dc, "db-"+strconv.Itoa(i))}})
			serve(i)
		}
		Eventually(func(g Gomega) string { return clusters.Current(ctx, dc)(g).Status.CurrentPrimary }).Should(Equal("db-0"))

		By("scaled to 5: db-3 added as a learner (through db-1: db-0 refuses, not connected to every voter) and announced the four members; db-4 waits for it")
		sims["db-0"].Fail(memberagent.ActionAddMember, errors.New("etcdserver: unhealthy cluster"))
		clusters.Update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Replicas = ptr.To[int32](5) })
		Eventually(stsReplicas(ctx, sts)).Should(Equal(int32(5)))
		runningMember(ctx, k8s, dc, sts, 3)
		runningMember(ctx, k8s, dc, sts, 4)
		Eventually(announcement(ctx, dc, "db-3")).Should(Equal([]string{initialCluster(dc, 4), "existing"}))
		Eventually(list.names).Should(Equal([]string{"db-0", "db-1", "db-2", ""}))
		Consistently(announcement(ctx, dc, "db-4")).WithTimeout(time.Second).Should(Equal([]string{"", ""}),
			"db-4 is not announced while db-3 has not joined")
		Expect(list.log()).To(Equal([]string{"add db-3"}))

		By("db-3 starts: promoted; then db-4 added, announced the five, started and promoted")
		list.start("db-3", peerURL(dc, "db-3"))
		serve(3)
		Eventually(announcement(ctx, dc, "db-4")).Should(Equal([]string{initialCluster(dc, 5), "existing"}))
		list.start("db-4", peerURL(dc, "db-4"))
		serve(4)
		Eventually(list.log).Should(Equal([]string{"add db-3", "promote db-3", "add db-4", "promote db-4"}))
		Expect(list.snapshot()).To(HaveEach(HaveField("Learner", false)))

		By("scaled to 3: db-4 then db-3 removed, the StatefulSet lowered only past each removal")
		watchCtx, stopWatch := context.WithCancel(ctx)
		violations := make(chan string, 100)
		go func() {
			for watchCtx.Err() == nil {
				replicas := stsReplicas(ctx, sts)(Default)
				names := list.names()
				for _, name := range names {
					if ordinal, ok := podOrdinal("db", name); ok && ordinal >= replicas {
						violations <- name + " still a member while the StatefulSet has " + strconv.Itoa(int(replicas)) + " replicas"
					}
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
		clusters.Update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Replicas = ptr.To[int32](3) })
		Eventually(stsReplicas(ctx, sts)).WithTimeout(30 * time.Second).Should(Equal(int32(3)))
		stopWatch()
		Expect(list.names()).To(Equal([]string{"db-0", "db-1", "db-2"}))
		Expect(list.log()).To(Equal([]string{"add db-3", "promote db-3", "add db-4", "promote db-4", "remove db-4", "remove db-3"}))
		close(violations)
		var seen []string
		for v := range violations {
			seen = append(seen, v)
		}
		Expect(seen).To(BeEmpty(), "a pod went before its member was removed")
		Eventually(func(g Gomega) []string {
			return k8s.EventsAbout(ctx, "DatabaseCluster", dc, testenv.TypeReasonNote)(g)
		}).Should(ContainElements(
			ContainSubstring("MemberAdded: Added db-3 (http://db-3.db-headless:2380) to etcd's members through db-1"),
			ContainSubstring("MemberPromoted: Promoted db-3 to a voting member: it has caught up"),
			ContainSubstring("MemberRemoved: Removed db-4 from etcd's members before its pod goes"),
			ContainSubstring("MemberRemoved: Removed db-3 from etcd's members before its pod goes"),
		))

		By("hibernated: no member removed, though none is desired")
		clusters.Update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Hibernated = true })
		Eventually(stsReplicas(ctx, sts)).Should(Equal(int32(0)))
		Consistently(list.names).WithTimeout(2 * time.Second).Should(Equal([]string{"db-0", "db-1", "db-2"}))
	})
})

var _ = Describe("DatabaseCluster PostgreSQL role announcements", Ordered, Label("integration"), func() {
	agents := &memberAgents{addrs: map[string]string{}}
	k8s := testenv.StartInBeforeAll(withAgents(agents))
	clusters := clusterKind(k8s)
	announced := func(ctx SpecContext, ns string) func(Gomega) map[string]string {
		return func(g Gomega) map[string]string {
			var pods corev1.PodList
			g.Expect(k8s.List(ctx, &pods, client.InNamespace(ns))).To(Succeed())
			out := map[string]string{}
			for _, p := range pods.Items {
				out[p.Name] = p.Annotations[databasev1alpha1.PostgreSQLRoleAnnotation] + " of " +
					p.Annotations[databasev1alpha1.PostgreSQLPrimaryHostAnnotation]
			}
			return out
		}
	}

	It("tells a new cluster's first member it is the primary and the others to stream from NAME-rw; the announcements follow the primary, and a recreated pod learns it", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "dbc-")), withEngine(databasev1alpha1.EnginePostgreSQL))
		sts := clusters.Create(ctx, dc)
		ns := dc.Namespace
		rw := "db-rw." + ns + ".svc"

		By("a new cluster, no member answering yet: db-0 is the primary")
		runningMember(ctx, k8s, dc, sts, 1)
		runningMember(ctx, k8s, dc, sts, 0)
		runningMember(ctx, k8s, dc, sts, 2)
		Eventually(announced(ctx, ns)).Should(Equal(map[string]string{
			"db-0": "primary of " + rw, "db-1": "replica of " + rw, "db-2": "replica of " + rw}))

		By("db-1 became the primary (a failover); db-0's pod recreated is told it is a replica")
		secret := &corev1.Secret{}
		Eventually(func() error {
			return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: dc.CASecretName()}, secret)
		}).Should(Succeed())
		ca, err := certs.PairFromSecretData(secret.Data)
		Expect(err).NotTo(HaveOccurred())
		for i, role := range []string{memberagent.RoleReplica, memberagent.RolePrimary, memberagent.RoleReplica} {
			name := "db-" + strconv.Itoa(i)
			serving, err := certs.NewServing(ca, []string{memberDNSName(dc, name)}, time.Now())
			Expect(err).NotTo(HaveOccurred())
			agents.serve(name, memberagent.NewSimEngine(name, role), ca.CertPEM, serving)
		}
		Eventually(func(g Gomega) string { return clusters.Current(ctx, dc)(g).Status.CurrentPrimary }).Should(Equal("db-1"))
		Eventually(announced(ctx, ns)).Should(Equal(map[string]string{
			"db-0": "replica of " + rw, "db-1": "primary of " + rw, "db-2": "replica of " + rw}),
			"the announcements follow the primary: db-1's container, restarted, starts as the primary")
		old := &corev1.Pod{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-0"}, old)).To(Succeed())
		Expect(k8s.Delete(ctx, old, client.GracePeriodSeconds(0))).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-0"}, &corev1.Pod{}))
		}).Should(BeTrue())
		runningMember(ctx, k8s, dc, sts, 0)
		want := map[string]string{"db-0": "replica of " + rw, "db-1": "primary of " + rw, "db-2": "replica of " + rw}
		Eventually(announced(ctx, ns)).Should(Equal(want), "db-0's pod recreated is told it is a replica")
		Consistently(announced(ctx, ns), 2*time.Second).Should(Equal(want),
			"an announcement is not rewritten while the primary stays (the operator's cache keeps its own annotations of pods)")
	})
})
