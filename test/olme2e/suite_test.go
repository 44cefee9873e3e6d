//go:build olm

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

// Package olme2e installs the operator with a real Operator Lifecycle Manager on the local
// control plane (test/localcluster) and checks what OLM does with the bundles of catalog/:
// install, the RBAC it wires, and the upgrade 0.1.0 -> 0.2.0.
//
// Nothing here needs a container runtime:
//   - OLM's two controllers, cmd/olm and cmd/catalog (hack/olm/go.mod, built by
//     "make olm-e2e"), run as host processes with the admin kubeconfig.
//   - catalog/ is a file-based catalog rendered from bundle directories: it carries every
//     manifest inline, so OLM installs from the gRPC answer and never runs an unpack Job.
//     "opm serve catalog/" runs on the host and a CatalogSource points at its address.
//   - kwok makes the operator's Deployment pods Ready (no code runs in them), so the CSV
//     reaches Succeeded. To prove that the RBAC OLM created is enough, the manager binary
//     runs on the host with the API server impersonating the ServiceAccount OLM created.
//
// Environment: KUBEBUILDER_ASSETS (local control plane), OLM_BIN_DIR (olm, catalog and
// crds/), OPM, MANAGER_BIN, CATALOG_DIR (default ../../catalog), OLM_E2E_KEEP_WORKDIR=1 to
// keep the work directory (logs) after a green run; it is always kept after a failure.
package olme2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/test/localcluster"
)

const (
	olmNamespace      = "olm"
	catalogSourceName = "database-operator-catalog"
	packageName       = "database-operator"
	channel           = "stable"
	csvV010           = "database-operator.v0.1.0"
	csvV020           = "database-operator.v0.2.0"
)

var (
	cluster *localcluster.Cluster
	k8s     client.Client
	olmBins string
	// setupDone and failed decide whether the work directory (logs) is kept.
	setupDone, failed bool
	// olmProcs are OLM's controllers and opm serve; each spec checks they still run.
	olmProcs []*child
)

func TestOLM(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(2 * time.Minute)
	SetDefaultEventuallyPollingInterval(200 * time.Millisecond)
	// Without this, an Eventually given a context waits for the context alone.
	EnforceDefaultTimeoutsWhenUsingContexts()
	RunSpecs(t, "OLM install and upgrade on the local control plane")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	logf.SetLogger(GinkgoLogr)
	olmBins = requireEnv("OLM_BIN_DIR")
	opm := requireEnv("OPM")
	catalogDir := os.Getenv("CATALOG_DIR")
	if catalogDir == "" {
		catalogDir = filepath.Join("..", "..", "catalog")
	}
	catalogDir, err := filepath.Abs(catalogDir)
	Expect(err).NotTo(HaveOccurred())

	workDir, err := os.MkdirTemp("", "olme2e-")
	Expect(err).NotTo(HaveOccurred())
	// Registered first, so it runs last: after every process below has stopped.
	DeferCleanup(func() {
		if failed || !setupDone || os.Getenv("OLM_E2E_KEEP_WORKDIR") != "" {
			GinkgoWriter.Printf("Work directory kept (logs of every component): %s\n", workDir)
			return
		}
		Expect(os.RemoveAll(workDir)).To(Succeed())
	})

	// The OLM CRDs (OLMConfig included) come from the OLM module's deploy/chart/crds, copied
	// next to the binaries by "make olm-e2e". The operator's CRDs are not installed: OLM
	// installs them from the bundle.
	began := time.Now()
	cluster, err = localcluster.Start(ctx, localcluster.Options{
		WorkDir:           workDir,
		Nodes:             3,
		CRDDirectoryPaths: []string{filepath.Join(olmBins, "crds")},
		Log:               GinkgoWriter,
	})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(cluster.Stop()).To(Succeed()) })
	AddReportEntry("local control plane start (with OLM CRDs)", since(began))

	scheme := runtime.NewScheme()
	Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	Expect(databasev1alpha1.AddToScheme(scheme)).To(Succeed())
	k8s, err = client.New(cluster.Config, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())

	for _, ns := range []string{olmNamespace, "operators"} {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metaName(ns)})).To(Succeed())
	}
	// OLMConfig/cluster, as OLM's own manifests create it. Copied CSVs are off: the two cases
	// below install the same package one after the other, and copies of the first in every
	// namespace would only slow its removal.
	olmConfig := newObject("operators.coreos.com/v1", "OLMConfig", "", "cluster")
	Expect(unstructured.SetNestedField(olmConfig.Object, true, "spec", "features", "disableCopiedCSVs")).To(Succeed())
	Expect(k8s.Create(ctx, olmConfig)).To(Succeed())

	// Both controllers bind :8080 for health and metrics (hard-coded in OLM); the second one
	// logs the clash and runs on. They use the admin kubeconfig, as OLM's own ServiceAccount
	// is cluster-admin.
	env := []string{"KUBECONFIG=" + cluster.KubeconfigPath, "OPERATOR_NAMESPACE=" + olmNamespace, "OPERATOR_NAME=olm-operator"}
	olmProcs = append(olmProcs,
		startChild("olm", filepath.Join(olmBins, "olm"), []string{"--namespace", olmNamespace}, env),
		startChild("catalog", filepath.Join(olmBins, "catalog"),
			[]string{"--namespace", olmNamespace, "--set-workload-user-id=false"}, env))
	for _, p := range olmProcs {
		DeferCleanup(p.stop)
	}

	// opm serve listens on every interface (no flag changes that): a free port found on
	// loopback, and the server lives only as long as the suite.
	port := freePort()
	opmServe := startChild("opm-serve", opm, []string{"serve", catalogDir,
		"-p", fmt.Sprint(port), "--pprof-addr", "127.0.0.1:0",
		"-t", filepath.Join(workDir, "opm-termination.log"),
		"--cache-dir", filepath.Join(workDir, "opm-cache"), "--cache-enforce-integrity=false"}, nil)
	olmProcs = append(olmProcs, opmServe)
	DeferCleanup(opmServe.stop)
	address := fmt.Sprintf("127.0.0.1:%d", port)
	Eventually(func(g Gomega) {
		expectRunning()
		conn, err := net.DialTimeout("tcp", address, time.Second)
		g.Expect(err).NotTo(HaveOccurred())
		_ = conn.Close()
	}).WithContext(ctx).Should(Succeed(), "opm serve did not listen on %s", address)

	began = time.Now()
	catalogSource := newObject("operators.coreos.com/v1alpha1", "CatalogSource", olmNamespace, catalogSourceName)
	catalogSource.Object["spec"] = map[string]any{
		"sourceType":  "grpc",
		"address":     address,
		"displayName": "database-operator (catalog/)",
		"publisher":   "olm e2e",
	}
	Expect(k8s.Create(ctx, catalogSource)).To(Succeed())
	Eventually(func(g Gomega) {
		expectRunning()
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(catalogSource), catalogSource)).To(Succeed())
		state, _, _ := unstructured.NestedString(catalogSource.Object, "status", "connectionState", "lastObservedState")
		g.Expect(state).To(Equal("READY"))
	}).WithContext(ctx).Should(Succeed(), "CatalogSource %s did not become READY", catalogSourceName)
	AddReportEntry("catalog source READY", since(began))
	setupDone = true
}, NodeTimeout(5*time.Minute))

// A spec's report includes its AfterAll, unlike CurrentSpecReport in an AfterEach.
var _ = ReportAfterEach(func(report SpecReport) {
	if report.Failed() {
		failed = true
	}
})

// expectRunning stops an Eventually at once when OLM or opm serve has exited, quoting its log.
func expectRunning() {
	for _, p := range olmProcs {
		if p.exited() {
			StopTrying(fmt.Sprintf("%s exited: %v\ntail of %s:\n%s", p.name, p.waitErr, p.logPath, tail(p.logPath))).Now()
		}
	}
}

func requireEnv(name string) string {
	v := os.Getenv(name)
	Expect(v).NotTo(BeEmpty(), "set %s (make olm-e2e does)", name)
	return v
}

func since(t time.Time) string { return time.Since(t).Round(time.Millisecond).String() }

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// tail returns the last lines of a log, for failure messages.
func tail(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	return strings.Join(lines, "\n")
}

// withTimeout is a context for cleanup steps, which must not hang the suite.
func withTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
