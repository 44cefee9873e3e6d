package helm

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed1b407122/database-operator/test/harness/controlplane"
	"github.com/seed1b407122/database-operator/test/harness/proc"
)

// runManager runs the manager binary on the host with the args and env of the chart's
// Deployment (only the listen addresses moved to free loopback ports), authenticated as the
// chart's ServiceAccount. It checks what kwok's simulated pods cannot: the flags parse, the
// replica takes the Lease in the release namespace with the chart's timings, the chart's
// least-privilege RBAC lets every controller sync its caches and reconcile every sample
// without a "forbidden", the secure metrics endpoint admits a token bound to the chart's
// metrics-reader ClusterRole (and no other), and a graceful stop releases the Lease
// (--leader-election-release-on-cancel).
func runManager(ctx context.Context, t *testing.T, cluster *controlplane.Cluster, d *appsv1.Deployment) {
	c := cluster.Client()
	m := startManager(ctx, t, cluster, d)

	lease := m.waitLeader(ctx, t, c)
	t.Logf("Lease %s/%s held by %s (lease %ds)", m.namespace, m.leaseID, *lease.Spec.HolderIdentity, ptr.Deref(lease.Spec.LeaseDurationSeconds, 0))
	if want := leaseSeconds(t, m.args); ptr.Deref(lease.Spec.LeaseDurationSeconds, 0) != want {
		t.Errorf("Lease duration %ds, want %ds (from --leader-election-lease-duration)", ptr.Deref(lease.Spec.LeaseDurationSeconds, 0), want)
	}

	// Every controller's caches synced with the chart's RBAC: one "Starting workers" each.
	m.poll(ctx, t, time.Minute, "every controller starts its workers", func(context.Context) (bool, error) {
		return strings.Count(m.logs.String(), "Starting workers") >= 4, nil
	})
	m.poll(ctx, t, 30*time.Second, "/readyz answers 200", func(context.Context) (bool, error) {
		return httpStatus(fmt.Sprintf("http://127.0.0.1:%d/readyz", m.probePort), "") == http.StatusOK, nil
	})

	// Every kind reconciles with the chart's RBAC: the samples of config/samples get their
	// children and a status.
	reconcileSamples(ctx, t, c, m)
	if strings.Contains(strings.ToLower(m.logs.String()), "forbidden") {
		t.Errorf("the manager was refused something with the chart's RBAC:\n%s", grep(m.logs.String(), "forbidden"))
	}

	checkMetrics(ctx, t, c, m, d.Name+"-metrics-reader")

	// A graceful stop releases the Lease at once.
	m.stop(t)
	if err := c.Get(ctx, client.ObjectKey{Namespace: m.namespace, Name: m.leaseID}, lease); err != nil {
		t.Fatal(err)
	}
	if h := ptr.Deref(lease.Spec.HolderIdentity, ""); h != "" {
		t.Errorf("after a graceful stop the Lease is still held by %q; release-on-cancel should free it", h)
	} else {
		t.Log("graceful stop: exit 0, Lease released")
	}
}

// hostManager is a manager process started by startManager.
type hostManager struct {
	cmd                *exec.Cmd
	args               []string
	logs               *lockedBuffer
	exited             chan error
	stopped            bool
	namespace, leaseID string
	// watch is the Deployment's WATCH_NAMESPACE ("" = every namespace).
	watch                  string
	probePort, metricsPort int
}

// startManager starts the manager as the Deployment's ServiceAccount; the test's cleanup
// kills it if it still runs and prints its log if the test failed.
func startManager(ctx context.Context, t *testing.T, cluster *controlplane.Cluster, d *appsv1.Deployment) *hostManager {
	t.Helper()
	bin := managerBinary(t)
	container := d.Spec.Template.Spec.Containers[0]
	m := &hostManager{namespace: d.Namespace, logs: &lockedBuffer{}, exited: make(chan error, 1),
		probePort: freePort(t), metricsPort: freePort(t)}

	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: d.Spec.Template.Spec.ServiceAccountName, Namespace: d.Namespace}}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	writeKubeconfig(t, cluster, token(ctx, t, cluster.Client(), sa), kubeconfig)

	for _, a := range container.Args {
		switch {
		case strings.HasPrefix(a, "--metrics-bind-address="):
			a = fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", m.metricsPort)
		case strings.HasPrefix(a, "--health-probe-bind-address="):
			a = fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", m.probePort)
		case strings.HasPrefix(a, "--leader-election-id="):
			m.leaseID = strings.TrimPrefix(a, "--leader-election-id=")
		}
		m.args = append(m.args, a)
	}
	if m.leaseID == "" {
		t.Fatal("the Deployment's args have no --leader-election-id")
	}
	env := append(os.Environ(), "KUBECONFIG="+kubeconfig)
	for _, e := range container.Env {
		env = append(env, e.Name+"="+e.Value)
		if e.Name == "WATCH_NAMESPACE" {
			m.watch = e.Value
		}
	}
	t.Logf("running %s %s", bin, strings.Join(m.args, " "))
	m.cmd = exec.Command(bin, m.args...)
	m.cmd.Env = env
	m.cmd.Stdout, m.cmd.Stderr = m.logs, m.logs
	m.cmd.SysProcAttr = proc.SysProcAttr()
	if err := m.cmd.Start(); err != nil {
		t.Fatalf("starting the manager: %v", err)
	}
	go func() { m.exited <- m.cmd.Wait() }()
	t.Cleanup(func() {
		if !m.stopped {
			_ = m.cmd.Process.Kill()
			t.Logf("killed the manager: %v", <-m.exited)
		}
		if t.Failed() {
			t.Logf("manager log:\n%s", m.logs.String())
		}
	})
	return m
}

// waitLeader waits until the Lease in the release namespace has a holder.
func (m *hostManager) waitLeader(ctx context.Context, t *testing.T, c client.Client) *coordinationv1.Lease {
	t.Helper()
	lease := &coordinationv1.Lease{}
	m.poll(ctx, t, time.Minute, "the manager holds the Lease "+m.namespace+"/"+m.leaseID, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: m.namespace, Name: m.leaseID}, lease); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return ptr.Deref(lease.Spec.HolderIdentity, "") != "", nil
	})
	return lease
}

// stop sends SIGTERM and expects exit 0 within 30s.
func (m *hostManager) stop(t *testing.T) {
	t.Helper()
	if err := m.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-m.exited:
		m.stopped = true
		if err != nil {
			t.Errorf("the manager exited with %v on SIGTERM", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the manager did not stop within 30s of SIGTERM")
	}
}

// poll waits for done, failing early when the manager exits.
func (m *hostManager) poll(ctx context.Context, t *testing.T, timeout time.Duration, what string, done wait.ConditionWithContextFunc) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		select {
		case err := <-m.exited:
			m.exited <- err
			return false, fmt.Errorf("the manager exited: %w", err)
		default:
		}
		return done(ctx)
	})
	if err != nil {
		t.Fatalf("waiting until %s: %v", what, err)
	}
}

// checkMetrics scrapes the secure metrics endpoint: a token bound to the chart's
// metrics-reader ClusterRole gets 200, another token 403.
func checkMetrics(ctx context.Context, t *testing.T, c client.Client, m *hostManager, readerRole string) {
	t.Helper()
	reader := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "prometheus", Namespace: m.namespace}}
	stranger := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "stranger", Namespace: m.namespace}}
	for _, s := range []*corev1.ServiceAccount{reader, stranger} {
		if err := c.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "prometheus-" + readerRole},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: readerRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: reader.Name, Namespace: m.namespace}},
	}); err != nil {
		t.Fatal(err)
	}
	metricsURL := fmt.Sprintf("https://127.0.0.1:%d/metrics", m.metricsPort)
	readerToken, strangerToken := token(ctx, t, c, reader), token(ctx, t, c, stranger)
	m.poll(ctx, t, 30*time.Second, "the metrics-reader token scrapes /metrics", func(context.Context) (bool, error) {
		return httpStatus(metricsURL, readerToken) == http.StatusOK, nil
	})
	if code := httpStatus(metricsURL, strangerToken); code != http.StatusForbidden {
		t.Errorf("a token without the metrics-reader role got %d from /metrics, want 403", code)
	}
	t.Logf("metrics: 200 for a token bound to %s, 403 for another", readerRole)
}

// reconcileSamples creates every sample of config/samples in a namespace of its own ("samples",
// or the first watched namespace of a namespaced release) and waits until each has status
// conditions and a child of the kind its controller creates.
func reconcileSamples(ctx context.Context, t *testing.T, c client.Client, m *hostManager) {
	t.Helper()
	ns := "samples"
	if m.watch != "" {
		ns, _, _ = strings.Cut(m.watch, ",")
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	samples := readSamples(t)
	var names []string
	for _, o := range samples {
		o.SetNamespace(ns)
		applyOne(ctx, t, c, o)
		names = append(names, o.GetKind()+" "+o.GetName())
	}
	m.poll(ctx, t, time.Minute, "every sample has status conditions and its child", func(ctx context.Context) (bool, error) {
		for _, s := range samples {
			if ok, err := reconciled(ctx, c, s); !ok || err != nil {
				return false, err
			}
		}
		return true, nil
	})
	t.Logf("reconciled as the chart's ServiceAccount (status + owned child): %s", strings.Join(names, ", "))
}

// readSamples decodes every sample of config/samples.
func readSamples(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "config/samples/*_v1alpha1_*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples in config/samples (%v)", err)
	}
	var samples []*unstructured.Unstructured
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := decode(string(data))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		samples = append(samples, objs...)
	}
	return samples
}

// childKinds are the kinds of child each controller creates, by the kind of its owner.
var childKinds = map[string]func() client.ObjectList{
	"DatabaseCluster": func() client.ObjectList { return &appsv1.StatefulSetList{} },
	"Echo":            func() client.ObjectList { return &batchv1.JobList{} },
	"ScheduledEcho":   func() client.ObjectList { return &batchv1.CronJobList{} },
	"VoteConfig":      func() client.ObjectList { return &corev1.ConfigMapList{} },
}

// reconciled reports whether the sample has status conditions and a child it controls.
func reconciled(ctx context.Context, c client.Client, s *unstructured.Unstructured) (bool, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(s.GroupVersionKind())
	if err := c.Get(ctx, client.ObjectKeyFromObject(s), u); err != nil {
		return false, err
	}
	if conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions"); len(conds) == 0 {
		return false, nil
	}
	if s.GetKind() == "DatabaseBackup" || s.GetKind() == "ScheduledDatabaseBackup" {
		// A backup has no child until its cluster's claims are Bound, and none where the
		// snapshot API is missing; a schedule has none before its first run: their conditions
		// show that the manager reconciled them.
		return true, nil
	}
	newList, ok := childKinds[s.GetKind()]
	if !ok {
		return false, fmt.Errorf("sample %s of unknown kind %s", s.GetName(), s.GetKind())
	}
	list := newList()
	if err := c.List(ctx, list, client.InNamespace(s.GetNamespace())); err != nil {
		return false, err
	}
	for _, item := range listItems(list) {
		if ref := metav1.GetControllerOf(item); ref != nil && ref.Kind == s.GetKind() && ref.Name == s.GetName() {
			return true, nil
		}
	}
	return false, nil
}

func listItems(list client.ObjectList) []metav1.Object {
	var out []metav1.Object
	switch l := list.(type) {
	case *appsv1.StatefulSetList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *batchv1.JobList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *batchv1.CronJobList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *corev1.ConfigMapList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	}
	return out
}

// managerBinary is MANAGER_BIN, or the manager built from the repository into a temp dir.
func managerBinary(t *testing.T) string {
	if bin := os.Getenv("MANAGER_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "manager")
	began := time.Now()
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = repoRoot
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the manager: %v\n%s", err, out)
	}
	t.Logf("built the manager in %s (set MANAGER_BIN to reuse one)", time.Since(began).Round(time.Millisecond))
	return bin
}

func token(ctx context.Context, t *testing.T, c client.Client, sa *corev1.ServiceAccount) string {
	t.Helper()
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}
	if err := c.SubResource("token").Create(ctx, sa, req); err != nil {
		t.Fatalf("requesting a token of %s/%s: %v", sa.Namespace, sa.Name, err)
	}
	return req.Status.Token
}

func writeKubeconfig(t *testing.T, cluster *controlplane.Cluster, token, path string) {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: cluster.Config.Host, CertificateAuthorityData: cluster.Config.CAData,
		CertificateAuthority: cluster.Config.CAFile}
	cfg.AuthInfos["sa"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["sa"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "sa"}
	cfg.CurrentContext = "sa"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
}

func leaseSeconds(t *testing.T, args []string) int32 {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--leader-election-lease-duration="); ok {
			d, err := time.ParseDuration(v)
			if err != nil {
				t.Fatal(err)
			}
			return int32(d / time.Second)
		}
	}
	t.Fatal("no --leader-election-lease-duration")
	return 0
}

func httpStatus(url, token string) int {
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the manager's self-signed certificate
	}}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

func freePort(t *testing.T) int {
	t.Helper()
	port, err := proc.FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return port
}

func grep(text, word string) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(strings.ToLower(line), word) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// lockedBuffer is a bytes.Buffer the manager's output goroutine and the test share.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
