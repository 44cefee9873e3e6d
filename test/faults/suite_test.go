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

// Package faults is the fault-injection tier: the manager binary runs on the local control
// plane behind a fault proxy (test/harness/faultproxy) that injects conflicts, 5xx and 429
// answers, timeouts, latency and cut watches; kube-apiserver and etcd are stopped and started
// mid-reconcile; the leader is killed at each step of a storage growth and a scale-down while a
// second manager waits to take over. After each fault the suite checks the same invariants:
// exactly the children the spec asks for, every claim kept unless Delete was asked (same UID:
// no data lost), pods not restarted by a growth, status converged, no write in a quiet window.
package faults

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apischeme "github.com/seed1b407122/database-operator/api/scheme"
	"github.com/seed1b407122/database-operator/test/harness/controlplane"
	"github.com/seed1b407122/database-operator/test/harness/faultproxy"
	"github.com/seed1b407122/database-operator/test/harness/leader"
	"github.com/seed1b407122/database-operator/test/harness/manager"
)

const (
	// podReadyTimeout is the manager's bound for a pod to get Ready, short to keep the suite fast.
	podReadyTimeout = 3 * time.Second
	// quietWindow is how long a converged cluster is watched for writes of the operator.
	quietWindow = 3 * time.Second
	// faultWindow is how long the operator works through the injected faults of a step of the
	// rates spec before they are turned off (most steps converge within it even so).
	faultWindow = 8 * time.Second
	// The Lease timings of the managers that take over from each other: shorter than the
	// defaults (15 s, 10 s, 2 s) so that a takeover costs ~6 s, long enough for 2 loaded cores.
	leaseDuration = 6 * time.Second
	renewDeadline = 4 * time.Second
	retryPeriod   = time.Second
	// reportEntry names the report entries that make the fault table.
	reportEntry = "fault"
)

var (
	cluster *controlplane.Cluster
	k8s     client.Client
	proxy   *faultproxy.Proxy
	// proxyKubeconfig reaches the API server through the proxy: every manager uses it.
	proxyKubeconfig string

	managersMu sync.Mutex
	managers   []*leader.Manager
	plain      []*manager.Process
)

func TestFaults(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(2 * time.Minute)
	SetDefaultEventuallyPollingInterval(200 * time.Millisecond)
	// The waits pass the spec's context; without this they would ignore the 2 min default and
	// wait for the spec's NodeTimeout.
	EnforceDefaultTimeoutsWhenUsingContexts()
	RunSpecs(t, "fault injection on the local control plane")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	began := time.Now()
	var err error
	cluster, err = controlplane.Start(ctx, controlplane.Options{
		Nodes: 3,
		// FAULTS_WORK_DIR keeps the logs of every component and manager after the run.
		WorkDir:           os.Getenv("FAULTS_WORK_DIR"),
		CRDDirectoryPaths: []string{filepath.Join("..", "..", "config", "crd", "bases")},
		Log:               GinkgoWriter,
	})
	Expect(err).NotTo(HaveOccurred())
	AddReportEntry("local control plane start", time.Since(began).Round(time.Millisecond).String())

	k8s, err = client.New(cluster.Config, client.Options{Scheme: apischeme.Must()})
	Expect(err).NotTo(HaveOccurred())
	Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: leader.LeaseNamespace}})).To(Succeed())

	proxy, err = faultproxy.Start(faultproxy.Options{Upstream: cluster.Config, Seed: 13})
	Expect(err).NotTo(HaveOccurred())
	proxyKubeconfig = filepath.Join(cluster.WorkDir, "faultproxy.kubeconfig")
	Expect(proxy.Kubeconfig(proxyKubeconfig)).To(Succeed())
	GinkgoWriter.Printf("fault proxy at %s\n", proxy.URL)
}, NodeTimeout(5*time.Minute))

// AfterSuite also runs when a spec or BeforeSuite failed: no manager, no proxy and no part of
// the cluster outlives the suite.
var _ = AfterSuite(func() {
	killManagers()
	if proxy != nil {
		Expect(proxy.Close()).To(Succeed())
	}
	if cluster != nil {
		Expect(cluster.Stop()).To(Succeed())
	}
})

// The fault table: one row per report entry named reportEntry, printed and, with
// FAULTS_REPORT set, written there as Markdown (docs/testing.md quotes it).
var _ = ReportAfterSuite("fault table", func(report Report) {
	var rows []string
	for _, spec := range report.SpecReports {
		for _, e := range spec.ReportEntries {
			if e.Name == reportEntry {
				rows = append(rows, e.StringRepresentation())
			}
		}
	}
	table := "| fault | times injected | invariants checked | data lost |\n|---|---|---|---|\n" + strings.Join(rows, "\n") + "\n"
	GinkgoWriter.Printf("\n%s", table)
	if path := os.Getenv("FAULTS_REPORT"); path != "" {
		Expect(os.WriteFile(path, []byte(table), 0o644)).To(Succeed())
	}
})

// row is one line of the fault table.
type row struct {
	fault      string
	injected   int
	invariants []string
	dataLost   int
}

// record adds the spec's row to the fault table. The data-lost column must be 0; the spec has
// failed before otherwise.
func record(r row) {
	inv := slices.Clone(r.invariants)
	sort.Strings(inv)
	inv = slices.Compact(inv)
	AddReportEntry(reportEntry, fmt.Sprintf("| %s | %d | %s | %d |", r.fault, r.injected, strings.Join(inv, ", "), r.dataLost),
		types.ReportEntryVisibilityFailureOrVerbose)
}

// managerBinary is MANAGER_BIN (set by "make test-faults") or bin/manager.
func managerBinary() string {
	if bin := os.Getenv("MANAGER_BIN"); bin != "" {
		return bin
	}
	return filepath.Join("..", "..", "bin", "manager")
}

// managerArgs are the flags every manager of the suite gets besides leader election.
func managerArgs() []string {
	return []string{"--zap-log-level=info", "--pod-ready-timeout=" + podReadyTimeout.String()}
}

// startPlainManager runs one manager without leader election, through the proxy, and waits
// until it is ready. AfterSuite kills it if it still runs.
func startPlainManager(ctx context.Context, name string) *manager.Process {
	m, err := manager.Start(ctx, manager.Options{
		Binary:     managerBinary(),
		Kubeconfig: proxyKubeconfig,
		LogPath:    filepath.Join(cluster.WorkDir, "manager-"+name+".log"),
		PortFlags:  []string{manager.MetricsFlag},
		Args:       append([]string{"--leader-elect=false", "--metrics-secure=false"}, managerArgs()...),
	})
	Expect(err).NotTo(HaveOccurred())
	managersMu.Lock()
	plain = append(plain, m)
	managersMu.Unlock()
	GinkgoWriter.Printf("manager %s: pid %d, log %s\n", name, m.Pid(), m.LogPath)
	return m
}

// startElectingManager runs a manager with leader election on (short Lease timings), through
// the proxy, and waits until its probes answer, not for leadership.
func startElectingManager(ctx context.Context, name string) *leader.Manager {
	m, err := leader.Start(ctx, leader.Options{
		Binary: managerBinary(), Name: name, LogDir: cluster.WorkDir, Kubeconfig: proxyKubeconfig,
		Args: append([]string{
			"--leader-election-lease-duration=" + leaseDuration.String(),
			"--leader-election-renew-deadline=" + renewDeadline.String(),
			"--leader-election-retry-period=" + retryPeriod.String(),
		}, managerArgs()...),
	})
	Expect(err).NotTo(HaveOccurred())
	managersMu.Lock()
	managers = append(managers, m)
	managersMu.Unlock()
	GinkgoWriter.Printf("manager %s: pid %d, log %s\n", name, m.Pid(), m.LogPath)
	return m
}

// killManagers kills every manager still running and waits for it.
func killManagers() {
	managersMu.Lock()
	defer managersMu.Unlock()
	for _, m := range managers {
		m.Kill()
	}
	for _, m := range plain {
		m.Kill()
	}
}

// printLogTail writes the end of a manager's log, for failed specs.
func printLogTail(path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	if len(data) > 6144 {
		data = data[len(data)-6144:]
	}
	GinkgoWriter.Printf("%s (last 6 KiB):\n%s\n", path, data)
}
