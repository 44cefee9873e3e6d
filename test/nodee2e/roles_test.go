//go:build linux && node

package nodee2e

import (
	"cmp"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/big"
	"net"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed1b407122/database-operator/api/conditions"
	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/memberagent"
)

// rolesChangeBound is how long a change of the etcd leader may take to show in the status, the
// labels and NAME-rw: the operator reads the members every 10 s (DefaultObserveInterval), and
// a reconcile, the label patches and the EndpointSlice controller take the rest, about 20 s on a
// loaded 2-core node.
const rolesChangeBound = 30 * time.Second

// rolesSampleEvery is how often the watch of a leader change samples the primary labels and
// NAME-rw's endpoints.
const rolesSampleEvery = 200 * time.Millisecond

// etcdRolesStory, one ordered story: the TLS etcd sample as it is, with spec.engine etcd (its
// name kept, in a namespace of its own: its args name the cluster). The operator's agent runs
// beside each member, the operator reads each member's role through it over mutual TLS and
// publishes the leader etcd itself reports: status, pod labels, NAME-rw and NAME-ro. The leader's
// pod deleted, etcd elects another and the publication follows, never two primaries at once.
// The agent refuses any client but the operator. The operator changes no role here: no
// switchover is asked for and failover is off (the default); the leader change is etcd's own.
func etcdRolesStory() {
	var (
		dc     *databasev1alpha1.DatabaseCluster
		db     *etcdClient
		leader string
	)

	// The members' own account when a spec fails: etcd's and the agents' logs, the
	// announcements and the events.
	AfterEach(func(ctx SpecContext) {
		if CurrentSpecReport().Failed() && dc != nil {
			describeMembers(ctx, dc)
		}
	}, NodeTimeout(time.Minute))

	It("publishes the leader etcd reports as the primary: status.members and currentPrimary, the pods' role labels, NAME-rw and NAME-ro", func(ctx SpecContext) {
		ns := newNamespace(ctx, "etcd-roles")
		dc = sampleCluster(ns, etcdTLSSampleFile)
		withEtcdEngine(dc)
		began := time.Now()
		Expect(k8s.Create(ctx, dc)).To(Succeed())
		report("etcd roles: create -> Available (TLS sample with engine etcd, 3 members and their agents)", waitAvailable(ctx, dc, began))
		available := time.Now()
		GinkgoWriter.Printf("At Available: status.members %+v, currentPrimary %q\n", dc.Status.Members, dc.Status.CurrentPrimary)
		expectMemberAgents(ctx, dc)
		db = &etcdClient{dc: dc.DeepCopy(), ca: caPool(servingSecret(ctx, dc))}
		Eventually(func(g Gomega) {
			leader = expectRolesPublished(ctx, g, dc, db)
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		report("etcd roles: Available -> roles published (status, labels, NAME-rw, NAME-ro)", time.Since(available))
		GinkgoWriter.Printf("etcd's leader %s published as the primary: %+v\n", leader, dc.Status.Members)
	}, NodeTimeout(5*time.Minute))

	It("follows a leader change etcd makes: the leader's pod deleted, the new leader published within the observe interval, never two primaries", func(ctx SpecContext) {
		victim := podsOf(ctx, dc)[leader]
		Expect(victim.Labels).To(HaveKeyWithValue(databasev1alpha1.RoleLabel, string(databasev1alpha1.MemberRolePrimary)))
		watch := watchPrimaries(ctx, dc)
		deleted := time.Now()
		Expect(k8s.Delete(ctx, &victim, client.Preconditions{UID: &victim.UID})).To(Succeed())
		var newLeader string
		Eventually(func(g Gomega) {
			l, err := db.leader(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(l).NotTo(Equal(leader), "etcd still names the deleted pod's member its leader")
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
			g.Expect(dc.Status.CurrentPrimary).To(Equal(l), "status.currentPrimary")
			pods := podsOf(ctx, dc)
			g.Expect(pods[l].Labels).To(HaveKeyWithValue(databasev1alpha1.RoleLabel, string(databasev1alpha1.MemberRolePrimary)))
			g.Expect(readyEndpoints(ctx, g, dc.Namespace, dc.ReadWriteServiceName())).To(Equal([]string{pods[l].Status.PodIP}), "NAME-rw")
			newLeader = l
		}).WithContext(ctx).WithTimeout(rolesChangeBound).WithPolling(rolesSampleEvery).Should(Succeed(),
			"the new leader was not published within %s of the deletion", rolesChangeBound)
		report("etcd roles: leader's pod deleted -> NAME-rw at the new leader etcd elected", time.Since(deleted))
		GinkgoWriter.Printf("Leader %s deleted; etcd elected %s\n", leader, newLeader)

		// The deleted member comes back, a replica; the whole publication agrees with etcd again.
		waitAvailable(ctx, dc, deleted)
		Expect(podsOf(ctx, dc)[leader].UID).NotTo(Equal(victim.UID))
		Eventually(func(g Gomega) {
			g.Expect(expectRolesPublished(ctx, g, dc, db)).To(Equal(newLeader))
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		report("etcd roles: leader's pod deleted -> back, 3 members published (the old leader's a replica)", time.Since(deleted))
		leader = newLeader

		seen := watch.stop()
		reportCount("etcd roles: samples of the labels and NAME-rw during the leader change", len(seen.samples))
		Expect(len(seen.samples)).To(BeNumerically(">", 10))
		Expect(seen.twoLabelled).To(BeEmpty(), "two pods labelled primary at once")
		Expect(seen.twoReady).To(BeEmpty(), "two Ready addresses in NAME-rw's endpoints at once")

		// No pod that etcd does not call leader carries the primary label, nor is routed to by
		// NAME-rw, after the deletion (anything but the deleted pod and the new leader's pod is
		// such a pod). Before da56e72 the deleted leader's successor, under the same name, was
		// labelled primary from its predecessor's read until the next read (11 s on the node).
		pods := podsOf(ctx, dc)
		newPod := pods[newLeader]
		labelled, labelledFor := seen.other(func(s rolesSample) []string { return s.labelled },
			podID(victim.Name, victim.UID), podID(newPod.Name, newPod.UID))
		routed, routedFor := seen.other(func(s rolesSample) []string { return s.ready },
			victim.Status.PodIP, newPod.Status.PodIP)
		report("etcd roles: after the deletion, a pod that is not etcd's leader labelled primary", labelledFor)
		report("etcd roles: after the deletion, NAME-rw routing to a member that is not etcd's leader", routedFor)
		for what, found := range map[string][]string{"labelled primary": labelled, "Ready in NAME-rw": routed} {
			if len(found) > 0 {
				GinkgoWriter.Printf("Not etcd's leader, yet %s in %d samples, from %s to %s\n", what, len(found), found[0], found[len(found)-1])
			}
		}
		Expect(labelled).To(BeEmpty(), "a pod that is not etcd's leader labelled primary")
		Expect(routed).To(BeEmpty(), "NAME-rw routing to a pod that is not etcd's leader")
	}, NodeTimeout(4*time.Minute))

	It("serves the member's role to the operator's client certificate only, on the node: no certificate, another CA's, another name's refused", func(ctx SpecContext) {
		caSecret := &corev1.Secret{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: dc.CASecretName()}, caSecret)).To(Succeed())
		caPEM := caSecret.Data[corev1.TLSCertKey]
		ca := certificatePair(memberagent.NewClientCertificate, caPEM, caSecret.Data[corev1.TLSPrivateKeyKey])
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		pods := podsOf(ctx, dc)
		target := pods[leader]
		agent := memberagent.Agent{
			Address:    net.JoinHostPort(target.Status.PodIP, strconv.Itoa(memberagent.Port)),
			ServerName: target.Name + "." + dc.HeadlessServiceName() + "." + dc.Namespace + ".svc",
		}

		// No client certificate: TLS 1.3 ends the handshake with the server's alert.
		code, err := agentRequest(ctx, agent, caPEM, nil)
		GinkgoWriter.Printf("Agent of %s without a client certificate: %d, %v\n", target.Name, code, err)
		expectAgentRefused(code, err, "without a client certificate")
		Expect(err).To(MatchError(ContainSubstring("certificate required")))

		// The operator's name, from another CA.
		foreignCert, foreignKey := newForeignCA()
		foreignCA := certificatePair(memberagent.NewClientCertificate, foreignCert, foreignKey)
		foreign, err := memberagent.NewClientCertificate(foreignCA, memberagent.OperatorClientName, time.Now(), time.Hour)
		Expect(err).NotTo(HaveOccurred())
		foreignPair, err := tls.X509KeyPair(foreign.CertPEM, foreign.KeyPEM)
		Expect(err).NotTo(HaveOccurred())
		code, err = agentRequest(ctx, agent, caPEM, &foreignPair)
		GinkgoWriter.Printf("Agent of %s with %q from another CA: %d, %v\n", target.Name, memberagent.OperatorClientName, code, err)
		expectAgentRefused(code, err, "with a client certificate of another CA")
		Expect(err).NotTo(MatchError(ContainSubstring("certificate required")), "the certificate was not presented")

		// The cluster's CA, another name: the TLS layer lets it in, the agent answers 403.
		other, err := memberagent.NewClientCertificate(ca, "not-the-operator", time.Now(), time.Hour)
		Expect(err).NotTo(HaveOccurred())
		otherClient, err := memberagent.NewClient(caPEM, other.CertPEM, other.KeyPEM, 5*time.Second)
		Expect(err).NotTo(HaveOccurred())
		_, err = otherClient.Observe(ctx, agent)
		Expect(err).To(MatchError(ContainSubstring("403")), "a client certificate of the cluster's CA for another name")

		// The operator's client certificate: every agent answers its member's role, as published.
		operator, err := memberagent.NewClientCertificate(ca, memberagent.OperatorClientName, time.Now(), time.Hour)
		Expect(err).NotTo(HaveOccurred())
		operatorClient, err := memberagent.NewClient(caPEM, operator.CertPEM, operator.KeyPEM, 5*time.Second)
		Expect(err).NotTo(HaveOccurred())
		published := map[string]databasev1alpha1.MemberRole{}
		for _, m := range dc.Status.Members {
			published[m.Name] = m.Role
		}
		Expect(published).To(HaveLen(etcdMembers))
		for name, p := range pods {
			obs, err := operatorClient.Observe(ctx, memberagent.Agent{
				Address:    net.JoinHostPort(p.Status.PodIP, strconv.Itoa(memberagent.Port)),
				ServerName: name + "." + dc.HeadlessServiceName() + "." + dc.Namespace + ".svc",
			})
			Expect(err).NotTo(HaveOccurred(), name)
			Expect(obs.Member).To(Equal(name))
			Expect(string(published[name])).To(Equal(obs.Role), "the role of %s as its agent reports it and as status.members shows it", name)
			Expect(obs.PositionText).NotTo(BeEmpty())
			Expect(obs.Members).To(HaveLen(etcdMembers))
		}
	}, NodeTimeout(time.Minute))

	It("rolls a new pod template under a writer: the replicas first, one leadership transfer (raft term +1) before the old leader's pod goes, no acknowledged write lost", func(ctx SpecContext) {
		var oldLeader string
		Eventually(func(g Gomega) {
			oldLeader = expectRolesPublished(ctx, g, dc, db)
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		before := podsOf(ctx, dc)
		revision := statefulSet(ctx, Default, dc).Status.UpdateRevision
		var term uint64
		Eventually(func(g Gomega) {
			states := db.raftStates(ctx)
			g.Expect(states).To(HaveLen(etcdMembers))
			term = states[oldLeader].term
			for name, s := range states {
				g.Expect(s.leader).To(Equal(states[oldLeader].member), "%s's leader", name)
				g.Expect(s.term).To(Equal(term), "%s's term", name)
			}
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		GinkgoWriter.Printf("Before the roll: leader %s, raft term %d, revision %s\n", oldLeader, term, revision)

		deletions := watchPodDeletions(ctx, dc)
		raft := watchRaft(ctx, db)
		w := startWriter(ctx, db, "roll")
		began, rolled := rollNewTemplate(ctx, dc, before, revision)
		var newLeader string
		Eventually(func(g Gomega) {
			newLeader = expectRolesPublished(ctx, g, dc, db)
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		tally := w.stop()
		changes := raft.stop()
		deleted := deletions.stop()
		events := rollEvents(ctx, dc, began)
		GinkgoWriter.Printf("Pods deleted:\n%s\nRaft (leader, highest term):\n%s\nThe operator's events:\n%s\n",
			strings.Join(deleted.lines(began), "\n"), strings.Join(changes.lines(began), "\n"), strings.Join(events, "\n"))
		reportRoll("etcd roles", rolled, tally)

		// The replicas first, highest ordinal first, each pod once; the old leader last.
		expectReplicasFirst(deletions, deleted, before, oldLeader)

		// One leader change: the leadership transfer, one raft term; the replicas' restarts
		// (pre-vote) none. It happened before the old leader's pod was deleted: a leader deleted
		// would hand its leadership on while stopping, one term too.
		Expect(newLeader).NotTo(Equal(oldLeader))
		Expect(changes.leaders()).To(Equal([]string{oldLeader, newLeader}), "the leaders the members agreed on, in order")
		Expect(changes.highestTerm()).To(Equal(term+1), "raft terms: one leader change is one term")
		Eventually(func(g Gomega) {
			states := db.raftStates(ctx)
			g.Expect(states).To(HaveLen(etcdMembers))
			for name, s := range states {
				g.Expect(s.term).To(Equal(term+1), "%s's term", name)
				g.Expect(s.leader).To(Equal(states[newLeader].member), "%s's leader", name)
			}
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		moved, ok := changes.firstLed(newLeader)
		Expect(ok).To(BeTrue())
		Expect(moved).To(BeTemporally("<", deleted[len(deleted)-1].at),
			"%s was not seen leading before %s's pod was deleted", newLeader, oldLeader)
		Expect(events).To(ContainElement(HaveSuffix("Switchover: Moved the leadership from " + oldLeader + " to " + newLeader)))
		Expect(slices.DeleteFunc(slices.Clone(events), func(e string) bool { return !strings.Contains(e, " Switchover: ") })).To(HaveLen(1),
			"one leadership transfer")

		// No acknowledged write lost.
		Expect(tally.Acknowledged).NotTo(BeEmpty())
		lost := w.lost(ctx)
		reportCount("etcd roles: acknowledged writes lost in the roll", len(lost))
		Expect(lost).To(BeEmpty(), "acknowledged writes the cluster does not hold")
		leader = newLeader
	}, NodeTimeout(10*time.Minute))

	It("scales etcd 3 -> 5 -> 3 through the scale subresource: each member added before its etcd starts, removed before its pod goes, every key on every member", func(ctx SpecContext) {
		scaleEtcdMembers(ctx, dc, db)
	}, NodeTimeout(12*time.Minute))

	It("deletes the cluster with its Services and certificate Secrets", func(ctx SpecContext) {
		Expect(k8s.Delete(ctx, dc)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), &databasev1alpha1.DatabaseCluster{})).NotTo(Succeed())
			g.Expect(podsOf(ctx, dc)).To(BeEmpty())
			for _, name := range []string{dc.CASecretName(), dc.GeneratedTLSSecretName(), dc.AgentTLSSecretName()} {
				g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: name}, &corev1.Secret{})).NotTo(Succeed(), "Secret %s is left", name)
			}
			for _, name := range []string{dc.ReadWriteServiceName(), dc.ReadOnlyServiceName()} {
				g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: name}, &corev1.Service{})).NotTo(Succeed(), "Service %s is left", name)
			}
		}).WithContext(ctx).Should(Succeed())
	}, NodeTimeout(3*time.Minute))
}

// expectMemberAgents checks that every member's pod runs the operator's agent as a native
// sidecar, in the member mode of engine etcd, serving on the member agent's port.
func expectMemberAgents(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) {
	GinkgoHelper()
	pods := podsOf(ctx, dc)
	Expect(pods).To(HaveLen(etcdMembers))
	for name, p := range pods {
		i := slices.IndexFunc(p.Spec.InitContainers, func(c corev1.Container) bool {
			return c.Name == databasev1alpha1.StorageAgentContainerName
		})
		Expect(i).To(BeNumerically(">=", 0), "%s has no agent", name)
		agent := p.Spec.InitContainers[i]
		Expect(agent.RestartPolicy).NotTo(BeNil())
		Expect(*agent.RestartPolicy).To(Equal(corev1.ContainerRestartPolicyAlways), name)
		Expect(agent.Image).To(Equal(operatorImage), "%s: the agent runs the operator's image", name)
		Expect(agent.Args).To(ContainElements("--engine=etcd", "--member-listen=:9191", "--database-url=https://127.0.0.1:2379"), name)
		Expect(agent.Ports).To(ContainElement(HaveField("ContainerPort", databasev1alpha1.MemberAgentPort)), name)
		status := slices.IndexFunc(p.Status.InitContainerStatuses, func(s corev1.ContainerStatus) bool {
			return s.Name == databasev1alpha1.StorageAgentContainerName
		})
		Expect(status).To(BeNumerically(">=", 0), name)
		Expect(p.Status.InitContainerStatuses[status].Started).To(HaveValue(BeTrue()), "%s: the agent has not started", name)
	}
}

// expectRolesPublished checks, asserting with g, that the operator publishes the leader etcd
// reports as the only primary and every other member as a replica: status.members (each with
// its raft position), status.currentPrimary, the pods' role labels, the Ready addresses of
// NAME-rw (the leader's alone) and NAME-ro (the others'), and no split brain. It returns the
// leader's name.
func expectRolesPublished(ctx context.Context, g Gomega, dc *databasev1alpha1.DatabaseCluster, db *etcdClient) string {
	leader, err := db.leader(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
	pods := podsOf(ctx, dc)
	g.Expect(pods).To(HaveLen(etcdMembers))
	g.Expect(dc.Status.Members).To(HaveLen(etcdMembers))
	var replicaIPs []string
	for _, m := range dc.Status.Members {
		g.Expect(pods).To(HaveKey(m.Name))
		want := databasev1alpha1.MemberRoleReplica
		if m.Name == leader {
			want = databasev1alpha1.MemberRolePrimary
		} else {
			replicaIPs = append(replicaIPs, pods[m.Name].Status.PodIP)
		}
		g.Expect(m.Role).To(Equal(want), "status.members: %s (etcd's leader: %s)", m.Name, leader)
		_, err := strconv.ParseUint(m.Position, 10, 64)
		g.Expect(err).NotTo(HaveOccurred(), "the position of %s is not a raft index: %q", m.Name, m.Position)
		g.Expect(pods[m.Name].Labels).To(HaveKeyWithValue(databasev1alpha1.RoleLabel, string(want)), "the role label of %s", m.Name)
	}
	g.Expect(dc.Status.CurrentPrimary).To(Equal(leader))
	g.Expect(readyEndpoints(ctx, g, dc.Namespace, dc.ReadWriteServiceName())).To(Equal([]string{pods[leader].Status.PodIP}), "NAME-rw")
	slices.Sort(replicaIPs)
	g.Expect(readyEndpoints(ctx, g, dc.Namespace, dc.ReadOnlyServiceName())).To(Equal(replicaIPs), "NAME-ro")
	if degraded := apimeta.FindStatusCondition(dc.Status.Conditions, conditions.Degraded); degraded != nil {
		g.Expect(degraded.Reason).NotTo(Equal(databasev1alpha1.ReasonSplitBrain), degraded.Message)
	}
	return leader
}

// readyEndpoints lists the addresses of the Ready endpoints of the Service name's
// EndpointSlices, sorted: where the Service routes. It asserts with g.
func readyEndpoints(ctx context.Context, g Gomega, namespace, name string) []string {
	ready, _, err := listEndpoints(ctx, namespace, name)
	g.Expect(err).NotTo(HaveOccurred())
	return ready
}

// listEndpoints lists the addresses of the Service name's EndpointSlices (discovery.k8s.io/v1),
// sorted: the Ready ones, and all of them (terminating ones included).
func listEndpoints(ctx context.Context, namespace, name string) (ready, all []string, err error) {
	var list discoveryv1.EndpointSliceList
	if err := k8s.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabels{discoveryv1.LabelServiceName: name}); err != nil {
		return nil, nil, err
	}
	ready, all = []string{}, []string{}
	for _, slice := range list.Items {
		for _, e := range slice.Endpoints {
			all = append(all, e.Addresses...)
			// A nil ready condition is to be read as ready.
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				ready = append(ready, e.Addresses...)
			}
		}
	}
	slices.Sort(ready)
	slices.Sort(all)
	return ready, all, nil
}

// leader asks each member etcd for its status (/v3/maintenance/status, over TLS to the member
// itself) and returns the name of the member they name their leader. A member that does not
// answer (its pod restarting) is left out, but a majority must answer, all of them must name the
// same leader, and the leader must be one of them.
func (e *etcdClient) leader(ctx context.Context) (string, error) {
	names := map[string]string{}
	leaders := map[string][]string{}
	var failed []error
	for _, m := range e.members(ctx) {
		var out struct {
			Header struct {
				MemberID string `json:"member_id"`
			} `json:"header"`
			Leader string `json:"leader"`
		}
		name, _, _ := strings.Cut(m.serverName, ".")
		if err := e.try(ctx, m, "/v3/maintenance/status", []byte("{}"), &out); err != nil {
			failed = append(failed, fmt.Errorf("%s: %w", name, err))
			continue
		}
		names[out.Header.MemberID] = name
		leaders[out.Leader] = append(leaders[out.Leader], name)
	}
	switch {
	case len(names) < etcdMembers/2+1:
		return "", fmt.Errorf("%d members answered: %w", len(names), errors.Join(failed...))
	case len(leaders) != 1:
		return "", fmt.Errorf("the members name different leaders: %v", leaders)
	}
	id := slices.Collect(maps.Keys(leaders))[0]
	name, ok := names[id]
	if !ok || id == "" || id == "0" {
		return "", fmt.Errorf("the leader %q is none of the members that answered %v", id, names)
	}
	return name, nil
}

// primariesWatch samples, every rolesSampleEvery until stopped, the cluster's pods labelled
// primary and the Ready addresses of NAME-rw.
type primariesWatch struct {
	done chan struct{}
	wg   sync.WaitGroup

	mu   sync.Mutex
	seen primariesSeen
}

// primariesSeen is what a primariesWatch saw.
type primariesSeen struct {
	samples []rolesSample
	// twoLabelled and twoReady are the moments with two or more pods labelled primary, and with
	// two or more Ready addresses in NAME-rw.
	twoLabelled, twoReady []string
}

// rolesSample is one sample: when, the pods labelled primary (podID), NAME-rw's Ready addresses.
type rolesSample struct {
	at       time.Duration
	labelled []string
	ready    []string
}

// other returns the samples in which of lists anything but allowed, and the time from the first
// of them to the end of the last (a sample stands for rolesSampleEvery).
func (s primariesSeen) other(of func(rolesSample) []string, allowed ...string) ([]string, time.Duration) {
	var found []string
	var first, last time.Duration
	for _, sample := range s.samples {
		if !slices.ContainsFunc(of(sample), func(v string) bool { return !slices.Contains(allowed, v) }) {
			continue
		}
		if len(found) == 0 {
			first = sample.at
		}
		last = sample.at
		found = append(found, fmt.Sprintf("+%s %v", sample.at, of(sample)))
	}
	if len(found) == 0 {
		return nil, 0
	}
	return found, last - first + rolesSampleEvery
}

// podID names a pod and its incarnation.
func podID(name string, uid types.UID) string {
	return fmt.Sprintf("%s(%s)", name, string(uid)[:min(8, len(uid))])
}

// watchPrimaries starts a primariesWatch of dc. Each change of what it sees is written to
// GinkgoWriter, so that the report tells how the labels and NAME-rw moved.
func watchPrimaries(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) *primariesWatch {
	w := &primariesWatch{done: make(chan struct{})}
	// Its own copies of the names: the spec re-reads dc meanwhile.
	selector, namespace, rw := dc.SelectorLabels(), dc.Namespace, dc.ReadWriteServiceName()
	began := time.Now()
	w.wg.Go(func() {
		defer GinkgoRecover()
		last := ""
		for {
			select {
			case <-w.done:
				return
			case <-ctx.Done():
				return
			case <-time.After(rolesSampleEvery):
			}
			var pods corev1.PodList
			if err := k8s.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabels(selector)); err != nil {
				continue
			}
			var labelled []string
			for _, p := range pods.Items {
				if p.Labels[databasev1alpha1.RoleLabel] == string(databasev1alpha1.MemberRolePrimary) {
					labelled = append(labelled, podID(p.Name, p.UID))
				}
			}
			slices.Sort(labelled)
			ready, all, err := listEndpoints(ctx, namespace, rw)
			if err != nil {
				continue
			}
			at := time.Since(began).Round(time.Millisecond)
			seen := fmt.Sprintf("labelled primary %v, NAME-rw Ready %v (listed %v)", labelled, ready, all)
			w.mu.Lock()
			w.seen.samples = append(w.seen.samples, rolesSample{at: at, labelled: labelled, ready: ready})
			if len(labelled) > 1 {
				w.seen.twoLabelled = append(w.seen.twoLabelled, fmt.Sprintf("+%s %v", at, labelled))
			}
			if len(ready) > 1 {
				w.seen.twoReady = append(w.seen.twoReady, fmt.Sprintf("+%s %v", at, ready))
			}
			w.mu.Unlock()
			if seen != last {
				GinkgoWriter.Printf("+%s %s\n", at, seen)
				last = seen
			}
		}
	})
	return w
}

// stop ends the watch and returns what it saw.
func (w *primariesWatch) stop() primariesSeen {
	close(w.done)
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen
}

// agentRequest asks the agent for its member (GET /v1/member) over TLS 1.3, trusting the CA
// caPEM for the agent's server name, presenting the client pair cert when not nil; it returns the
// status code of an answer, or the error of the request.
func agentRequest(ctx context.Context, agent memberagent.Agent, caPEM []byte, cert *tls.Certificate) (int, error) {
	pool := x509.NewCertPool()
	Expect(pool.AppendCertsFromPEM(caPEM)).To(BeTrue())
	config := &tls.Config{MinVersion: tls.VersionTLS13, RootCAs: pool, ServerName: agent.ServerName}
	if cert != nil {
		// Presented whatever CAs the server names as acceptable: crypto/tls would otherwise keep
		// a certificate of another CA to itself, and the server would see none.
		config.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: config, DisableKeepAlives: true}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+agent.Address+memberagent.MemberPath, nil)
	Expect(err).NotTo(HaveOccurred())
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// expectAgentRefused: a request to the agent failed, in the TLS handshake (the server's alert) or
// with a 4xx answer; never an observation.
func expectAgentRefused(code int, err error, what string) {
	GinkgoHelper()
	if err != nil {
		Expect(err.Error()).To(ContainSubstring("tls:"), "%s: the request failed, but not for TLS", what)
		return
	}
	Expect(code).To(And(BeNumerically(">=", 400), BeNumerically("<", 500)), "%s: the agent answered", what)
}

// certificatePair returns the PEM pair as the certificate pair that the function issue (the
// signature of memberagent.NewClientCertificate) takes. That type lives in
// controllers/internal/certs, which Go lets no package outside controllers import: this builds
// it from its fields CertPEM and KeyPEM.
func certificatePair[P any](_ func(P, string, time.Time, time.Duration) (P, error), certPEM, keyPEM []byte) P {
	GinkgoHelper()
	var pair P
	v := reflect.ValueOf(&pair).Elem()
	for field, value := range map[string][]byte{"CertPEM": certPEM, "KeyPEM": keyPEM} {
		f := v.FieldByName(field)
		Expect(f.IsValid()).To(BeTrue(), "the certificate pair has no field %s", field)
		f.SetBytes(value)
	}
	return pair
}

// newForeignCA returns a self-signed CA's certificate and key, PEM: a CA the cluster never
// trusted (controllers/internal/certs.NewCA, which builds the operator's, cannot be imported here).
func newForeignCA() (certPEM, keyPEM []byte) {
	GinkgoHelper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	now := time.Now()
	template := &x509.Certificate{
		SerialNumber:          big.NewInt(now.UnixNano()),
		Subject:               pkix.Name{CommonName: "nodee2e foreign CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, key.Public(), key)
	Expect(err).NotTo(HaveOccurred())
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	Expect(err).NotTo(HaveOccurred())
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
}

// rollEnv is an environment variable of etcd's container that etcd does not read (it reads
// ETCD_*): setting it changes the pod template and nothing of etcd's behaviour.
const rollEnv = "NODEE2E_ROLLED_AT"

// rollBound is how long a roll of the 3 members may take: for each, the operator's read of the
// members, the pod's deletion (etcd's graceful stop), its new pod Ready and read again; and the
// leadership transfer.
const rollBound = 5 * time.Minute

// raftState is one member's raft state as it reports it: its ID, its leader's, its term.
type raftState struct {
	member, leader string
	term           uint64
}

// raftStates asks each member etcd for its status (/v3/maintenance/status, over TLS to the
// member itself) and returns the state of each that answered, by name.
func (e *etcdClient) raftStates(ctx context.Context) map[string]raftState {
	states := map[string]raftState{}
	for _, m := range e.members(ctx) {
		var out struct {
			Header struct {
				MemberID string `json:"member_id"`
			} `json:"header"`
			Leader   string `json:"leader"`
			RaftTerm uint64 `json:"raftTerm,string"`
		}
		if err := e.try(ctx, m, "/v3/maintenance/status", []byte("{}"), &out); err != nil {
			continue
		}
		name, _, _ := strings.Cut(m.serverName, ".")
		states[name] = raftState{member: out.Header.MemberID, leader: out.Leader, term: out.RaftTerm}
	}
	return states
}

// raftWatch samples the members' raft states every rolesSampleEvery until stopped and keeps
// each sample that differs from the one before.
type raftWatch struct {
	done chan struct{}
	wg   sync.WaitGroup

	mu      sync.Mutex
	changes raftChanges
}

// raftChange is a sample: when it was complete, the leader every member that answered names
// ("" when they differ or none answered), the highest term any reported, and what each said.
type raftChange struct {
	at     time.Time
	leader string
	term   uint64
	seen   string
}

// raftChanges are the samples of a raftWatch that differed from the one before, in order.
type raftChanges []raftChange

// watchRaft starts a raftWatch of db's members.
func watchRaft(ctx context.Context, db *etcdClient) *raftWatch {
	w := &raftWatch{done: make(chan struct{})}
	w.wg.Go(func() {
		defer GinkgoRecover()
		names := map[string]string{} // member ID -> name, as learnt from the members' answers
		last := ""
		for {
			states := db.raftStates(ctx)
			change := raftChange{at: time.Now()}
			leaders := map[string]bool{}
			var seen []string
			for name, s := range states {
				names[s.member] = name
				leaders[s.leader] = true
				change.term = max(change.term, s.term)
			}
			for name, s := range states {
				seen = append(seen, fmt.Sprintf("%s: term %d, leader %s", name, s.term, cmp.Or(names[s.leader], "id "+s.leader)))
			}
			slices.Sort(seen)
			if len(leaders) == 1 {
				id := slices.Collect(maps.Keys(leaders))[0]
				change.leader = cmp.Or(names[id], "id "+id)
			}
			change.seen = strings.Join(seen, "; ")
			if change.seen != last {
				w.mu.Lock()
				w.changes = append(w.changes, change)
				w.mu.Unlock()
				last = change.seen
			}
			select {
			case <-w.done:
				return
			case <-ctx.Done():
				return
			case <-time.After(rolesSampleEvery):
			}
		}
	})
	return w
}

// stop ends the watch and returns what it saw.
func (w *raftWatch) stop() raftChanges {
	close(w.done)
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.changes
}

// leaders are the leaders the members agreed on, in order, each change once.
func (c raftChanges) leaders() []string {
	var leaders []string
	for _, s := range c {
		if s.leader != "" && (len(leaders) == 0 || leaders[len(leaders)-1] != s.leader) {
			leaders = append(leaders, s.leader)
		}
	}
	return leaders
}

// highestTerm is the highest term any member reported.
func (c raftChanges) highestTerm() uint64 {
	var term uint64
	for _, s := range c {
		term = max(term, s.term)
	}
	return term
}

// firstLed is the end of the first sample in which every member that answered named leader.
func (c raftChanges) firstLed(leader string) (time.Time, bool) {
	for _, s := range c {
		if s.leader == leader {
			return s.at, true
		}
	}
	return time.Time{}, false
}

// lines prints each sample, its time since began.
func (c raftChanges) lines(began time.Time) []string {
	var lines []string
	for _, s := range c {
		lines = append(lines, fmt.Sprintf("+%s leader %q, term %d (%s)", s.at.Sub(began).Round(time.Millisecond), s.leader, s.term, s.seen))
	}
	return lines
}

// podDeletions watches the pods of a cluster and records each deletion that begins (the
// deletionTimestamp set, or the pod gone), each pod (UID) once, when the watch saw it.
type podDeletions struct {
	watch watch.Interface
	wg    sync.WaitGroup

	mu      sync.Mutex
	deleted deletedPods
	stopped bool
	// ended says that the watch ended before stop.
	ended bool
}

// deletedPod is a pod whose deletion began, at when the watch saw it.
type deletedPod struct {
	name string
	uid  types.UID
	at   time.Time
}

// deletedPods are deleted pods in the order of their deletions.
type deletedPods []deletedPod

// watchPodDeletions starts a podDeletions of dc's pods, from now: a watch from the list's
// resourceVersion sees every change after it, in the API server's order.
func watchPodDeletions(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) *podDeletions {
	GinkgoHelper()
	pods := clientset.CoreV1().Pods(dc.Namespace)
	selector := labels.SelectorFromSet(dc.SelectorLabels()).String()
	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: selector})
	Expect(err).NotTo(HaveOccurred())
	w, err := pods.Watch(ctx, metav1.ListOptions{LabelSelector: selector, ResourceVersion: list.ResourceVersion})
	Expect(err).NotTo(HaveOccurred())
	d := &podDeletions{watch: w}
	d.wg.Go(func() {
		seen := map[types.UID]bool{}
		for event := range w.ResultChan() {
			pod, ok := event.Object.(*corev1.Pod)
			if !ok || seen[pod.UID] || (event.Type != watch.Deleted && pod.DeletionTimestamp == nil) {
				continue
			}
			seen[pod.UID] = true
			d.mu.Lock()
			d.deleted = append(d.deleted, deletedPod{name: pod.Name, uid: pod.UID, at: time.Now()})
			d.mu.Unlock()
		}
		d.mu.Lock()
		d.ended = !d.stopped
		d.mu.Unlock()
	})
	return d
}

// stop ends the watch and returns the deletions it saw.
func (d *podDeletions) stop() deletedPods {
	d.mu.Lock()
	d.stopped = true
	d.mu.Unlock()
	d.watch.Stop()
	d.wg.Wait()
	return d.deleted
}

// names are the names of the deleted pods, in order.
func (d deletedPods) names() []string {
	var names []string
	for _, p := range d {
		names = append(names, p.name)
	}
	return names
}

// lines prints each deletion, its time since began.
func (d deletedPods) lines(began time.Time) []string {
	var lines []string
	for _, p := range d {
		lines = append(lines, fmt.Sprintf("+%s %s", p.at.Sub(began).Round(time.Millisecond), podID(p.name, p.uid)))
	}
	return lines
}

// rollNewTemplate lets a writer started before it go on alone for 2 s (so that a gap at the
// change is the cluster's), changes dc's pod template (the variable rollEnv), and waits until
// each member pod of before was replaced by a Ready pod of the StatefulSet's new revision
// (before's was revision) and dc is Available. It returns when the change was made and how long
// the roll took.
func rollNewTemplate(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, before map[string]corev1.Pod, revision string) (time.Time, time.Duration) {
	GinkgoHelper()
	Expect(pause(ctx, 2*time.Second)).To(Succeed())
	began := time.Now()
	update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) {
		dc.Spec.Env = append(dc.Spec.Env, corev1.EnvVar{Name: rollEnv, Value: began.UTC().Format(time.RFC3339)})
	})
	Eventually(func(g Gomega) {
		sts := statefulSet(ctx, g, dc)
		g.Expect(sts.Status.ObservedGeneration).To(Equal(sts.Generation))
		g.Expect(sts.Status.UpdateRevision).NotTo(Equal(revision))
		pods := podsOf(ctx, dc)
		g.Expect(pods).To(HaveLen(len(before)))
		for name, p := range pods {
			g.Expect(p.UID).NotTo(Equal(before[name].UID), "%s was not replaced", name)
			g.Expect(p.Labels).To(HaveKeyWithValue(appsv1.ControllerRevisionHashLabelKey, sts.Status.UpdateRevision), name)
			g.Expect(p.Spec.Containers[0].Env).To(ContainElement(HaveField("Name", rollEnv)), name)
			g.Expect(isReady(&p)).To(BeTrue(), "%s is not Ready", name)
		}
	}).WithContext(ctx).WithTimeout(rollBound).WithPolling(time.Second).Should(Succeed(),
		"the members were not all replaced within %s", rollBound)
	return began, waitAvailable(ctx, dc, began)
}

// reportRoll reports a roll of 3 members under a writer: its time and the writer's tally, as
// the figures named after prefix ("etcd roles").
func reportRoll(prefix string, rolled time.Duration, tally writeTally) {
	report(prefix+": a new pod template -> 3 members replaced, Available (with a writer)", rolled)
	reportCount(prefix+": writes acknowledged during the roll", len(tally.Acknowledged))
	reportCount(prefix+": writes failed during the roll", tally.Failed)
	report(prefix+": longest time between two acknowledged writes during the roll", tally.LongestGap)
}

// expectReplicasFirst checks the pods a roll deleted: each member pod of before once, the
// others than primary first, highest ordinal first, primary last.
func expectReplicasFirst(deletions *podDeletions, deleted deletedPods, before map[string]corev1.Pod, primary string) {
	GinkgoHelper()
	replicas := slices.Sorted(maps.Keys(before))
	replicas = slices.DeleteFunc(replicas, func(name string) bool { return name == primary })
	slices.Reverse(replicas)
	Expect(deletions.ended).To(BeFalse(), "the watch of the pods ended before the roll did")
	Expect(deleted.names()).To(Equal(append(replicas, primary)), "the pods deleted, in order")
	for _, d := range deleted {
		Expect(d.uid).To(Equal(before[d.name].UID), "%s: a pod of the new template was deleted", d.name)
	}
}

// rollEvents lists the operator's events about dc of an ordered update since since (the pods
// it deleted, the leadership it moved, the switchover it saw done), in the order they were
// recorded, as "+<since since> Type Reason: note", with " (xN)" for a series of N.
func rollEvents(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, since time.Time) []string {
	GinkgoHelper()
	return roleEvents(ctx, dc, since, "MemberUpdated", "Switchover", "SwitchoverDone")
}

// roleEvents are the events of dc since since with one of reasons, in order, each as
// "+offset Type Reason: note".
func roleEvents(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, since time.Time, reasons ...string) []string {
	GinkgoHelper()
	var list eventsv1.EventList
	Expect(k8s.List(ctx, &list, client.InNamespace(dc.Namespace))).To(Succeed())
	events := slices.DeleteFunc(list.Items, func(e eventsv1.Event) bool {
		return e.Regarding.Kind != "DatabaseCluster" || e.Regarding.Name != dc.Name || e.EventTime.Time.Before(since) ||
			!slices.Contains(reasons, e.Reason)
	})
	slices.SortFunc(events, func(a, b eventsv1.Event) int { return a.EventTime.Compare(b.EventTime.Time) })
	var notes []string
	for _, e := range events {
		note := fmt.Sprintf("+%s %s %s: %s", e.EventTime.Sub(since).Round(time.Millisecond), e.Type, e.Reason, e.Note)
		if e.Series != nil {
			note += fmt.Sprintf(" (x%d)", e.Series.Count)
		}
		notes = append(notes, note)
	}
	return notes
}

// withEtcdEngine gives dc, an etcd sample, spec.engine etcd: the operator then owns etcd's
// membership, so the sample's static --initial-cluster and --initial-cluster-state go (admission
// refuses them with an engine); each member is announced its initial cluster instead.
func withEtcdEngine(dc *databasev1alpha1.DatabaseCluster) {
	dc.Spec.Engine = databasev1alpha1.EngineEtcd
	dc.Spec.Args = slices.DeleteFunc(dc.Spec.Args, func(arg string) bool {
		return strings.HasPrefix(arg, "--initial-cluster=") || strings.HasPrefix(arg, "--initial-cluster-state=")
	})
}
