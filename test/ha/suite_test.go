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

// Package ha tests the manager's high availability on the local control plane: several
// manager processes elect one leader through a Lease, only the leader reconciles, and another
// one takes over when the leader stops (SIGTERM, the Lease is released) or dies (SIGKILL, the
// Lease expires).
package ha

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apischeme "github.com/seed1b407122/database-operator/api/scheme"
	"github.com/seed1b407122/database-operator/test/harness/controlplane"
	"github.com/seed1b407122/database-operator/test/harness/leader"
)

var (
	cluster *controlplane.Cluster
	k8s     client.Client

	managersMu sync.Mutex
	managers   []*leader.Manager
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
	cluster, err = controlplane.Start(ctx, controlplane.Options{
		Nodes:             3,
		CRDDirectoryPaths: []string{filepath.Join("..", "..", "config", "crd", "bases")},
		Log:               GinkgoWriter,
	})
	Expect(err).NotTo(HaveOccurred())
	AddReportEntry("local control plane start", time.Since(began).Round(time.Millisecond).String())

	scheme := apischeme.Must()
	k8s, err = client.New(cluster.Config, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: leader.LeaseNamespace}})).To(Succeed())
}, NodeTimeout(5*time.Minute))

// AfterSuite also runs when a spec or BeforeSuite failed: no manager and no part of the
// cluster outlives the suite.
var _ = AfterSuite(func() {
	killManagers()
	if cluster != nil {
		Expect(cluster.Stop()).To(Succeed())
	}
})

// startManager runs the manager binary (MANAGER_BIN, built by "make test-ha") with leader
// election on and the default timings, and waits until its probes answer. It does not wait
// for leadership. AfterSuite kills it if it still runs.
func startManager(ctx context.Context, name string) *leader.Manager {
	bin := os.Getenv("MANAGER_BIN")
	if bin == "" {
		bin = filepath.Join("..", "..", "bin", "manager")
	}
	m, err := leader.Start(ctx, leader.Options{
		Binary: bin, Name: name, LogDir: cluster.WorkDir, Kubeconfig: cluster.KubeconfigPath,
	})
	Expect(err).NotTo(HaveOccurred())
	managersMu.Lock()
	managers = append(managers, m)
	managersMu.Unlock()
	GinkgoWriter.Printf("manager %s: pid %d, probes :%d, metrics :%d, log %s\n",
		name, m.Pid(), m.ProbePort, m.MetricsPort, m.LogPath)
	return m
}

// metrics returns the manager's metrics, as sample line (name{labels}) → value.
func metrics(g Gomega, m *leader.Manager) map[string]float64 {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", m.MetricsPort))
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
func successfulWrites(g Gomega, m *leader.Manager) float64 {
	var sum float64
	for sample, v := range metrics(g, m) {
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
		m.Kill()
		if m.Running() {
			GinkgoWriter.Printf("manager %s (pid %d) did not exit after SIGKILL\n", m.Name, m.Pid())
		}
	}
}

// printManagerLogs writes the tail of every manager's log, for failed specs.
func printManagerLogs() {
	managersMu.Lock()
	defer managersMu.Unlock()
	for _, m := range managers {
		GinkgoWriter.Printf("manager %s log (last 6 KiB):\n%s\n", m.Name, m.LogTail(6144))
	}
}
