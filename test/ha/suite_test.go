//go:build e2e

/*
Copyright 2026 The database-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package ha tests the manager's high availability on the local control plane: several
// manager processes elect one leader through a Lease, only the leader reconciles, and another
// one takes over when the leader stops (SIGTERM, the Lease is released) or dies (SIGKILL, the
// Lease expires).
package ha

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
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
)

const (
	// leaseNamespace holds the leader election Lease (--leader-election-namespace).
	leaseNamespace = "database-operator-system"
	// leaseName is the manager's default --leader-election-id.
	leaseName = "database-operator.seed1b407122.io"
	// The manager's default leader election timings, which the managers run with.
	leaseDuration = 15 * time.Second
	retryPeriod   = 2 * time.Second
)

var (
	cluster *localcluster.Cluster
	k8s     client.Client

	managersMu sync.Mutex
	managers   []*managerProcess
)

func TestHA(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(2 * time.Minute)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	RunSpecs(t, "leader election and fail-over of the manager on the local control plane")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	began := time.Now()
	var err error
	cluster, err = localcluster.Start(ctx, localcluster.Options{
		Nodes:             3,
		CRDDirectoryPaths: []string{filepath.Join("..", "..", "config", "crd", "bases")},
		Log:               GinkgoWriter,
	})
	Expect(err).NotTo(HaveOccurred())
	AddReportEntry("local control plane start", time.Since(began).Round(time.Millisecond).String())

	scheme := runtime.NewScheme()
	Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	Expect(databasev1alpha1.AddToScheme(scheme)).To(Succeed())
	k8s, err = client.New(cluster.Config, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: leaseNamespace}})).To(Succeed())
}, NodeTimeout(5*time.Minute))

// AfterSuite also runs when a spec or BeforeSuite failed: no manager and no part of the
// cluster outlives the suite.
var _ = AfterSuite(func() {
	killManagers()
	if cluster != nil {
		Expect(cluster.Stop()).To(Succeed())
	}
})

// managerProcess is one manager binary started by the suite.
type managerProcess struct {
	name        string
	cmd         *exec.Cmd
	logPath     string
	probePort   int
	metricsPort int
	exited      chan struct{} // closed when the process has exited
	exitErr     error         // set before exited is closed
}

// startManager runs the manager binary (MANAGER_BIN, built by "make test-ha") with leader
// election on and the default timings, and waits until its probes answer. It does not wait
// for leadership.
func startManager(ctx context.Context, name string) *managerProcess {
	bin := os.Getenv("MANAGER_BIN")
	if bin == "" {
		bin = filepath.Join("..", "..", "bin", "manager")
	}
	m := &managerProcess{
		name:        name,
		logPath:     filepath.Join(cluster.WorkDir, "manager-"+name+".log"),
		probePort:   freePort(),
		metricsPort: freePort(),
		exited:      make(chan struct{}),
	}
	logFile, err := os.Create(m.logPath)
	Expect(err).NotTo(HaveOccurred())
	m.cmd = exec.Command(bin,
		"--leader-elect",
		"--leader-election-namespace="+leaseNamespace,
		"--leader-election-release-on-cancel=true",
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", m.probePort),
		fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", m.metricsPort),
		"--metrics-secure=false",
		"--zap-log-level=info")
	m.cmd.Env = append(os.Environ(), "KUBECONFIG="+cluster.KubeconfigPath)
	m.cmd.Stdout, m.cmd.Stderr = logFile, logFile
	m.cmd.SysProcAttr = localcluster.ChildSysProcAttr()
	Expect(m.cmd.Start()).To(Succeed(), "starting %s: build it with 'make build'", bin)
	_ = logFile.Close() // the child has its own descriptor
	managersMu.Lock()
	managers = append(managers, m)
	managersMu.Unlock()
	go func() {
		m.exitErr = m.cmd.Wait()
		close(m.exited)
	}()
	GinkgoWriter.Printf("manager %s: pid %d, probes :%d, metrics :%d, log %s\n",
		name, m.cmd.Process.Pid, m.probePort, m.metricsPort, m.logPath)

	Eventually(func(g Gomega) {
		g.Expect(m.running()).To(BeTrue(), "manager %s exited: %v", name, m.exitErr)
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", m.probePort))
		g.Expect(err).NotTo(HaveOccurred())
		defer func() { _ = resp.Body.Close() }()
		g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
	}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed(),
		"manager %s did not become ready; see %s", name, m.logPath)
	return m
}

func (m *managerProcess) running() bool {
	select {
	case <-m.exited:
		return false
	default:
		return true
	}
}

// signal sends sig to the manager (and only to it: it runs in its own process group).
func (m *managerProcess) signal(sig syscall.Signal) {
	Expect(m.cmd.Process.Signal(sig)).To(Succeed())
}

// waitExit waits for the manager to exit and returns its exit error.
func (m *managerProcess) waitExit(timeout time.Duration) error {
	select {
	case <-m.exited:
		return m.exitErr
	case <-time.After(timeout):
		Fail(fmt.Sprintf("manager %s did not exit within %s", m.name, timeout))
		return nil
	}
}

// logEntries parses the manager's JSON log lines (zap's production encoding); other lines are
// skipped.
func (m *managerProcess) logEntries() []map[string]any {
	data, err := os.ReadFile(m.logPath)
	Expect(err).NotTo(HaveOccurred())
	var entries []map[string]any
	scanner := bufio.NewScanner(bytes.NewReader(data))
	scanner.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for scanner.Scan() {
		line := scanner.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var entry map[string]any
		if json.Unmarshal(line, &entry) == nil {
			entries = append(entries, entry)
		}
	}
	return entries
}

// logged reports whether the manager logged a message msg with the given key/value pairs.
func (m *managerProcess) logged(msg string, keysAndValues ...string) bool {
	for _, e := range m.logEntries() {
		if e["msg"] != msg {
			continue
		}
		matches := true
		for i := 0; i+1 < len(keysAndValues); i += 2 {
			if fmt.Sprint(e[keysAndValues[i]]) != keysAndValues[i+1] {
				matches = false
			}
		}
		if matches {
			return true
		}
	}
	return false
}

// Log lines of controller-runtime and client-go that the suite relies on.
const (
	msgAttemptingLease = "Attempting to acquire leader lease..."
	msgAcquiredLease   = "Successfully acquired lease"
	msgStartingCtrl    = "Starting Controller"
	msgStartingWorkers = "Starting workers"
)

// reconciling reports whether the manager started the workers of the databasecluster controller,
// which controller-runtime does only once the manager leads.
func (m *managerProcess) reconciling() bool {
	return m.logged(msgStartingWorkers, "controller", "databasecluster")
}

// metrics returns the manager's metrics, as sample line (name{labels}) → value.
func (m *managerProcess) metrics(g Gomega) map[string]float64 {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", m.metricsPort))
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
	body, err := io.ReadAll(resp.Body)
	g.Expect(err).NotTo(HaveOccurred())
	samples := map[string]float64{}
	for line := range strings.SplitSeq(string(body), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			samples[line[:i]] = v
		}
	}
	return samples
}

// sumMetric adds up the samples of metric whose labels contain every one of labels
// (`key="value"`).
func sumMetric(samples map[string]float64, metric string, labels ...string) float64 {
	var sum float64
	for sample, v := range samples {
		name, rest, _ := strings.Cut(sample, "{")
		if name != metric {
			continue
		}
		matches := true
		for _, l := range labels {
			if !strings.Contains(rest, l) {
				matches = false
			}
		}
		if matches {
			sum += v
		}
	}
	return sum
}

// successfulWrites counts the manager's API requests that changed something: POST, PUT,
// PATCH and DELETE answered with a 2xx code.
func (m *managerProcess) successfulWrites(g Gomega) float64 {
	var sum float64
	for sample, v := range m.metrics(g) {
		name, labels, _ := strings.Cut(sample, "{")
		if name != "rest_client_requests_total" || !strings.Contains(labels, `code="2`) {
			continue
		}
		for _, method := range []string{"POST", "PUT", "PATCH", "DELETE"} {
			if strings.Contains(labels, `method="`+method+`"`) {
				sum += v
			}
		}
	}
	return sum
}

// killManagers kills every manager still running and waits for it.
func killManagers() {
	managersMu.Lock()
	defer managersMu.Unlock()
	for _, m := range managers {
		if m.running() {
			_ = m.cmd.Process.Kill()
		}
		select {
		case <-m.exited:
		case <-time.After(30 * time.Second):
			GinkgoWriter.Printf("manager %s (pid %d) did not exit after SIGKILL\n", m.name, m.cmd.Process.Pid)
		}
	}
}

// printManagerLogs writes the tail of every manager's log, for failed specs.
func printManagerLogs() {
	managersMu.Lock()
	defer managersMu.Unlock()
	for _, m := range managers {
		data, err := os.ReadFile(m.logPath)
		if err != nil {
			continue
		}
		if len(data) > 6144 {
			data = data[len(data)-6144:]
		}
		GinkgoWriter.Printf("manager %s log (last 6 KiB):\n%s\n", m.name, data)
	}
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}
