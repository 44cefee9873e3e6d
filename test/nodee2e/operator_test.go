//go:build linux && node

package nodee2e

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed1b407122/database-operator/test/harness/olm"
	"github.com/seed1b407122/database-operator/test/harness/proc"
	"github.com/seed1b407122/database-operator/test/harness/realnode"
)

// The operator as OLM installs it from catalog/: an AllNamespaces install into a namespace
// that enforces the restricted Pod Security profile, the released 0.2.0 first (its bundle as
// released, its image holding the manager built from its release commit; Manual approval, so
// that a spec decides when 0.3.0, today's code, comes).
const (
	olmNamespace      = "olm"
	operatorNamespace = "database-operator"
	operatorGroupName = "database-operator"
	catalogSourceName = "database-operator-catalog"
	packageName       = "database-operator"
	channel           = "stable"
	csvPrevious       = "database-operator.v0.2.0"
	csvCurrent        = "database-operator.v0.3.0"
	operatorImagePrev = "database-operator:0.2.0"
	operatorImage     = "database-operator:0.3.0"
	operatorReplicas  = 2
	managerContainer  = "manager"
	leaseName         = "database-operator.seed1b407122.io"
	metricsService    = "database-operator-controller-manager-metrics-service"
	// operatorDeployment is the bundle's Deployment; the operator's ServiceMonitor and
	// PrometheusRule (config/prometheus) are controlled by it.
	operatorDeployment     = "database-operator-controller-manager"
	operatorServiceMonitor = "database-operator-controller-manager-metrics-monitor"
	operatorPrometheusRule = "database-operator"
	metricsReaderRole      = "database-operator-metrics-reader"
	operatorUser           = "65532 65532 65532 65532"
	olmWaitTimeout         = 4 * time.Minute
)

// olmHost is OLM's two controllers and the catalog server, all host processes.
type olmHost struct {
	runtime *olm.Runtime
	catalog *olm.CatalogServer
}

func (o *olmHost) processes() []*proc.Process {
	procs := o.runtime.Processes()
	if o.catalog != nil {
		procs = append(procs, o.catalog.Process)
	}
	return procs
}

func (o *olmHost) stop() {
	if o.catalog != nil {
		Expect(o.catalog.Stop()).To(Succeed())
	}
	Expect(o.runtime.Stop()).To(Succeed())
}

// startOLM starts OLM (OLM_BIN_DIR) and serves catalog/ with catalog-serve (CATALOG_SERVE) on
// 127.0.0.1, where OLM's catalog operator, also on the host, reaches it.
func startOLM(ctx context.Context) *olmHost {
	GinkgoHelper()
	began := time.Now()
	runtime, err := olm.StartOLM(ctx, k8s, olm.RuntimeOptions{
		BinDir: requireEnv("OLM_BIN_DIR"), Kubeconfig: node.KubeconfigPath, Namespace: olmNamespace,
		LogDir: node.WorkDir, DisableCopiedCSVs: true,
	})
	Expect(err).NotTo(HaveOccurred())
	host := &olmHost{runtime: runtime}
	catalogDir, err := filepath.Abs(filepath.Join("..", "..", "catalog"))
	Expect(err).NotTo(HaveOccurred())
	host.catalog, err = olm.ServeCatalog(ctx, olm.ServeOptions{Server: requireEnv("CATALOG_SERVE"), Dir: catalogDir, WorkDir: node.WorkDir})
	if err != nil {
		host.stop()
	}
	Expect(err).NotTo(HaveOccurred())
	guarded, cancel := whileOLMRuns(ctx, host)
	defer cancel()
	Expect(olm.CreateCatalogSource(guarded, k8s, olm.BuildCatalogSource(olmNamespace, catalogSourceName,
		host.catalog.Address, "database-operator (catalog/)", nil))).To(Succeed())
	report("OLM started, catalog/ served and its CatalogSource READY", time.Since(began))
	return host
}

// whileOLMRuns bounds a wait on OLM: olmWaitTimeout, and an end as soon as one of OLM's
// processes exits (the wait then fails with that process's log instead of timing out).
func whileOLMRuns(ctx context.Context, host *olmHost) (context.Context, context.CancelFunc) {
	return proc.WhileRunningWithin(ctx, olmWaitTimeout, host.processes()...)
}

// installOperator subscribes operatorNamespace to the released 0.2.0 of the package, approves its
// InstallPlan and waits until the CSV has Succeeded: OLM says so once the operator's
// Deployment is available, that is, its pods passed their readiness probes on the node.
func installOperator(ctx context.Context) {
	GinkgoHelper()
	ns := &corev1.Namespace{}
	ns.Name = operatorNamespace
	ns.Labels = restrictedLabels()
	Expect(k8s.Create(ctx, ns)).To(Succeed())
	// No target namespaces: AllNamespaces, the DatabaseClusters of every spec's namespace.
	group, created, err := olm.EnsureOperatorGroup(ctx, k8s, operatorNamespace, operatorGroupName, nil, nil)
	Expect(err).NotTo(HaveOccurred())
	Expect(created).To(BeTrue())
	Expect(group).To(Equal(operatorGroupName))
	_, err = olm.Subscribe(ctx, k8s, olm.SubscriptionOptions{
		Namespace: operatorNamespace, Package: packageName, Channel: channel,
		CatalogSource: catalogSourceName, CatalogSourceNamespace: olmNamespace,
		StartingCSV: csvPrevious, Approval: olm.ApprovalManual,
	})
	Expect(err).NotTo(HaveOccurred())
	approveAndWait(ctx, csvPrevious)
}

// approveAndWait approves the InstallPlan that installs csvName and waits for the CSV to
// succeed.
func approveAndWait(ctx context.Context, csvName string) *unstructured.Unstructured {
	GinkgoHelper()
	guarded, cancel := whileOLMRuns(ctx, operatorLM)
	defer cancel()
	_, err := olm.ApproveInstallPlan(guarded, k8s, operatorNamespace, csvName)
	Expect(err).NotTo(HaveOccurred())
	csv, err := olm.WaitForCSV(guarded, k8s, operatorNamespace, csvName)
	Expect(err).NotTo(HaveOccurred())
	phase, _, _ := unstructured.NestedString(csv.Object, "status", "phase")
	Expect(phase).To(Equal("Succeeded"))
	return csv
}

// expectCSVGone waits until OLM has removed a replaced CSV.
func expectCSVGone(ctx context.Context, name string) {
	GinkgoHelper()
	Eventually(func() error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: name}, olm.NewCSV(operatorNamespace, name))
	}).WithContext(ctx).Should(Satisfy(apierrors.IsNotFound), "the replaced CSV %s was not removed", name)
}

// operatorPods returns the operator's pods that are not being deleted.
func operatorPods(ctx context.Context) []corev1.Pod {
	GinkgoHelper()
	var pods corev1.PodList
	Expect(k8s.List(ctx, &pods, client.InNamespace(operatorNamespace), client.MatchingLabels{
		"app.kubernetes.io/name": "database-operator", "app.kubernetes.io/component": "manager",
	})).To(Succeed())
	var live []corev1.Pod
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			live = append(live, p)
		}
	}
	return live
}

// waitOperatorPods waits until exactly operatorReplicas pods of the operator run image on the
// real node, every one Ready, and returns them.
func waitOperatorPods(ctx context.Context, image string) []corev1.Pod {
	GinkgoHelper()
	var pods []corev1.Pod
	Eventually(func(g Gomega) {
		pods = operatorPods(ctx)
		g.Expect(pods).To(HaveLen(operatorReplicas))
		for _, p := range pods {
			g.Expect(p.Spec.NodeName).To(Equal(realnode.NodeName))
			g.Expect(p.Spec.Containers[0].Image).To(Equal(image), "pod %s", p.Name)
			g.Expect(isReady(&p)).To(BeTrue(), "pod %s is not Ready", p.Name)
		}
	}).WithContext(ctx).Should(Succeed(), "the operator's pods on %s", image)
	return pods
}

// managerStatus returns the status of the pod's manager container.
func managerStatus(p *corev1.Pod) corev1.ContainerStatus {
	GinkgoHelper()
	i := slices.IndexFunc(p.Status.ContainerStatuses, func(s corev1.ContainerStatus) bool { return s.Name == managerContainer })
	Expect(i).To(BeNumerically(">=", 0), "pod %s has no status of container %s", p.Name, managerContainer)
	return p.Status.ContainerStatuses[i]
}

// managerPID returns the host PID of the manager process in pod p.
func managerPID(ctx context.Context, p *corev1.Pod) int {
	GinkgoHelper()
	pid, err := node.ContainerPID(ctx, managerStatus(p).ContainerID)
	Expect(err).NotTo(HaveOccurred())
	return pid
}

// leaseHolder returns the leader Lease's holder identity ("<pod name>_<uuid>") and the pod
// name in it.
func leaseHolder(ctx context.Context) (identity, pod string) {
	GinkgoHelper()
	var lease coordinationv1.Lease
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: leaseName}, &lease)).To(Succeed())
	if lease.Spec.HolderIdentity == nil {
		return "", ""
	}
	identity = *lease.Spec.HolderIdentity
	pod, _, _ = strings.Cut(identity, "_")
	return identity, pod
}

// waitLeaderAmong waits until the Lease is held by one of pods and returns that pod's name.
func waitLeaderAmong(ctx context.Context, pods []corev1.Pod) string {
	GinkgoHelper()
	var holder string
	Eventually(func(g Gomega) {
		_, holder = leaseHolder(ctx)
		g.Expect(slices.ContainsFunc(pods, func(p corev1.Pod) bool { return p.Name == holder })).To(BeTrue(),
			"Lease %s/%s is held by %q", operatorNamespace, leaseName, holder)
	}).WithContext(ctx).Should(Succeed())
	return holder
}

// After a failed spec, the operator's own account: the last lines of each manager's log, read
// through the API server from the kubelet as "kubectl logs" does.
var _ = ReportAfterEach(func(ctx SpecContext, report SpecReport) {
	if !report.Failed() || clientset == nil {
		return
	}
	pods, err := clientset.CoreV1().Pods(operatorNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=manager"})
	if err != nil {
		GinkgoWriter.Printf("listing the operator's pods: %v\n", err)
		return
	}
	for _, p := range pods.Items {
		log, err := clientset.CoreV1().Pods(operatorNamespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: managerContainer, TailLines: ptr.To[int64](40)}).DoRaw(ctx)
		GinkgoWriter.Printf("--- log of %s/%s (%v):\n%s\n", operatorNamespace, p.Name, err, log)
	}
}, NodeTimeout(30*time.Second))
