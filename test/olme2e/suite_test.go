//go:build olm

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

// Package olme2e installs the operator with a real Operator Lifecycle Manager on the local
// control plane (test/harness/controlplane) and checks what OLM does with the bundles of catalog/:
// install in the OwnNamespace, SingleNamespace and AllNamespaces modes, the RBAC it wires for
// each (no cluster-wide writes on namespaced resources for the namespaced modes), and the
// upgrade of the released 0.3.0 to 0.4.0.
//
// Nothing here needs a container runtime:
//   - OLM's two controllers, cmd/olm and cmd/catalog (hack/olm/go.mod, built by
//     "make olm-e2e"), run as host processes with the admin kubeconfig (olm.StartOLM).
//   - catalog/'s bundles, rendered from their directories into CATALOG_DIR ("make
//     catalog-inline"): every manifest inline, so OLM installs from the gRPC answer and never
//     runs an unpack Job (catalog/ itself names each bundle by its image, which the real-node
//     tier unpacks).
//     catalog-serve (opm serve's registry on 127.0.0.1) serves it from the host and a
//     CatalogSource points at its address (olm.ServeCatalog).
//   - kwok makes the operator's Deployment pods Ready (no code runs in them), so the CSV
//     reaches Succeeded. To prove that the RBAC OLM created is enough, the manager binary
//     runs on the host with the API server impersonating the ServiceAccount OLM created.
//
// The install steps (CatalogSource, OperatorGroup, Subscription, InstallPlan approval, the
// waits, the uninstall) are package test/harness/olm's, the code behind "make run-bundle", which a
// spec here runs as a user would.
//
// Environment: KUBEBUILDER_ASSETS (local control plane), OLM_BIN_DIR (olm, catalog and
// crds/), OPM, CATALOG_SERVE, MANAGER_BIN, PREVIOUS_MANAGER_BIN, CATALOG_DIR (the inline catalog),
// OLM_E2E_KEEP_WORKDIR=1 to keep the work directory (logs) after a green run; it is always
// kept after a failure.
package olme2e

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	apischeme "github.com/seed1b407122/database-operator/api/scheme"
	"github.com/seed1b407122/database-operator/test/harness/controlplane"
	"github.com/seed1b407122/database-operator/test/harness/olm"
	"github.com/seed1b407122/database-operator/test/harness/proc"
)

const (
	olmNamespace      = "olm"
	catalogSourceName = "database-operator-catalog"
	packageName       = "database-operator"
	// channel is the default channel (new installs); releasedChannel is the one 0.2.0 was
	// released in (0.3.0 too), deprecated in the catalog and still upgraded along: the
	// subscribers of 0.2.0 and 0.3.0 there.
	channel         = "candidate-v0"
	releasedChannel = "stable"
	// deprecationNotice is part of what OLM tells releasedChannel's subscribers.
	deprecationNotice = "The stable channel of database-operator is deprecated: releases are published in the candidate-v0 channel"
	// csvPrevious is the released bundle (hack/olm/released), run with the manager built from
	// its release commit (PREVIOUS_MANAGER_BIN); csvCurrent is bundle/, run with MANAGER_BIN.
	csvPrevious = "database-operator.v0.3.0"
	csvCurrent  = "database-operator.v0.4.0"
	// releasedBundleDir is csvPrevious's bundle as released (the Makefile's PREVIOUS_BUNDLE_DIR).
	releasedBundleDir = "../../hack/olm/released/0.3.0"
)

var (
	cluster *controlplane.Cluster
	k8s     client.Client
	// olmBins, opm and catalogServe are the binaries "make olm-e2e" built.
	olmBins, opm, catalogServe string
	// setupDone and failed decide whether the work directory (logs) is kept.
	setupDone, failed bool
	// olmProcs are OLM's controllers and the catalog server; the waits stop as soon as one
	// of them exits.
	olmProcs []*proc.Process
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
	opm = requireEnv("OPM")
	catalogServe = requireEnv("CATALOG_SERVE")
	catalogDir, err := filepath.Abs(requireEnv("CATALOG_DIR"))
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

	// The operator's CRDs are not installed: OLM installs them from the bundle.
	began := time.Now()
	cluster, err = controlplane.Start(ctx, controlplane.Options{WorkDir: workDir, Nodes: 3, Log: GinkgoWriter})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(cluster.Stop()).To(Succeed()) })
	AddReportEntry("local control plane start", since(began))

	scheme := apischeme.Must()
	k8s, err = client.New(cluster.Config, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metaName("operators")})).To(Succeed())

	// OLM's CRDs (OLMConfig included) come from the OLM module's deploy/chart/crds, copied
	// next to the binaries by "make olm-runtime". Copied CSVs are off: the cases below install
	// the same package one after the other, and copies of the first in every namespace would
	// only slow its removal.
	began = time.Now()
	olmRuntime, err := olm.StartOLM(ctx, k8s, olm.RuntimeOptions{
		BinDir: olmBins, Kubeconfig: cluster.KubeconfigPath, Namespace: olmNamespace,
		LogDir: workDir, DisableCopiedCSVs: true,
	})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(olmRuntime.Stop)
	olmProcs = append(olmProcs, olmRuntime.Processes()...)
	AddReportEntry("OLM CRDs applied and OLM started", since(began))

	// catalog-serve, not "opm serve": opm listens on every interface.
	server, err := olm.ServeCatalog(ctx, olm.ServeOptions{Server: catalogServe, Dir: catalogDir, WorkDir: workDir})
	Expect(err).NotTo(HaveOccurred())
	// OLM stops first, while its catalog is still served: a catalog operator that loses the
	// catalog mid-shutdown only reconnects and slows its own stop.
	DeferCleanup(func() error { return errors.Join(olmRuntime.Stop(), server.Stop()) })
	olmProcs = append(olmProcs, server.Process)
	expectLoopbackOnly(server.Address)

	began = time.Now()
	guarded, cancel := whileOLMRuns(ctx)
	defer cancel()
	Expect(olm.CreateCatalogSource(guarded, k8s, olm.BuildCatalogSource(olmNamespace, catalogSourceName, server.Address,
		"database-operator (catalog/)", nil))).To(Succeed())
	AddReportEntry("catalog source READY", since(began))
	setupDone = true
}, NodeTimeout(5*time.Minute))

// A spec's report includes its AfterAll, unlike CurrentSpecReport in an AfterEach.
var _ = ReportAfterEach(func(report SpecReport) {
	if report.Failed() {
		failed = true
	}
})

// whileOLMRuns returns a context that ends as soon as OLM or the catalog server exits: the
// package's waits then fail at once with that process's log instead of timing out.
func whileOLMRuns(ctx context.Context) (context.Context, context.CancelFunc) {
	return proc.WhileRunning(ctx, olmProcs...)
}

// expectLoopbackOnly checks that a server at 127.0.0.1:PORT cannot be reached through any
// other address of this machine: nothing the suite runs may listen beyond loopback.
func expectLoopbackOnly(address string) {
	host, port, err := net.SplitHostPort(address)
	Expect(err).NotTo(HaveOccurred())
	Expect(host).To(Equal("127.0.0.1"))
	addrs, err := net.InterfaceAddrs()
	Expect(err).NotTo(HaveOccurred())
	checked := 0
	for _, a := range addrs {
		ip, ok := a.(*net.IPNet)
		if !ok || ip.IP.IsLoopback() || ip.IP.IsLinkLocalUnicast() {
			continue
		}
		conn, err := net.DialTimeout("tcp", net.JoinHostPort(ip.IP.String(), port), time.Second)
		if err == nil {
			_ = conn.Close()
		}
		Expect(err).To(HaveOccurred(), "the server of %s also answers on %s", address, ip.IP)
		checked++
	}
	GinkgoWriter.Printf("%s: not reachable on the %d other address(es) of this machine\n", address, checked)
}

func requireEnv(name string) string {
	v := os.Getenv(name)
	Expect(v).NotTo(BeEmpty(), "set %s (make olm-e2e does)", name)
	return v
}

func since(t time.Time) string { return time.Since(t).Round(time.Millisecond).String() }

// withTimeout is a context for cleanup steps, which must not hang the suite.
func withTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
