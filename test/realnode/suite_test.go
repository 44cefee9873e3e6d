//go:build linux && node

package realnode_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/test/localcluster"
	"github.com/seed1b407122/database-operator/test/realnode"
)

var (
	node    *realnode.Node
	k8s     client.Client
	manager *exec.Cmd
	// hostBefore is the host's state before the node started; AfterSuite compares.
	hostBefore realnode.HostSnapshot
)

func TestRealNode(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(3 * time.Minute)
	SetDefaultEventuallyPollingInterval(250 * time.Millisecond)
	RunSpecs(t, "real node: kubelet + containerd")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	if err := realnode.Preflight(); err != nil {
		Skip("real-node tier skipped: " + err.Error())
	}
	hostBefore = realnode.Snapshot()
	began := time.Now()
	var err error
	node, err = realnode.Start(ctx, realnode.Options{
		CRDDirectoryPaths: []string{filepath.Join("..", "..", "config", "crd", "bases")},
		Log:               GinkgoWriter,
	})
	Expect(err).NotTo(HaveOccurred())
	report("real node start (control plane, containerd, images, kubelet, kube-proxy, CoreDNS)", time.Since(began))

	scheme := runtime.NewScheme()
	Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	Expect(databasev1alpha1.AddToScheme(scheme)).To(Succeed())
	k8s, err = client.New(node.Config, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	manager = startManager(ctx)
}, NodeTimeout(10*time.Minute))

var _ = AfterSuite(func(_ SpecContext) {
	stopManager()
	if node == nil {
		return
	}
	Expect(node.Stop()).To(Succeed())
	after := realnode.Snapshot()
	Expect(after).To(Equal(hostBefore), "the host is as it was before the node started")
	GinkgoWriter.Printf("Host restored: %s\n", after)
}, NodeTimeout(5*time.Minute))

// startManager runs the manager binary (MANAGER_BIN) on the host against the cluster and waits
// until it is ready.
func startManager(ctx context.Context) *exec.Cmd {
	bin := os.Getenv("MANAGER_BIN")
	if bin == "" {
		bin = filepath.Join("..", "..", "bin", "manager")
	}
	probe := freePort()
	logFile, err := os.Create(filepath.Join(node.WorkDir, "manager.log"))
	Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command(bin, "--leader-elect=false", "--metrics-bind-address=0",
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", probe), "--zap-log-level=info")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+node.KubeconfigPath)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = localcluster.ChildSysProcAttr()
	Expect(cmd.Start()).To(Succeed(), "starting %s: build it with 'make build'", bin)
	Eventually(func(g Gomega) {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", probe))
		g.Expect(err).NotTo(HaveOccurred())
		defer func() { _ = resp.Body.Close() }()
		g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
	}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed(), "the manager did not become ready; see %s", logFile.Name())
	return cmd
}

func stopManager() {
	if manager == nil || manager.Process == nil {
		return
	}
	_ = manager.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() {
		_ = manager.Wait() // The exit status does not matter here: the node goes next.
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = manager.Process.Kill()
		<-done
	}
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

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
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: prefix + "-",
		Labels:       map[string]string{"pod-security.kubernetes.io/enforce": "restricted"},
	}}
	Expect(k8s.Create(ctx, ns)).To(Succeed())
	return ns.Name
}
