//go:build linux && node

package nodee2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// The operand: the etcd sample of config/samples, applied as it is. Its image
// (gcr.io/etcd-development/etcd:vX.Y.Z, the version hack/node/go.mod builds) is in the node's
// image store under that exact reference; etcdImageV2 is the same static etcd under another
// reference and config (ENTRYPOINT, user 65532), so that an image change really rolls.
const (
	etcdSampleFile = "database_v1alpha1_databasecluster_etcd.yaml"
	etcdImageV2    = "database-operator.test/etcd:v2"
	etcdMembers    = 3
	etcdKeys       = 3000
	etcdPrefix     = "data/"
)

// etcdStory, one ordered story: the operator (0.4.0, after the upgrade story) runs in pods on
// the node, then reconciles the etcd sample through every change, the loss of its leader included.
func etcdStory() {
	var (
		dc          *databasev1alpha1.DatabaseCluster
		db          *etcdClient
		sampleImage string
	)

	It("runs the operator in pods: restricted Pod Security enforced, non-root, probes passing, one leader", func(ctx SpecContext) {
		expectRestrictedEnforced(ctx, operatorNamespace)
		pods := waitOperatorPods(ctx, operatorImage)
		for i := range pods {
			status := managerStatus(&pods[i])
			Expect(status.Ready).To(BeTrue())
			Expect(status.RestartCount).To(BeZero(), "pod %s restarted", pods[i].Name)
			expectHardenedProcess(ctx, &pods[i])
		}
		expectProbesPass(ctx, pods)
		leader := waitLeaderAmong(ctx, pods)
		// Pod logs work (the API server reaches the kubelet), and the leader's says how it got there.
		Eventually(func(g Gomega) {
			log, err := clientset.CoreV1().Pods(operatorNamespace).GetLogs(leader, &corev1.PodLogOptions{Container: managerContainer}).DoRaw(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(strings.Contains(string(log), `"msg":"Successfully acquired lease","lock":"`+operatorNamespace+"/"+leaseName+`"`)).To(BeTrue(),
				"the leader's log says nothing of acquiring the Lease:\n%s", log)
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		GinkgoWriter.Printf("Operator pods %s and %s Ready; %s holds Lease %s\n", pods[0].Name, pods[1].Name, leader, leaseName)
	}, NodeTimeout(3*time.Minute))

	It("serves metrics over HTTPS to a token allowed to read them, and refuses any other", func(ctx SpecContext) {
		ns := newNamespace(ctx, "metrics")
		reader := serviceAccountToken(ctx, ns, "prometheus")
		bindMetricsReader(ctx, ns, "prometheus")
		stranger := serviceAccountToken(ctx, ns, "stranger")
		pods := waitOperatorPods(ctx, operatorImage)
		leader := waitLeaderAmong(ctx, pods)
		for _, p := range pods {
			addr := net.JoinHostPort(p.Status.PodIP, "8443")
			code, body := scrapeMetrics(ctx, addr, "")
			Expect(code).To(Equal(http.StatusUnauthorized), "%s without a token: %s", p.Name, body)
			code, body = scrapeMetrics(ctx, addr, stranger)
			Expect(code).To(Equal(http.StatusForbidden), "%s with a token not allowed /metrics: %s", p.Name, body)
			code, body = scrapeMetrics(ctx, addr, reader)
			Expect(code).To(Equal(http.StatusOK), "%s with the metrics-reader token: %s", p.Name, body)
			Expect(hasSample(body, "go_goroutines ")).To(BeTrue(), "%s: no go_goroutines", p.Name)
			// Only the leader runs the controllers and says it leads.
			leads := p.Name == leader
			Expect(hasSample(body, leaderMetric)).To(Equal(leads), "%s (leader: %v): %s", p.Name, leads, leaderMetric)
			Expect(hasSample(body, `controller_runtime_reconcile_total{controller="databasecluster"`)).To(Equal(leads),
				"%s (leader: %v): the DatabaseCluster controller's reconcile counter", p.Name, leads)
		}
		// Through the bundle's Service, as Prometheus finds it.
		svc := &corev1.Service{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: metricsService}, svc)).To(Succeed())
		Eventually(func(g Gomega) {
			code, body := scrapeMetrics(ctx, net.JoinHostPort(svc.Spec.ClusterIP, "8443"), reader)
			g.Expect(code).To(Equal(http.StatusOK), body)
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
	}, NodeTimeout(2*time.Minute))

	It("runs the etcd sample of config/samples as it is: bootstraps through the headless Service, serves keys through the client Service", func(ctx SpecContext) {
		ns := newNamespace(ctx, "etcd")
		dc = sampleCluster(ns, etcdSampleFile)
		sampleImage = dc.Spec.Image
		Expect(sampleImage).To(HavePrefix("gcr.io/etcd-development/etcd:v"))
		began := time.Now()
		Expect(k8s.Create(ctx, dc)).To(Succeed())
		report("etcd sample: create -> Available (3 members, real node)", waitAvailable(ctx, dc, began))
		expectQuorumBudget(ctx, dc)
		for _, p := range podsOf(ctx, dc) {
			Expect(p.Spec.Containers[0].Image).To(Equal(sampleImage))
			Expect(p.Spec.SecurityContext.RunAsUser).To(Equal(dc.Spec.SecurityContext.RunAsUser))
		}
		db = &etcdClient{dc: dc.DeepCopy()}
		Eventually(func(g Gomega) { g.Expect(db.put(ctx, "probe", "1")).To(Succeed()) }).WithContext(ctx).Should(Succeed())
		db.writeThroughService(ctx, fmt.Sprintf("etcd: %d keys written", etcdKeys))
		reportCount("etcd keys written", etcdKeys)
	}, NodeTimeout(6*time.Minute))

	It("keeps every key and its quorum through a rolling image update from the sample's image to v2", func(ctx SpecContext) {
		began := time.Now()
		rolled := db.duringChange(ctx, func() {
			update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Image = etcdImageV2 })
			waitAvailable(ctx, dc, began)
			Expect(dc.Status.CurrentImage).To(Equal(etcdImageV2))
		})
		report("etcd: rolling update of 3 members sample -> v2", time.Since(began))
		Expect(rolled).To(BeNumerically(">", 0))
		for _, p := range podsOf(ctx, dc) {
			Expect(p.Spec.Containers[0].Image).To(Equal(etcdImageV2))
		}
		db.expectAll(ctx)
	}, NodeTimeout(8*time.Minute))

	It("keeps every key through a restart on demand", func(ctx SpecContext) {
		before := podsOf(ctx, dc)
		began := time.Now()
		db.duringChange(ctx, func() {
			update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) {
				if dc.Annotations == nil {
					dc.Annotations = map[string]string{}
				}
				dc.Annotations[databasev1alpha1.RestartedAtAnnotation] = time.Now().UTC().Format(time.RFC3339)
			})
			Eventually(func(g Gomega) {
				for name, p := range podsOf(ctx, dc) {
					g.Expect(p.UID).NotTo(Equal(before[name].UID), "pod %s was not restarted", name)
				}
			}).WithContext(ctx).Should(Succeed())
			waitAvailable(ctx, dc, began)
		})
		report("etcd: restart annotation, 3 members rolled", time.Since(began))
		db.expectAll(ctx)
	}, NodeTimeout(8*time.Minute))

	It("keeps every key when a member's pod is deleted", func(ctx SpecContext) {
		began := time.Now()
		victim := podsOf(ctx, dc)[dc.StatefulSetName()+"-1"]
		Expect(k8s.Delete(ctx, &victim)).To(Succeed())
		Eventually(func(g Gomega) {
			p := podsOf(ctx, dc)[victim.Name]
			g.Expect(p.UID).NotTo(Equal(victim.UID))
		}).WithContext(ctx).Should(Succeed())
		waitAvailable(ctx, dc, began)
		report("etcd: deleted member back and Available", time.Since(began))
		db.expectAll(ctx)
	}, NodeTimeout(5*time.Minute))

	It("keeps every key and every pod through storage growth", func(ctx SpecContext) {
		before := podsOf(ctx, dc)
		began := time.Now()
		update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Storage.Size = "2Gi" })
		Eventually(func(g Gomega) {
			var claims corev1.PersistentVolumeClaimList
			g.Expect(k8s.List(ctx, &claims, client.InNamespace(dc.Namespace))).To(Succeed())
			g.Expect(claims.Items).To(HaveLen(etcdMembers))
			for _, c := range claims.Items {
				size := c.Status.Capacity[corev1.ResourceStorage]
				g.Expect(size.Cmp(resource.MustParse("2Gi"))).To(Equal(0), "claim %s", c.Name)
			}
			g.Expect(statefulSet(ctx, g, dc).Spec.VolumeClaimTemplates[0].Spec.Resources.Requests.Storage().String()).To(Equal("2Gi"))
		}).WithContext(ctx).Should(Succeed())
		waitAvailable(ctx, dc, began)
		report("etcd: storage 1Gi -> 2Gi", time.Since(began))
		for name, p := range podsOf(ctx, dc) {
			Expect(p.UID).To(Equal(before[name].UID), "pod %s kept running through the resize", name)
		}
		db.expectAll(ctx)
	}, NodeTimeout(5*time.Minute))

	It("keeps every key through hibernation: no member runs, the claims stay, the wake brings the same data back", func(ctx SpecContext) {
		claims := claimUIDs(ctx, dc)
		Expect(claims).To(HaveLen(etcdMembers))
		began := time.Now()
		update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Hibernated = true })
		Eventually(func(g Gomega) {
			g.Expect(podsOf(ctx, dc)).To(BeEmpty())
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
			hibernated := apimeta.FindStatusCondition(dc.Status.Conditions, databasev1alpha1.ConditionHibernated)
			g.Expect(hibernated).NotTo(BeNil())
			g.Expect(hibernated.Reason).To(Equal(databasev1alpha1.ReasonHibernated))
		}).WithContext(ctx).Should(Succeed())
		report("etcd: hibernate (3 members -> 0 pods)", time.Since(began))
		Expect(claimUIDs(ctx, dc)).To(Equal(claims), "hibernation kept every claim")

		began = time.Now()
		update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Hibernated = false })
		report("etcd: wake (0 pods -> 3 members Available)", waitAvailable(ctx, dc, began))
		Expect(claimUIDs(ctx, dc)).To(Equal(claims), "the members came back on the same claims")
		db.expectAll(ctx)
	}, NodeTimeout(6*time.Minute))

	It("keeps every key and its quorum when the operator's leader is killed mid-rollout", func(ctx SpecContext) {
		began := time.Now()
		var killed corev1.Pod
		var oldIdentity string
		db.duringChange(ctx, func() {
			update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Image = sampleImage })
			// The roll has begun: the StatefulSet carries the sample's image and not every member
			// runs it yet.
			Eventually(func(g Gomega) {
				sts := statefulSet(ctx, g, dc)
				g.Expect(sts.Spec.Template.Spec.Containers[0].Image).To(Equal(sampleImage))
				g.Expect(sts.Status.ObservedGeneration).To(Equal(sts.Generation))
				g.Expect(sts.Status.UpdatedReplicas).To(And(BeNumerically(">=", 1), BeNumerically("<", etcdMembers)))
			}).WithContext(ctx).WithPolling(50 * time.Millisecond).Should(Succeed())
			var leader string
			oldIdentity, leader = leaseHolder(ctx)
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: leader}, &killed)).To(Succeed())
			Expect(syscall.Kill(managerPID(ctx, &killed), syscall.SIGKILL)).To(Succeed())
			killedAt := time.Now()
			GinkgoWriter.Printf("Killed the leader %s (SIGKILL) with %d/%d members updated\n", leader, statefulSet(ctx, Default, dc).Status.UpdatedReplicas, etcdMembers)
			Eventually(func(g Gomega) {
				identity, _ := leaseHolder(ctx)
				g.Expect(identity).NotTo(BeEmpty())
				g.Expect(identity).NotTo(Equal(oldIdentity))
			}).WithContext(ctx).Should(Succeed(), "no new leader after the kill")
			report("operator leader killed -> a new leader holds the Lease", time.Since(killedAt))
			waitAvailable(ctx, dc, began)
		})
		report("etcd: rolling update v2 -> the sample's image with the operator's leader killed", time.Since(began))
		for _, p := range podsOf(ctx, dc) {
			Expect(p.Spec.Containers[0].Image).To(Equal(sampleImage))
		}
		// The kubelet restarted the killed manager, and its probes pass again.
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(&killed), &killed)).To(Succeed())
			status := managerStatus(&killed)
			g.Expect(status.RestartCount).To(BeEquivalentTo(1))
			g.Expect(status.LastTerminationState.Terminated).NotTo(BeNil())
			g.Expect(status.LastTerminationState.Terminated.ExitCode).To(BeEquivalentTo(137))
			g.Expect(status.Ready).To(BeTrue())
		}).WithContext(ctx).Should(Succeed())
		db.expectAll(ctx)
		reportCount("etcd keys read back after every change", etcdKeys)
		reportCount("etcd keys lost", 0)
	}, NodeTimeout(8*time.Minute))

	stuckRolloutSpecs(func() (*databasev1alpha1.DatabaseCluster, *etcdClient) { return dc, db })
}

// expectQuorumBudget checks that the cluster's PodDisruptionBudget, as the disruption
// controller computes it, lets one member of three go and keeps two: etcd's quorum.
func expectQuorumBudget(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		var pdb policyv1.PodDisruptionBudget
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: dc.PodDisruptionBudgetName()}, &pdb)).To(Succeed())
		g.Expect(pdb.Status.ObservedGeneration).To(Equal(pdb.Generation))
		g.Expect(pdb.Status.ExpectedPods).To(BeEquivalentTo(etcdMembers))
		g.Expect(pdb.Status.CurrentHealthy).To(BeEquivalentTo(etcdMembers))
		g.Expect(pdb.Status.DesiredHealthy).To(BeEquivalentTo(etcdMembers/2 + 1))
		g.Expect(pdb.Status.DisruptionsAllowed).To(BeEquivalentTo(etcdMembers - (etcdMembers/2 + 1)))
	}).WithContext(ctx).Should(Succeed(), "PodDisruptionBudget of %s", dc.Name)
}

func etcdKey(i int) string   { return fmt.Sprintf("%s%05d", etcdPrefix, i) }
func etcdValue(i int) string { return "value-" + strconv.Itoa(i) }

// etcdClient speaks etcd's JSON gateway (/v3/kv/*) through the client Service first, then to
// whichever member answers, so a write succeeds as long as the cluster has quorum.
type etcdClient struct {
	// dc is the client's own copy of the cluster (its names and port), taken when the client is
	// made: a spec updates and re-reads its own object while duringChange's writer runs, and a Get
	// into that object can show the writer an empty name mid-decode.
	dc   *databasev1alpha1.DatabaseCluster
	http http.Client
	// ca, when set, makes the client speak HTTPS: each server's certificate must chain to ca and
	// name the server it is (the client Service, or the member), whatever address is dialed.
	ca *x509.CertPool
	// https holds a client per server name when ca is set; duringChange's writer shares it.
	httpsMu sync.Mutex
	https   map[string]*http.Client
	// acknowledged records the keys duringChange wrote and the cluster acknowledged, when not nil.
	acknowledged []string
	// served counts the calls each address answered, when not nil.
	served map[string]int
	// serviceOnly sends every call to the client Service alone, retrying there (a client of a
	// Service retries: one timed-out request on a loaded machine is not a routing failure), and
	// records each failed attempt in retried.
	serviceOnly bool
	retried     []string
}

// serviceAttempts is how often a serviceOnly call tries the client Service, waiting
// serviceBackoff before the second try and twice as long before each next one (3 s in all),
// as a client of a Service does: a member restarting or an election of the etcd leader (about
// a second on a loaded machine) fails every call sent in that moment.
const (
	serviceAttempts = 5
	serviceBackoff  = 200 * time.Millisecond
)

// etcdTarget is an address a call tries, and the name its certificate must carry (with ca).
type etcdTarget struct{ url, serverName string }

// targets lists the addresses a call tries, in order.
func (e *etcdClient) targets(ctx context.Context) []etcdTarget {
	svc := etcdTarget{url: e.serviceAddr(ctx), serverName: e.dc.ClientServiceName() + "." + e.dc.Namespace + ".svc"}
	if e.serviceOnly {
		targets := make([]etcdTarget, serviceAttempts)
		for i := range targets {
			targets[i] = svc
		}
		return targets
	}
	return append([]etcdTarget{svc}, e.members(ctx)...)
}

// scheme is https with a CA, else http.
func (e *etcdClient) scheme() string {
	if e.ca != nil {
		return "https"
	}
	return "http"
}

// client is the HTTP client for a server: with ca, one that verifies the server's certificate
// under serverName.
func (e *etcdClient) client(serverName string) *http.Client {
	if e.ca == nil {
		return &e.http
	}
	e.httpsMu.Lock()
	defer e.httpsMu.Unlock()
	if c, ok := e.https[serverName]; ok {
		return c
	}
	if e.https == nil {
		e.https = map[string]*http.Client{}
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: e.ca, ServerName: serverName, MinVersion: tls.VersionTLS12,
	}}}
	e.https[serverName] = c
	return c
}

// serviceAddr is the address of the cluster's client Service (its ClusterIP: kube-proxy on the
// node routes it to a Ready member).
func (e *etcdClient) serviceAddr(ctx context.Context) string {
	svc := &corev1.Service{}
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: e.dc.Namespace, Name: e.dc.ClientServiceName()}, svc)).To(Succeed())
	return e.scheme() + "://" + net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(int(e.dc.DatabasePort())))
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// members returns the addresses of the members that have one, each with its stable name.
func (e *etcdClient) members(ctx context.Context) []etcdTarget {
	var targets []etcdTarget
	for _, p := range podsOf(ctx, e.dc) {
		if p.Status.PodIP != "" && p.DeletionTimestamp == nil {
			targets = append(targets, etcdTarget{
				url:        e.scheme() + "://" + net.JoinHostPort(p.Status.PodIP, "2379"),
				serverName: p.Name + "." + e.dc.HeadlessServiceName() + "." + e.dc.Namespace + ".svc",
			})
		}
	}
	return targets
}

func (e *etcdClient) call(ctx context.Context, path string, body, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	var attempts []error
	for i, target := range e.targets(ctx) {
		if i > 0 && e.serviceOnly {
			if err := pause(ctx, serviceBackoff<<(i-1)); err != nil {
				return errors.Join(append(attempts, err)...)
			}
		}
		err := e.try(ctx, target, path, data, out)
		if err == nil {
			return nil
		}
		attempts = append(attempts, e.failed(err))
	}
	if len(attempts) == 0 {
		return fmt.Errorf("no member has an address")
	}
	return errors.Join(attempts...)
}

// try makes one call to target and decodes its answer into out.
func (e *etcdClient) try(ctx context.Context, target etcdTarget, path string, data []byte, out any) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target.url+path, bytes.NewReader(data))
	if err != nil {
		return err
	}
	resp, err := e.client(target.serverName).Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s%s: %s", target.url, path, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return err
	}
	if e.served != nil {
		e.served[target.url]++
	}
	return nil
}

// pause waits for d, or returns ctx's error.
func pause(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// failed records a failed attempt of a serviceOnly call and returns err.
func (e *etcdClient) failed(err error) error {
	if e.serviceOnly {
		e.retried = append(e.retried, err.Error())
	}
	return err
}

func (e *etcdClient) put(ctx context.Context, key, value string) error {
	var out map[string]any
	return e.call(ctx, "/v3/kv/put", map[string]string{"key": b64(key), "value": b64(value)}, &out)
}

// writeThroughService writes etcdKeys keys and reads them back through the client Service
// alone, and reports how long the writes took under label. A retry there is allowed (CI once saw
// one of 3,001 calls fail on a loaded machine, and once a call fail five tries in a row sent
// without a pause), a pattern of them is not: a Service routing to a member that does not serve
// fails about one call in three. No member may be replaced or restart meanwhile: nothing asked
// for it.
func (e *etcdClient) writeThroughService(ctx context.Context, label string) {
	GinkgoHelper()
	before := memberStates(ctx, e.dc)
	e.served, e.serviceOnly, e.retried = map[string]int{}, true, nil
	defer func() { e.served, e.serviceOnly, e.retried = nil, false, nil }()
	began := time.Now()
	for i := range etcdKeys {
		Expect(e.put(ctx, etcdKey(i), etcdValue(i))).To(Succeed(), func() string {
			return fmt.Sprintf("key %d of %d; the members before the writes: %v, now: %v", i, etcdKeys, before, memberStates(ctx, e.dc))
		})
	}
	report(label, time.Since(began))
	e.expectAll(ctx)
	Expect(e.served).To(Equal(map[string]int{e.serviceAddr(ctx): etcdKeys + 1}),
		"every write and the read went through the client Service")
	reportCount("etcd calls retried through the client Service", len(e.retried))
	Expect(len(e.retried)).To(BeNumerically("<=", etcdKeys/100), "calls that failed through the client Service: %q", e.retried)
	Expect(memberStates(ctx, e.dc)).To(Equal(before), "a member was replaced or restarted while the keys were written")
}

// memberStates names each member's pod by its UID and its containers' restarts.
func memberStates(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) map[string]string {
	GinkgoHelper()
	states := map[string]string{}
	for name, p := range podsOf(ctx, dc) {
		restarts := int32(0)
		for _, c := range p.Status.ContainerStatuses {
			restarts += c.RestartCount
		}
		states[name] = fmt.Sprintf("uid %s, %d restarts", p.UID, restarts)
	}
	return states
}

// expectAll reads every key of etcdPrefix with a linearizable read and checks each value.
func (e *etcdClient) expectAll(ctx context.Context) {
	GinkgoHelper()
	var out struct {
		Count string `json:"count"`
		Kvs   []struct {
			Key   string `json:"key"`
			Value string `json:"value"`
		} `json:"kvs"`
	}
	Eventually(func(g Gomega) {
		g.Expect(e.call(ctx, "/v3/kv/range", map[string]any{"key": b64(etcdPrefix), "range_end": b64(prefixEnd(etcdPrefix))}, &out)).To(Succeed())
	}).WithContext(ctx).Should(Succeed())
	Expect(out.Count).To(Equal(strconv.Itoa(etcdKeys)))
	got := map[string]string{}
	for _, kv := range out.Kvs {
		k, _ := base64.StdEncoding.DecodeString(kv.Key)
		v, _ := base64.StdEncoding.DecodeString(kv.Value)
		got[string(k)] = string(v)
	}
	lost := 0
	for i := range etcdKeys {
		if got[etcdKey(i)] != etcdValue(i) {
			lost++
		}
	}
	Expect(lost).To(BeZero(), "keys lost or changed")
	GinkgoWriter.Printf("Read back %d/%d keys\n", len(got), etcdKeys)
}

// count returns how many keys etcdPrefix holds (a linearizable count).
func (e *etcdClient) count(ctx context.Context) int {
	GinkgoHelper()
	var out struct {
		Count string `json:"count"` // int64 as a string, left out when 0
	}
	Eventually(func(g Gomega) {
		g.Expect(e.call(ctx, "/v3/kv/range", map[string]any{"key": b64(etcdPrefix), "range_end": b64(prefixEnd(etcdPrefix)), "count_only": true}, &out)).To(Succeed())
	}).WithContext(ctx).Should(Succeed())
	if out.Count == "" {
		return 0
	}
	n, err := strconv.Atoi(out.Count)
	Expect(err).NotTo(HaveOccurred())
	return n
}

// prefixEnd is the end of the range of keys under prefix: the prefix with its last byte plus one.
func prefixEnd(prefix string) string {
	return prefix[:len(prefix)-1] + string(prefix[len(prefix)-1]+1)
}

// duringChange runs change while writing a key every 200 ms and checking, on every
// observation, that the cluster's status tells the truth. It fails if no write succeeds for
// longer than maxWriteGap (quorum lost) and returns how many writes succeeded.
func (e *etcdClient) duringChange(ctx context.Context, change func()) int {
	GinkgoHelper()
	const maxWriteGap = 10 * time.Second
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var writes int
	var worstGap time.Duration
	var statusErr error
	wg.Go(func() {
		defer GinkgoRecover()
		last := time.Now()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			key := fmt.Sprintf("roll/%05d", i)
			if err := e.put(ctx, key, "x"); err == nil {
				mu.Lock()
				writes++
				if e.acknowledged != nil {
					e.acknowledged = append(e.acknowledged, key)
				}
				worstGap = max(worstGap, time.Since(last))
				mu.Unlock()
				last = time.Now()
			}
			var dc databasev1alpha1.DatabaseCluster
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(e.dc), &dc); err == nil {
				g := NewGomega(func(message string, _ ...int) {
					mu.Lock()
					statusErr = fmt.Errorf("%s", message)
					mu.Unlock()
				})
				expectTruthfulStatus(g, &dc)
			}
		}
	})
	change()
	close(stop)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	Expect(statusErr).NotTo(HaveOccurred())
	Expect(worstGap).To(BeNumerically("<", maxWriteGap), "the cluster accepted no write for %s: quorum lost", worstGap)
	GinkgoWriter.Printf("%d writes during the change, longest gap %s\n", writes, worstGap.Round(time.Millisecond))
	return writes
}
