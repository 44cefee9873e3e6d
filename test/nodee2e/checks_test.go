//go:build linux && node

package nodee2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed1b407122/database-operator/test/harness/realnode"
	"github.com/seed1b407122/database-operator/test/harness/scrape"
)

// expectRestrictedEnforced checks that namespace enforces the restricted Pod Security profile:
// the API server refuses a privileged pod there (server-side dry run: nothing is created).
func expectRestrictedEnforced(ctx context.Context, namespace string) {
	GinkgoHelper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "privileged"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "c", Image: "database-operator.test/pause:v1",
			SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)},
		}}},
	}
	err := k8s.Create(ctx, pod, client.DryRunAll)
	Expect(apierrors.IsForbidden(err)).To(BeTrue(), "a privileged pod in %s: %v", namespace, err)
	Expect(err.Error()).To(ContainSubstring(`violates PodSecurity "restricted:latest"`))
}

// expectHardenedProcess checks the manager process of pod p as the kernel sees it: the
// image's non-root user, no effective capabilities, no_new_privs, a seccomp filter, and a
// read-only root filesystem.
func expectHardenedProcess(ctx context.Context, p *corev1.Pod) {
	GinkgoHelper()
	pid := managerPID(ctx, p)
	status, err := realnode.ProcessStatus(pid)
	Expect(err).NotTo(HaveOccurred())
	Expect(status["Uid"]).To(Equal(operatorUser), "pod %s: real, effective, saved, fs uid", p.Name)
	Expect(status["Gid"]).To(Equal(operatorUser), "pod %s: gids", p.Name)
	Expect(status["CapEff"]).To(Equal("0000000000000000"), "pod %s: effective capabilities", p.Name)
	Expect(status["NoNewPrivs"]).To(Equal("1"), "pod %s: allowPrivilegeEscalation false", p.Name)
	Expect(status["Seccomp"]).To(Equal("2"), "pod %s: seccomp RuntimeDefault is a filter", p.Name)
	Expect(rootMountOptions(pid)).To(HavePrefix("ro"), "pod %s: the root filesystem", p.Name)
}

// rootMountOptions returns the mount options of "/" in the mount namespace of pid.
func rootMountOptions(pid int) string {
	GinkgoHelper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", pid))
	Expect(err).NotTo(HaveOccurred())
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS ...
		fields := strings.Fields(sc.Text())
		if len(fields) > 5 && fields[4] == "/" {
			return fields[5]
		}
	}
	Fail(fmt.Sprintf("no mount of / in /proc/%d/mountinfo", pid))
	return ""
}

// proberMetrics reads the kubelet's /metrics/probes (prober_probe_total) through the API
// server's node proxy (the API server authenticates to the kubelet with its kubelet client
// certificate).
func proberMetrics(ctx context.Context) string {
	GinkgoHelper()
	body, err := clientset.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", realnode.NodeName, "proxy", "metrics", "probes").DoRaw(ctx)
	Expect(err).NotTo(HaveOccurred(), "kubelet /metrics/probes through the node proxy: %s", body)
	return string(body)
}

// probeCount sums the kubelet's prober_probe_total samples of the manager container in pod
// for one probe type ("Liveness", "Readiness") and result ("successful", "failed", "unknown").
func probeCount(metrics, pod, probeType, result string) int {
	want := []string{
		`container="` + managerContainer + `"`, `namespace="` + operatorNamespace + `"`, `pod="` + pod + `"`,
		`probe_type="` + probeType + `"`, `result="` + result + `"`,
	}
	total := 0
	for _, line := range strings.Split(metrics, "\n") {
		if !strings.HasPrefix(line, "prober_probe_total{") || !containsAll(line, want) {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err == nil {
			total += int(v)
		}
	}
	return total
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// expectProbesPass waits until the kubelet has run the liveness and readiness probes of every
// pod's manager successfully and checks that none failed.
func expectProbesPass(ctx context.Context, pods []corev1.Pod) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		metrics := proberMetrics(ctx)
		for _, p := range pods {
			for _, probe := range []string{"Liveness", "Readiness"} {
				g.Expect(probeCount(metrics, p.Name, probe, "successful")).To(BeNumerically(">", 0), "%s probes of %s that passed", probe, p.Name)
				g.Expect(probeCount(metrics, p.Name, probe, "failed")).To(BeZero(), "%s probes of %s that failed", probe, p.Name)
			}
		}
	}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(2 * time.Second).Should(Succeed())
}

// scrapeMetrics GETs https://addr/metrics with token (none if "") and returns the status and body.
func scrapeMetrics(ctx context.Context, addr, token string) (int, string) {
	GinkgoHelper()
	code, body, err := scrape.Metrics(ctx, addr, token)
	Expect(err).NotTo(HaveOccurred())
	return code, body
}

// serviceAccountToken creates a ServiceAccount in namespace and returns a token for it.
func serviceAccountToken(ctx context.Context, namespace, name string) string {
	GinkgoHelper()
	token, err := scrape.Token(ctx, k8s, namespace, name)
	Expect(err).NotTo(HaveOccurred())
	return token
}

// bindMetricsReader binds the bundle's metrics-reader ClusterRole to a ServiceAccount, as a
// Prometheus installation would; the binding is removed when the spec ends.
func bindMetricsReader(ctx context.Context, namespace, serviceAccount string) {
	GinkgoHelper()
	role := &rbacv1.ClusterRole{}
	Expect(k8s.Get(ctx, client.ObjectKey{Name: metricsReaderRole}, role)).To(Succeed(), "OLM creates the bundle's ClusterRole %s", metricsReaderRole)
	Expect(role.Rules).To(ContainElement(rbacv1.PolicyRule{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}))
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "realnode-" + serviceAccount},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: metricsReaderRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: serviceAccount}},
	}
	Expect(k8s.Create(ctx, binding)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) { Expect(k8s.Delete(ctx, binding)).To(Succeed()) })
}

// leaderMetric is the sample a manager reports while it leads.
const leaderMetric = `leader_election_master_status{name="` + leaseName + `"} 1`

// hasSample reports whether a metrics body has a line starting with prefix.
func hasSample(body, prefix string) bool {
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, prefix) {
			return true
		}
	}
	return false
}
