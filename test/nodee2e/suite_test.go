//go:build linux && node

package nodee2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apischeme "github.com/seed1b407122/database-operator/api/scheme"
	"github.com/seed1b407122/database-operator/test/harness/olm"
	"github.com/seed1b407122/database-operator/test/harness/realnode"
)

var (
	node      *realnode.Node
	k8s       client.Client
	clientset kubernetes.Interface
	// operatorLM is OLM, deployed on the node as a cluster runs it.
	operatorLM *olm.Deployed
	// hostBefore is the host's state before the node started; AfterSuite compares.
	hostBefore realnode.HostSnapshot
	// catalogCreated is when the catalog image's CatalogSource was created.
	catalogCreated time.Time
)

func TestRealNode(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(3 * time.Minute)
	SetDefaultEventuallyPollingInterval(250 * time.Millisecond)
	RunSpecs(t, "real node: kubelet + containerd, the operator installed by OLM")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	if err := realnode.Preflight(); err != nil {
		// As root, make test-node has run make host-packages first: what is missing then is a
		// failure, not a reason to pass without running (a new machine must not skip silently).
		if os.Geteuid() == 0 {
			Fail("real-node tier: " + err.Error())
		}
		Skip("real-node tier skipped: " + err.Error())
	}
	hostBefore = realnode.Snapshot()
	began := time.Now()
	var err error
	// No CRDs: OLM installs them from the bundle.
	node, err = realnode.Start(ctx, realnode.Options{Log: GinkgoWriter})
	Expect(err).NotTo(HaveOccurred())
	report("real node start (control plane, containerd, images, kubelet, kube-proxy, CoreDNS)", time.Since(began))

	scheme := apischeme.Must()
	k8s, err = client.New(node.Config, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	clientset, err = kubernetes.NewForConfig(node.Config)
	Expect(err).NotTo(HaveOccurred())

	operatorImage = registryImage("OPERATOR_IMAGE")
	operatorImagePrev = csvImage(releasedCSV())
	operatorLM = deployOLM(ctx)
	addCatalogSource(ctx)
	began = time.Now()
	installOperator(ctx)
	report("operator 0.3.0 (released) installed by OLM (Subscription -> CSV Succeeded, its pods Ready on the node)", time.Since(began))
	report("CatalogSource created -> CSV 0.3.0 Succeeded", time.Since(catalogCreated))
	// Both bundles are unpacked from their images: 0.3.0's for this install, 0.4.0's for the
	// InstallPlan of the upgrade, which waits for its approval.
	expectUnpacked(ctx, olmNamespace, "PREVIOUS_BUNDLE_IMAGE")
	expectUnpacked(ctx, olmNamespace, "BUNDLE_IMAGE")
}, NodeTimeout(10*time.Minute))

var _ = AfterSuite(func(ctx SpecContext) {
	// OLM first: it would only retry against a stopped API server.
	if operatorLM != nil {
		saveOLMLogs(ctx, operatorLM)
		Expect(operatorLM.Remove(ctx)).To(Succeed())
	}
	if node == nil {
		return
	}
	Expect(node.Stop()).To(Succeed())
	after := realnode.Snapshot()
	Expect(after).To(Equal(hostBefore), "the host is as it was before the node started")
	GinkgoWriter.Printf("Host restored: %s\n", after)
}, NodeTimeout(5*time.Minute))

// The stories run one after the other, in this order (top-level containers would run in a
// random order): the operator's upgrade first, since it installs the released version and
// creates a cluster through its API, then what today's version does.
var _ = Describe("The operator installed by OLM on a real node", Ordered, func() {
	Describe("The node's images: signatures and provenance verified, a wrong key and a tampered layer refused", signaturesStory)
	Describe("The operator's upgrade from the released 0.3.0, with a 3-member etcd running", upgradeStory)
	Describe("The operator with the etcd sample as its operand", etcdStory)
	Describe("Storage auto-grow of an etcd on a volume of its own size", autoGrowStory)
	Describe("Backup and restore of the etcd sample's data", backupStory)
	Describe("The TLS etcd sample: the operator's CA, a renewal rolled under writes", etcdTLSStory)
	Describe("The TLS etcd sample with engine etcd: roles observed through the member agent and published", etcdRolesStory)
	Describe("The PostgreSQL sample: Debian's PostgreSQL 15 over TLS, a configuration roll, backup and restore", postgresStory)
	Describe("The replicated PostgreSQL sample (engine postgresql): three members, replicas cloned, a switchover on demand and a roll under a writer", postgresRolesStory)
	Describe("A single-member data store", testdbStory)
	Describe("The Echo, ScheduledEcho and VoteConfig samples", smallSamplesStory)
	Describe("A real Prometheus scraping the operator and an etcd's members, alerting on a stopped member", monitoringStory)
	// Last: it removes the catalog install of the stories above.
	Describe("make run-bundle BUNDLE_IMG=... and make cleanup-bundle, after the catalog install is removed", runBundleStory)
})

// report records a measurement in the Ginkgo report and prints it, so that make test-node's
// output shows it.
func report(what string, d time.Duration) {
	value := d.Round(time.Millisecond).String()
	AddReportEntry(what, value)
	GinkgoWriter.Printf("MEASURED %s: %s\n", what, value)
	fmt.Fprintf(os.Stderr, "MEASURED %s: %s\n", what, value)
}

// reportCount records a count like report.
func reportCount(what string, n int) {
	AddReportEntry(what, n)
	fmt.Fprintf(os.Stderr, "MEASURED %s: %d\n", what, n)
}

// newNamespace creates a namespace that enforces the restricted Pod Security profile.
func newNamespace(ctx context.Context, prefix string) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-", Labels: restrictedLabels()}}
	Expect(k8s.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

func restrictedLabels() map[string]string {
	return map[string]string{
		"pod-security.kubernetes.io/enforce":         "restricted",
		"pod-security.kubernetes.io/enforce-version": "latest",
	}
}

func requireEnv(name string) string {
	v := os.Getenv(name)
	Expect(v).NotTo(BeEmpty(), "set %s (make test-node does)", name)
	return v
}
