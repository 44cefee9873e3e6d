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
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/memberagent"
)

// The ordered updates of a cluster with an engine on real controllers: the StatefulSet is
// OnDelete, the real StatefulSet controller recreates the pods the operator (a separate manager
// process) deletes, and the operator reads each member through a real member agent over mutual
// TLS. As in the auto-grow spec, the pods are annotated kwok.x-k8s.io/status=custom and the spec
// writes their status as a kubelet would, with a loopback pod IP per ordinal where the spec runs
// that member's agent (memberagent.Serve with the serving pair of the Secret NAME-agent-tls, the
// very files the agent's container mounts) in front of a simulated etcd member.

// rolesTimeout bounds a whole ordered update: the operator reads the members at most every
// 10 s (DefaultObserveInterval), so each of the 3 deletions and the switchover takes a read.
const rolesTimeout = 3 * time.Minute

// brokenImage is the image whose pods the simulated kubelet never makes Ready (a database that
// fails its readiness probe).
const brokenImage = "registry.example.com/db:never-ready"

// etcdSims are the simulated members of one etcd, by pod name.
type etcdSims map[string]*memberagent.SimEngine

// role is what sim reports of itself.
func (s etcdSims) role(name string) string {
	o, err := s[name].Observe(context.Background())
	Expect(err).NotTo(HaveOccurred())
	return o.Role
}

// memberIP is the pod IP of member ordinal: firstIP's last byte plus the ordinal.
func memberIP(firstIP, ordinal int) string {
	return "127.0.0." + strconv.Itoa(firstIP+ordinal)
}

// serveEtcdAgents waits for dc's agent Secret and serves, until the container ends, the agents of
// members 0..2 on memberIP(firstIP, ordinal) and the member agent's port: the leader NAME-0 at
// raft index 300, NAME-1 at 280 and NAME-2 at 290 (so a switchover goes to NAME-2).
func serveEtcdAgents(ctx SpecContext, dc *databasev1alpha1.DatabaseCluster, firstIP int) (etcdSims, *atomic.Int32) {
	GinkgoHelper()
	secret := &corev1.Secret{}
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: dc.AgentTLSSecretName()}, secret)).To(Succeed())
		g.Expect(secret.Data).To(HaveKey("ca.crt"))
	}).Should(Succeed())
	tlsConfig, err := memberagent.ServerConfig(secret.Data["ca.crt"], secret.Data[corev1.TLSCertKey], secret.Data[corev1.TLSPrivateKeyKey])
	Expect(err).NotTo(HaveOccurred())

	name := func(ordinal int) string { return dc.StatefulSetName() + "-" + strconv.Itoa(ordinal) }
	sims := etcdSims{name(0): memberagent.NewSimEngine(name(0), memberagent.RolePrimary),
		name(1): memberagent.NewSimEngine(name(1), memberagent.RoleReplica),
		name(2): memberagent.NewSimEngine(name(2), memberagent.RoleReplica)}
	sims[name(0)].Advance(300)
	sims[name(1)].Advance(280)
	sims[name(2)].Advance(290)
	transfers := &atomic.Int32{}
	agentCtx, stop := context.WithCancel(context.Background())
	DeferCleanup(stop)
	for ordinal := range 3 {
		l, err := net.Listen("tcp", net.JoinHostPort(memberIP(firstIP, ordinal), strconv.Itoa(int(databasev1alpha1.MemberAgentPort))))
		Expect(err).NotTo(HaveOccurred())
		engine := memberagent.LeaderSim{SimEngine: sims[name(ordinal)], Sims: sims, Transfers: transfers}
		go func() { _ = memberagent.Serve(agentCtx, l, engine, tlsConfig) }()
	}
	return sims, transfers
}

// simulateKubelet writes, until ctx ends, the status of every pod of ns that has a node, as the
// kubelet would once its containers run: Running, the pod IP of its ordinal (memberIP), and
// Ready unless ready says otherwise (then the database container runs but fails its readiness
// probe). A status is written once per pod (its Ready condition's last transition is when the
// pod got it). A pod being deleted is deleted at once, as the kubelet does once its containers
// have stopped.
func simulateKubelet(ctx context.Context, ns, statefulSet string, firstIP int, ready func(*corev1.Pod) bool) {
	for {
		var pods corev1.PodList
		if err := k8s.List(ctx, &pods, client.InNamespace(ns)); err == nil {
			for i := range pods.Items {
				writePodStatus(ctx, &pods.Items[i], statefulSet, firstIP, ready)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// writePodStatus is simulateKubelet's work on one pod; a failed write is tried again on the
// next round.
func writePodStatus(ctx context.Context, pod *corev1.Pod, statefulSet string, firstIP int, ready func(*corev1.Pod) bool) {
	if pod.DeletionTimestamp != nil {
		_ = k8s.Delete(ctx, pod, client.GracePeriodSeconds(0), client.Preconditions{UID: ptr.To(pod.UID)})
		return
	}
	ordinal, err := strconv.Atoi(strings.TrimPrefix(pod.Name, statefulSet+"-"))
	if pod.Spec.NodeName == "" || err != nil {
		return
	}
	ip, want := memberIP(firstIP, ordinal), ready(pod)
	if pod.Status.PodIP == ip && podReady(pod) == want {
		return
	}
	readyStatus := corev1.ConditionFalse
	if want {
		readyStatus = corev1.ConditionTrue
	}
	now := metav1.Now()
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
		HostIP: "10.240.0.1", StartTime: &now,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: readyStatus, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: readyStatus, LastTransitionTime: now}}}
	for _, c := range pod.Spec.InitContainers {
		s := corev1.ContainerStatus{Name: c.Name, Image: c.Image, State: running, Ready: true, Started: ptr.To(true)}
		if ptr.Deref(c.RestartPolicy, "") != corev1.ContainerRestartPolicyAlways {
			s.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed", StartedAt: now, FinishedAt: now}}
			s.Started = ptr.To(false)
		}
		pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, s)
	}
	for _, c := range pod.Spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses,
			corev1.ContainerStatus{Name: c.Name, Image: c.Image, State: running, Ready: want, Started: ptr.To(true)})
	}
	_ = k8s.Status().Update(ctx, pod)
}

// deletionLog is what watchDeletions saw: the pods whose deletion began, in order, and each
// deletion that began while another member was missing, being deleted or not Ready.
type deletionLog struct {
	mu         sync.Mutex
	deleted    []string
	violations []string
	timeline   []string
}

func (d *deletionLog) order() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.deleted)
}

func (d *deletionLog) unsafe() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.violations)
}

func (d *deletionLog) String() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return strings.Join(d.timeline, "\n")
}

// watchDeletions watches the pods of dc from now until ctx ends (a watch from the list's
// resourceVersion sees every change, in the API server's order) and logs every deletion that
// begins.
func watchDeletions(ctx context.Context, clientset kubernetes.Interface, dc *databasev1alpha1.DatabaseCluster) *deletionLog {
	GinkgoHelper()
	podsOf := clientset.CoreV1().Pods(dc.Namespace)
	list, err := podsOf.List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	w, err := podsOf.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	Expect(err).NotTo(HaveOccurred())
	current := map[string]*corev1.Pod{}
	for i := range list.Items {
		current[list.Items[i].Name] = &list.Items[i]
	}
	log := &deletionLog{}
	began := time.Now()
	seen := map[types.UID]bool{}
	go func() {
		defer GinkgoRecover()
		defer w.Stop()
		for event := range w.ResultChan() {
			pod, ok := event.Object.(*corev1.Pod)
			if !ok {
				log.mu.Lock()
				log.timeline = append(log.timeline, fmt.Sprintf("%6dms %s %v", time.Since(began).Milliseconds(), event.Type, event.Object))
				log.mu.Unlock()
				continue
			}
			log.add(event.Type, pod, current, seen, dc, began)
		}
	}()
	return log
}

// add records one watch event of pod; current is every pod as last seen.
func (d *deletionLog) add(kind watch.EventType, pod *corev1.Pod, current map[string]*corev1.Pod, seen map[types.UID]bool,
	dc *databasev1alpha1.DatabaseCluster, began time.Time,
) {
	d.mu.Lock()
	defer d.mu.Unlock()
	leaving := kind == watch.Deleted || pod.DeletionTimestamp != nil
	if leaving && !seen[pod.UID] {
		seen[pod.UID] = true
		d.deleted = append(d.deleted, pod.Name)
		for ordinal := range 3 {
			other := dc.StatefulSetName() + "-" + strconv.Itoa(ordinal)
			if p := current[other]; other != pod.Name && (p == nil || p.DeletionTimestamp != nil || !podReady(p)) {
				d.violations = append(d.violations, fmt.Sprintf("%s deleted while %s was missing or not Ready", pod.Name, other))
			}
		}
	}
	if kind == watch.Deleted {
		delete(current, pod.Name)
	} else {
		current[pod.Name] = pod
	}
	d.timeline = append(d.timeline, fmt.Sprintf("%6dms %-8s %s uid=%s revision=%s image=%s ready=%t terminating=%t role=%s",
		time.Since(began).Milliseconds(), kind, pod.Name, pod.UID, pod.Labels[appsv1.ControllerRevisionHashLabelKey],
		pod.Spec.Containers[0].Image, podReady(pod), pod.DeletionTimestamp != nil, pod.Labels[databasev1alpha1.RoleLabel]))
}

// clusterEvents lists the events about dc with one of reasons, as "Type Reason: note", with
// " (xN)" for a series of N.
func clusterEvents(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, reasons ...string) func(Gomega) []string {
	return func(g Gomega) []string {
		var list eventsv1.EventList
		g.Expect(k8s.List(ctx, &list, client.InNamespace(dc.Namespace))).To(Succeed())
		notes := []string{}
		for _, e := range list.Items {
			if e.Regarding.Kind != "DatabaseCluster" || e.Regarding.Name != dc.Name || !slices.Contains(reasons, e.Reason) {
				continue
			}
			note := e.Type + " " + e.Reason + ": " + e.Note
			if e.Series != nil {
				note += fmt.Sprintf(" (x%d)", e.Series.Count)
			}
			notes = append(notes, note)
		}
		return notes
	}
}

// memberPods is dc's pods by name.
func memberPods(ctx context.Context, g Gomega, dc *databasev1alpha1.DatabaseCluster) map[string]corev1.Pod {
	var pods corev1.PodList
	g.Expect(k8s.List(ctx, &pods, client.InNamespace(dc.Namespace), client.MatchingLabels(dc.SelectorLabels()))).To(Succeed())
	out := map[string]corev1.Pod{}
	for _, p := range pods.Items {
		out[p.Name] = p
	}
	return out
}

// settled waits until dc's StatefulSet has rolled every member to one revision, each member
// Ready and of that revision, and returns the StatefulSet.
func settled(ctx SpecContext, dc *databasev1alpha1.DatabaseCluster, timeout time.Duration) *appsv1.StatefulSet {
	GinkgoHelper()
	sts := &appsv1.StatefulSet{}
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: dc.StatefulSetName()}, sts)).To(Succeed())
		g.Expect(sts.Status.ObservedGeneration).To(Equal(sts.Generation))
		g.Expect(sts.Status.CurrentRevision).To(Equal(sts.Status.UpdateRevision))
		g.Expect(sts.Status.ReadyReplicas).To(BeEquivalentTo(3))
		g.Expect(sts.Status.UpdatedReplicas).To(BeEquivalentTo(3))
		pods := memberPods(ctx, g, dc)
		g.Expect(pods).To(HaveLen(3))
		for name, p := range pods {
			g.Expect(p.Labels[appsv1.ControllerRevisionHashLabelKey]).To(Equal(sts.Status.UpdateRevision), "pod %s", name)
			g.Expect(podReady(&p)).To(BeTrue(), "pod %s is not Ready", name)
			g.Expect(p.DeletionTimestamp).To(BeNil(), "pod %s is being deleted", name)
		}
	}).WithTimeout(timeout).WithPolling(250 * time.Millisecond).Should(Succeed())
	return sts
}

// etcdCluster is the spec's 3-member etcd cluster "db" in ns, its pods' status left to the spec.
func etcdCluster(ns string) *databasev1alpha1.DatabaseCluster {
	dc := smallCluster(ns, "db", 3)
	dc.Spec.Engine = databasev1alpha1.EngineEtcd
	dc.Spec.Env = []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
	dc.Spec.Args = []string{"--initial-advertise-peer-urls=http://$(POD_NAME).db-headless:2380"}
	dc.Spec.PodAnnotations = map[string]string{"kwok.x-k8s.io/status": "custom"}
	return dc
}

// startEtcd creates dc, serves its agents and simulates the kubelet of its pods (ready decides
// a pod's readiness), and waits until the cluster settled with db-0 its primary.
func startEtcd(ctx SpecContext, dc *databasev1alpha1.DatabaseCluster, firstIP int, ready func(*corev1.Pod) bool) (etcdSims, *atomic.Int32) {
	GinkgoHelper()
	Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: dc.Namespace}})).To(Succeed())
	Expect(k8s.Create(ctx, dc)).To(Succeed())
	sims, transfers := serveEtcdAgents(ctx, dc, firstIP)
	kubeletCtx, stop := context.WithCancel(context.Background())
	DeferCleanup(stop)
	go simulateKubelet(kubeletCtx, dc.Namespace, dc.StatefulSetName(), firstIP, ready)

	sts := settled(ctx, dc, 2*time.Minute)
	Expect(sts.Spec.UpdateStrategy.Type).To(Equal(appsv1.OnDeleteStatefulSetStrategyType), "the operator orders the deletions")
	member := func(name, role, position string) databasev1alpha1.MemberStatus {
		return databasev1alpha1.MemberStatus{Name: name, Role: databasev1alpha1.MemberRole(role), Position: position}
	}
	Eventually(func(g Gomega) []any {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		return []any{dc.Status.CurrentPrimary, dc.Status.Members}
	}).WithTimeout(time.Minute).Should(Equal([]any{"db-0", []databasev1alpha1.MemberStatus{
		member("db-0", "primary", "300"), member("db-1", "replica", "280"), member("db-2", "replica", "290")}}))
	Eventually(func(g Gomega) map[string]string {
		roles := map[string]string{}
		for name, p := range memberPods(ctx, g, dc) {
			roles[name] = p.Labels[databasev1alpha1.RoleLabel]
		}
		return roles
	}).Should(Equal(map[string]string{"db-0": "primary", "db-1": "replica", "db-2": "replica"}))
	return sims, transfers
}

var _ = Describe("DatabaseCluster ordered updates with an engine", Ordered, func() {
	const ns = "e2e-roles"
	dc := etcdCluster(ns)
	var clientset kubernetes.Interface

	BeforeAll(func() {
		var err error
		clientset, err = kubernetes.NewForConfig(cluster.Config)
		Expect(err).NotTo(HaveOccurred())
	})
	AfterAll(func(ctx SpecContext) {
		if CurrentSpecReport().Failed() {
			dumpNamespace(ctx, ns)
		}
	})

	It("updates an etcd-engine cluster's replicas first and its leader last, with one leadership transfer", func(ctx SpecContext) {
		sims, transfers := startEtcd(ctx, dc, 81, func(*corev1.Pod) bool { return true })
		before := settled(ctx, dc, time.Minute).Status.UpdateRevision

		By("a new template: the operator deletes the pods, the StatefulSet controller recreates them at the update revision")
		watchCtx, stopWatch := context.WithCancel(ctx)
		defer stopWatch()
		deletions := watchDeletions(watchCtx, clientset, dc)
		began := time.Now()
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
			dc.Spec.Env = []corev1.EnvVar{{Name: "E2E_ROLLOUT", Value: "2"}}
			g.Expect(k8s.Update(ctx, dc)).To(Succeed())
		}).Should(Succeed())
		Eventually(func(g Gomega) []string { return deletions.order() }).WithTimeout(rolesTimeout).
			Should(HaveLen(3), func() string { return "pod events:\n" + deletions.String() })
		sts := settled(ctx, dc, time.Minute)
		AddReportEntry("ordered update of 3 etcd members (replicas, switchover, old leader)", time.Since(began).Round(time.Second).String())
		GinkgoWriter.Printf("pod events:\n%s\n", deletions)

		Expect(sts.Status.UpdateRevision).NotTo(Equal(before))
		Expect(deletions.order()).To(Equal([]string{"db-2", "db-1", "db-0"}), "replicas first, highest ordinal first, the old leader last")
		Expect(deletions.unsafe()).To(BeEmpty(), "a pod deleted while another member was down")
		Expect(transfers.Load()).To(Equal(int32(1)), "exactly one leadership transfer")
		Expect([]string{sims.role("db-0"), sims.role("db-1"), sims.role("db-2")}).To(Equal(
			[]string{memberagent.RoleReplica, memberagent.RoleReplica, memberagent.RolePrimary}))
		Eventually(func(g Gomega) []any {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
			return []any{dc.Status.CurrentPrimary, dc.Status.Switchover}
		}).Should(Equal([]any{"db-2", (*databasev1alpha1.SwitchoverStatus)(nil)}), "the most advanced replica took over")
		Eventually(clusterEvents(ctx, dc, "MemberUpdated")).Should(ConsistOf(
			"Normal MemberUpdated: Deleted pod db-2 to update it (Deleting the outdated replica db-2.)",
			"Normal MemberUpdated: Deleted pod db-1 to update it (Deleting the outdated replica db-1.)",
			"Normal MemberUpdated: Deleted pod db-0 to update it (Deleting the outdated replica db-0.)"))
		Eventually(clusterEvents(ctx, dc, "SwitchoverDone", "Switchover")).Should(ConsistOf(
			"Normal Switchover: Moved the leadership from db-0 to db-2",
			"Normal SwitchoverDone: db-2 is the only primary (from db-0, Update)"))

		By("settled: nothing more is deleted, moved or told")
		Consistently(func(g Gomega) []any {
			return []any{len(deletions.order()), transfers.Load(), len(clusterEvents(ctx, dc, "MemberUpdated", "SwitchoverDone", "Switchover")(g))}
		}, 12*time.Second, time.Second).Should(Equal([]any{3, int32(1), 5}))
	}, NodeTimeout(8*time.Minute))
})

var _ = Describe("DatabaseCluster stuck rollout with an engine", Ordered, func() {
	const ns = "e2e-roles-rollback"
	dc := etcdCluster(ns)
	dc.Spec.Rollout = &databasev1alpha1.RolloutSpec{ProgressDeadlineSeconds: ptr.To[int32](30), AutoRollback: true}
	var clientset kubernetes.Interface

	BeforeAll(func() {
		var err error
		clientset, err = kubernetes.NewForConfig(cluster.Config)
		Expect(err).NotTo(HaveOccurred())
	})
	AfterAll(func(ctx SpecContext) {
		if CurrentSpecReport().Failed() {
			dumpNamespace(ctx, ns)
		}
	})

	It("0.4's stuck-rollout detection and auto-rollback keep working under OnDelete", func(ctx SpecContext) {
		good := dc.Spec.Image
		sims, transfers := startEtcd(ctx, dc, 84, func(p *corev1.Pod) bool { return p.Spec.Containers[0].Image != brokenImage })
		sts := settled(ctx, dc, time.Minute)
		r1 := sts.Status.UpdateRevision
		uids := map[string]types.UID{}
		for name, p := range memberPods(ctx, Default, dc) {
			uids[name] = p.UID
		}

		By("an image whose pods never get Ready: the operator updates db-2 first, and it stays not Ready")
		watchCtx, stopWatch := context.WithCancel(ctx)
		defer stopWatch()
		deletions := watchDeletions(watchCtx, clientset, dc)
		// progressing records every Progressing condition the status shows, in order.
		var progressing []string
		var progressingMu sync.Mutex
		pollCtx, stopPoll := context.WithCancel(ctx)
		defer stopPoll()
		go func() {
			defer GinkgoRecover()
			for pollCtx.Err() == nil {
				cur := &databasev1alpha1.DatabaseCluster{}
				if err := k8s.Get(pollCtx, client.ObjectKeyFromObject(dc), cur); err == nil {
					if c := meta.FindStatusCondition(cur.Status.Conditions, databasev1alpha1.ConditionProgressing); c != nil {
						seen := string(c.Status) + " " + c.Reason + ": " + c.Message
						progressingMu.Lock()
						if len(progressing) == 0 || progressing[len(progressing)-1] != seen {
							progressing = append(progressing, seen)
						}
						progressingMu.Unlock()
					}
				}
				time.Sleep(100 * time.Millisecond)
			}
		}()
		history := func() []string {
			progressingMu.Lock()
			defer progressingMu.Unlock()
			return slices.Clone(progressing)
		}
		began := time.Now()
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
			dc.Spec.Image = brokenImage
			g.Expect(k8s.Update(ctx, dc)).To(Succeed())
		}).Should(Succeed())
		var r2 string
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), sts)).To(Succeed())
			g.Expect(sts.Status.UpdateRevision).NotTo(Equal(r1))
			r2 = sts.Status.UpdateRevision
			p := memberPods(ctx, g, dc)["db-2"]
			g.Expect(p.Labels[appsv1.ControllerRevisionHashLabelKey]).To(Equal(r2))
			g.Expect(p.Status.PodIP).NotTo(BeEmpty())
		}).WithTimeout(time.Minute).Should(Succeed())
		Expect(deletions.order()).To(Equal([]string{"db-2"}))

		stuck := "pod db-2: not Ready within spec.rollout.progressDeadlineSeconds (30s): container database running but failing its readiness probe"
		By("past progressDeadlineSeconds: rolled back to " + r1 + ", the stuck pod replaced from it, every member Ready again")
		Eventually(clusterEvents(ctx, dc, databasev1alpha1.ReasonRolledBack)).WithTimeout(2 * time.Minute).Should(Equal([]string{
			"Warning RolledBack: Returned StatefulSet db to revision " + r1 + ", the last every member ran Ready: " + stuck +
				" of revision " + r2 + "; the spec still asks for that template: change it to roll forward"}))
		AddReportEntry("etcd engine: image never Ready -> RolledBack (progressDeadlineSeconds 30)", time.Since(began).Round(time.Second).String())
		sts = settled(ctx, dc, 2*time.Minute)
		AddReportEntry("etcd engine: image never Ready -> every member Ready at the old revision", time.Since(began).Round(time.Second).String())
		GinkgoWriter.Printf("pod events:\n%s\nProgressing conditions seen:\n%s\n", deletions, strings.Join(history(), "\n"))

		Expect(sts.Status.UpdateRevision).To(Equal(r1))
		Expect(sts.Spec.Template.Spec.Containers[0].Image).To(Equal(good), "the template is back to the previous image")
		Expect(deletions.order()).To(Equal([]string{"db-2", "db-2"}), "db-2 deleted for the update, then replaced once stuck")
		Expect(deletions.unsafe()).To(BeEmpty(), "a pod deleted while another member was down")
		pods := memberPods(ctx, Default, dc)
		Expect(pods["db-0"].UID).To(Equal(uids["db-0"]), "db-0 untouched")
		Expect(pods["db-1"].UID).To(Equal(uids["db-1"]), "db-1 untouched")
		for name, p := range pods {
			Expect(p.Spec.Containers[0].Image).To(Equal(good), "pod %s", name)
		}
		Expect(clusterEvents(ctx, dc, "ReplacedStuckPod")(Default)).To(Equal([]string{
			"Normal ReplacedStuckPod: Deleted pod db-2 of revision " + r2 + " (" + strings.TrimPrefix(stuck, "pod db-2: ") +
				") so that StatefulSet db recreates it from revision " + r1}))
		Expect(clusterEvents(ctx, dc, "MemberUpdated")(Default)).To(Equal([]string{
			"Normal MemberUpdated: Deleted pod db-2 to update it (Deleting the outdated replica db-2.)"}))
		rolledBack := "False RolledBack: spec.rollout.autoRollback returned StatefulSet db to revision " + r1 +
			" after the rollout of the spec's template got stuck; change the spec to roll forward"
		Eventually(func() string { h := history(); return h[len(h)-1] }).Should(Equal(rolledBack))
		// The pass that finds db-2 past the deadline rolls back at once (phase 5, before the status is
		// written), as 0.4 does without an engine: the stuck pod is named in the RolledBack event, and
		// a RolloutStuck condition shows only if a pass came between, with this very message.
		Expect(history()).To(HaveEach(Or(Not(ContainSubstring("RolloutStuck")), Equal("False RolloutStuck: "+stuck))))
		Expect(clusterEvents(ctx, dc, databasev1alpha1.ReasonRolloutStuck)(Default)).To(Or(BeEmpty(),
			Equal([]string{"Warning RolloutStuck: " + stuck})))
		Expect(transfers.Load()).To(BeZero(), "the leader was never touched")
		Expect(sims.role("db-0")).To(Equal(memberagent.RolePrimary))
		Expect(dc.Spec.Image).To(Equal(brokenImage), "the spec is left as written")

		By("held: the spec still asks for the broken image, nothing more is deleted")
		Consistently(func(g Gomega) []any {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), sts)).To(Succeed())
			return []any{sts.Spec.Template.Spec.Containers[0].Image, len(deletions.order())}
		}, 12*time.Second, time.Second).Should(Equal([]any{good, 2}))
		GinkgoWriter.Printf("Progressing conditions seen:\n%s\n", strings.Join(history(), "\n"))
	}, NodeTimeout(8*time.Minute))
})
