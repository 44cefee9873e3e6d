//go:build linux && node

package nodee2e

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	storagev1 "k8s.io/api/storage/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/storageagent"
	"github.com/seed1b407122/database-operator/test/harness/csisim"
	"github.com/seed1b407122/database-operator/test/harness/realnode"
)

// The storage auto-grow story: a one-member etcd on a volume that is a file system of the
// claim's size (the simulated driver's class with csisim.ParamSizedFilesystem: XFS on a loop
// device, grown online on expansion). etcd fills it through its API; the operator, measuring it
// through the storage agent beside etcd (every measureInterval, which the Subscription sets),
// grows the claim at thresholdPercent and stops at maxSize.
const (
	sizedClass     = "sized"
	growFrom       = "512Mi"
	growMax        = "768Mi"
	growThreshold  = 70
	fillPrefix     = "fill/"
	fillValueBytes = 256 << 10
	// xfsLog is what XFS keeps of each file system for its log: statfs reports the rest.
	xfsLog = 64 << 20
	// measureInterval is how often the operator measures its members here: the Subscription
	// sets measureIntervalEnv (installOperator), the manager's variable of that setting.
	measureInterval    = 10 * time.Second
	measureIntervalEnv = "STORAGE_MEASURE_INTERVAL"
)

func autoGrowStory() {
	It("grows a filling member's volume online before it is full while etcd writes, keeps every key and the pod, and stops at maxSize", func(ctx SpecContext) {
		Expect(operatorEnv(ctx, measureIntervalEnv)).To(Equal(measureInterval.String()),
			"OLM set the Subscription's spec.config.env on the operator's Deployment")
		createSizedClass(ctx)
		ns := newNamespace(ctx, "grow")
		dc := oneMemberEtcd(ns)
		began := time.Now()
		Expect(k8s.Create(ctx, dc)).To(Succeed())
		report("auto-grow: one-member etcd on a 512Mi XFS volume, create -> Available", waitAvailable(ctx, dc, began))
		pod := podsOf(ctx, dc)[dc.StatefulSetName()+"-0"]
		claim := dc.ClaimName(0)
		agent := "http://" + net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(int(databasev1alpha1.StorageAgentPort))) + storageagent.UsagePath
		size := resource.MustParse(growFrom)
		u := agentUsage(ctx, agent)
		Expect(u.CapacityBytes).To(BeNumerically("~", size.Value()-xfsLog, 8<<20), "the volume is a file system of the claim's size")
		GinkgoWriter.Printf("Fresh member: %s\n", describeUsage(u))
		db := &etcdClient{dc: dc.DeepCopy()}
		Eventually(func(g Gomega) { g.Expect(db.put(ctx, "probe", "1")).To(Succeed()) }).WithContext(ctx).Should(Succeed())

		By("filled past thresholdPercent through etcd's API, the claim grows to maxSize online; etcd keeps writing")
		filled := fill(ctx, db, agent, 0, growThreshold+1)
		crossed := time.Now()
		var requested, expanded, seen time.Duration
		db.acknowledged = []string{}
		db.duringChange(ctx, func() {
			Eventually(func(g Gomega) {
				c := &corev1.PersistentVolumeClaim{}
				g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: claim}, c)).To(Succeed())
				g.Expect(c.Spec.Resources.Requests.Storage().String()).To(Equal(growMax))
				if requested == 0 {
					requested = time.Since(crossed)
				}
				g.Expect(c.Status.Capacity.Storage().String()).To(Equal(growMax))
			}).WithContext(ctx).WithTimeout(3 * time.Minute).WithPolling(250 * time.Millisecond).Should(Succeed())
			expanded = time.Since(crossed)
			maxSize := resource.MustParse(growMax)
			Eventually(func(g Gomega) int64 {
				u, err := readAgent(ctx, agent)
				g.Expect(err).NotTo(HaveOccurred())
				return u.CapacityBytes
			}).WithContext(ctx).WithPolling(250*time.Millisecond).
				Should(BeNumerically("~", maxSize.Value()-xfsLog, 8<<20), "etcd's file system grew, mounted")
			seen = time.Since(crossed)
		})
		report("auto-grow: threshold crossed -> claim request 768Mi (the operator measures every "+measureInterval.String()+")", requested)
		report("auto-grow: threshold crossed -> claim capacity 768Mi (the driver grew the file system)", expanded)
		report("auto-grow: threshold crossed -> the member's file system is 768Mi", seen)
		GinkgoWriter.Printf("After the growth: %s\n", describeUsage(agentUsage(ctx, agent)))
		Expect(podsOf(ctx, dc)[pod.Name].UID).To(Equal(pod.UID), "the member kept running through the growth")
		Eventually(func() []string { return growthEvents(ctx, dc) }).WithContext(ctx).Should(ConsistOf(
			MatchRegexp(`^Normal StorageGrown: Grew claim %s from 512Mi to 768Mi: used \d+%% >= threshold 70%%$`, claim)))

		By("filled past thresholdPercent again at maxSize: no growth, the condition and a warning say so")
		filled = fill(ctx, db, agent, filled, growThreshold+1)
		crossed = time.Now()
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
			c := apimeta.FindStatusCondition(dc.Status.Conditions, databasev1alpha1.ConditionStorageAutoGrow)
			g.Expect(c).NotTo(BeNil())
			g.Expect([]string{string(c.Status), c.Reason}).To(Equal([]string{"False", databasev1alpha1.ReasonAtMaxSize}))
			g.Expect(c.Message).To(MatchRegexp(`^claim %s is at maxSize 768Mi and \d+%% full$`, claim))
		}).WithContext(ctx).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Succeed())
		report("auto-grow: threshold crossed at maxSize -> StorageAutoGrow AtMaxSize", time.Since(crossed))
		Eventually(func() []string { return growthEvents(ctx, dc) }).WithContext(ctx).Should(
			ContainElement(MatchRegexp(`^Warning AtMaxSize: Claim %s is at maxSize 768Mi and \d+%% full$`, claim)))
		Expect(dc.Status.Storage).NotTo(BeNil())
		Expect(dc.Status.Storage.Members).To(HaveExactElements(And(HaveField("Name", pod.Name),
			HaveField("CapacityBytes", BeNumerically(">", size.Value())))), "status shows the member's usage")
		Consistently(func(g Gomega) string {
			c := &corev1.PersistentVolumeClaim{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: claim}, c)).To(Succeed())
			return c.Spec.Resources.Requests.Storage().String()
		}).WithContext(ctx).WithTimeout(5*time.Second).Should(Equal(growMax), "never past maxSize")

		By("nothing lost: every value written, every key acknowledged during the growth")
		expectFilled(ctx, db, filled)
		Expect(keysOf(ctx, db, "roll/")).To(ContainElements(db.acknowledged))
		reportCount("auto-grow: fill values written and read back (256 KiB each)", filled)
		reportCount("auto-grow: keys acknowledged during the growth, all read back", len(db.acknowledged))
		Expect(podsOf(ctx, dc)[pod.Name].UID).To(Equal(pod.UID), "the member kept running")

		By("the namespace deleted: the driver unmounts the volume and frees its loop device")
		expectVolumeRemoved(ctx, ns, claim)
	}, NodeTimeout(12*time.Minute))
}

// createSizedClass creates the StorageClass whose volumes are file systems of the claim's size,
// expandable, and deletes it when the spec ends.
func createSizedClass(ctx context.Context) {
	class := &storagev1.StorageClass{
		ObjectMeta:           metav1.ObjectMeta{Name: sizedClass},
		Provisioner:          csisim.ProvisionerName,
		Parameters:           map[string]string{csisim.ParamSizedFilesystem: "true"},
		ReclaimPolicy:        ptr.To(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode:    ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
		AllowVolumeExpansion: ptr.To(true),
	}
	Expect(k8s.Create(ctx, class)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8s.Delete(ctx, class))).To(Succeed()) })
}

// oneMemberEtcd is the etcd sample with one member on the sized class, auto-growing by 50% at
// growThreshold up to growMax.
func oneMemberEtcd(ns string) *databasev1alpha1.DatabaseCluster {
	dc := sampleCluster(ns, etcdSampleFile)
	dc.Spec.Replicas = ptr.To[int32](1)
	for i, arg := range dc.Spec.Args {
		if strings.HasPrefix(arg, "--initial-cluster=") {
			dc.Spec.Args[i] = "--initial-cluster=etcd-sample-0=http://etcd-sample-0.etcd-sample-headless:2380"
		}
	}
	dc.Spec.Storage.StorageClassName = sizedClass
	dc.Spec.Storage.Size = growFrom
	dc.Spec.Storage.AutoGrow = &databasev1alpha1.AutoGrowSpec{
		MaxSize:            resource.MustParse(growMax),
		ThresholdPercent:   ptr.To[int32](growThreshold),
		Increment:          ptr.To(intstr.FromString("50%")),
		MinIntervalSeconds: ptr.To[int32](60),
	}
	return dc
}

// agentUsage reads the member's storage agent, as the operator does, retrying for 30 s.
func agentUsage(ctx context.Context, url string) storageagent.Usage {
	GinkgoHelper()
	var u storageagent.Usage
	Eventually(func(g Gomega) {
		var err error
		u, err = readAgent(ctx, url)
		g.Expect(err).NotTo(HaveOccurred())
	}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
	return u
}

// readAgent reads the storage agent once.
func readAgent(ctx context.Context, url string) (storageagent.Usage, error) {
	var u storageagent.Usage
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return u, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return u, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return u, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return u, json.NewDecoder(resp.Body).Decode(&u)
}

// percentFull is how full u is, rounded up as the operator rounds it.
func percentFull(u storageagent.Usage) int64 {
	return (u.UsedBytes*100 + u.CapacityBytes - 1) / u.CapacityBytes
}

func describeUsage(u storageagent.Usage) string {
	return fmt.Sprintf("%d MiB used of %d MiB (%d%%)", u.UsedBytes>>20, u.CapacityBytes>>20, percentFull(u))
}

// fillValue is the value of fill key i: fillValueBytes of one letter.
func fillValue(i int) string { return strings.Repeat(string(rune('a'+i%26)), fillValueBytes) }

func fillKey(i int) string { return fmt.Sprintf("%s%05d", fillPrefix, i) }

// fill writes fill keys from next on until the agent reports the member at least percent full,
// and returns the next key's number. It checks after every 8 writes: 2 MiB of values, about
// 4 MiB of etcd's files (its log and its database each hold a value).
func fill(ctx context.Context, db *etcdClient, agent string, next int, percent int64) int {
	GinkgoHelper()
	began := time.Now()
	for percentFull(agentUsage(ctx, agent)) < percent {
		for range 8 {
			Expect(db.put(ctx, fillKey(next), fillValue(next))).To(Succeed(), "write %d", next)
			next++
		}
	}
	GinkgoWriter.Printf("Filled to %s with %d values in %s\n", describeUsage(agentUsage(ctx, agent)), next, time.Since(began).Round(time.Millisecond))
	return next
}

// expectFilled checks that etcd holds exactly fill keys 0 to n-1, and reads every one back.
func expectFilled(ctx context.Context, db *etcdClient, n int) {
	GinkgoHelper()
	Expect(keysOf(ctx, db, fillPrefix)).To(HaveLen(n))
	for i := range n {
		var out struct {
			Kvs []struct {
				Value string `json:"value"`
			} `json:"kvs"`
		}
		Expect(db.call(ctx, "/v3/kv/range", map[string]any{"key": b64(fillKey(i))}, &out)).To(Succeed())
		Expect(out.Kvs).To(HaveLen(1), fillKey(i))
		// Compared by digest: a failure prints 32 bytes, not two 256 KiB values.
		Expect(sha256.Sum256([]byte(out.Kvs[0].Value))).To(Equal(sha256.Sum256([]byte(b64(fillValue(i))))), "the value of %s changed", fillKey(i))
	}
}

// keysOf lists the keys under prefix (a linearizable read of the keys only).
func keysOf(ctx context.Context, db *etcdClient, prefix string) []string {
	GinkgoHelper()
	var out struct {
		Kvs []struct {
			Key string `json:"key"`
		} `json:"kvs"`
	}
	Expect(db.call(ctx, "/v3/kv/range", map[string]any{"key": b64(prefix), "range_end": b64(prefixEnd(prefix)), "keys_only": true}, &out)).To(Succeed())
	keys := make([]string, 0, len(out.Kvs))
	for _, kv := range out.Kvs {
		keys = append(keys, string(decodeB64(kv.Key)))
	}
	return keys
}

func decodeB64(s string) []byte {
	GinkgoHelper()
	data, err := base64.StdEncoding.DecodeString(s)
	Expect(err).NotTo(HaveOccurred())
	return data
}

// growthEvents lists the cluster's StorageGrown and AtMaxSize events as "Type Reason: Note".
func growthEvents(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) []string {
	GinkgoHelper()
	var list eventsv1.EventList
	Expect(k8s.List(ctx, &list, client.InNamespace(dc.Namespace))).To(Succeed())
	var notes []string
	for _, e := range list.Items {
		if e.Regarding.Kind == "DatabaseCluster" && (e.Reason == "StorageGrown" || e.Reason == databasev1alpha1.ReasonAtMaxSize) {
			notes = append(notes, e.Type+" "+e.Reason+": "+e.Note)
		}
	}
	return notes
}

// expectVolumeRemoved deletes namespace and waits until the volume of claim is deleted with no
// mount of it and no loop device backed by its image left on the host.
func expectVolumeRemoved(ctx context.Context, namespace, claim string) {
	GinkgoHelper()
	c := &corev1.PersistentVolumeClaim{}
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: claim}, c)).To(Succeed())
	volume := c.Spec.VolumeName
	host := realnode.Snapshot()
	Expect(host.Mounts).To(ContainElement(ContainSubstring(volume)), "the volume's file system is mounted")
	Expect(host.Loops).To(ContainElement(ContainSubstring(volume)), "a loop device backs the volume's image")
	Expect(k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})).To(Succeed())
	began := time.Now()
	Eventually(func(g Gomega) {
		err := k8s.Get(ctx, client.ObjectKey{Name: volume}, &corev1.PersistentVolume{})
		g.Expect(client.IgnoreNotFound(err)).To(Succeed())
		g.Expect(err).To(HaveOccurred(), "volume %s still there", volume)
	}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
	report("auto-grow: namespace deleted -> volume deleted, file system unmounted", time.Since(began))
	host = realnode.Snapshot()
	Expect(host.Mounts).NotTo(ContainElement(ContainSubstring(volume)), "the volume is still mounted")
	Expect(host.Loops).NotTo(ContainElement(ContainSubstring(volume)), "a loop device still backs the volume's image")
}
