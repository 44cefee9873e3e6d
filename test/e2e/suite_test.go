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

// Package e2e runs the operator's manager binary against the local control plane
// (kube-apiserver, etcd, kube-controller-manager, kube-scheduler and kwok's simulated nodes), so
// that StatefulSets really get pods, pods get scheduled and Ready, and claims get bound.
package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apischeme "github.com/seed1b407122/database-operator/api/scheme"
	"github.com/seed1b407122/database-operator/test/harness/controlplane"
	"github.com/seed1b407122/database-operator/test/harness/manager"
)

// podReadyTimeout is the manager's bound for a pod to get Ready, short to keep the suite fast.
const podReadyTimeout = 3 * time.Second

// measureInterval is how often the manager measures the members of a cluster with
// spec.storage.autoGrow, short so that the auto-grow spec does not wait a minute for it.
const measureInterval = 10 * time.Second

var (
	cluster *controlplane.Cluster
	k8s     client.Client
	mgr     *manager.Process
	// metricsPort is the manager's secure (HTTPS, token-checked) metrics port.
	metricsPort int
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(2 * time.Minute)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	RunSpecs(t, "e2e on the local control plane")
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

	mgr = startManager(ctx)
}, NodeTimeout(5*time.Minute))

var _ = AfterSuite(func() {
	stopManager()
	if cluster != nil {
		Expect(cluster.Stop()).To(Succeed())
	}
})

// startManager runs the manager binary (MANAGER_BIN, built by "make test-e2e") against the
// cluster, as a user would with "make run", and waits until it reports ready.
func startManager(ctx context.Context) *manager.Process {
	bin := os.Getenv("MANAGER_BIN")
	if bin == "" {
		bin = filepath.Join("..", "..", "bin", "manager")
	}
	m, err := manager.Start(ctx, manager.Options{
		Binary:     bin,
		Kubeconfig: cluster.KubeconfigPath,
		LogPath:    filepath.Join(cluster.WorkDir, "manager.log"),
		PortFlags:  []string{manager.MetricsFlag},
		Args: []string{"--leader-elect=false", "--zap-log-level=info", "--pod-ready-timeout=" + podReadyTimeout.String(),
			"--storage-measure-interval=" + measureInterval.String()},
		// The storage agent's image (spec.storage.autoGrow): kwok runs no container, any name does.
		Env: []string{"RELATED_IMAGE_STORAGE_AGENT=registry.example/database-operator:e2e"},
	})
	Expect(err).NotTo(HaveOccurred())
	metricsPort = m.Ports[manager.MetricsFlag]
	return m
}

// stopManager stops the manager gracefully and checks that it exits cleanly.
func stopManager() {
	if mgr == nil {
		return
	}
	Expect(mgr.Stop(30*time.Second)).To(Succeed(), "the manager exits 0 on SIGINT")
}

// dumpNamespace writes what a failed spec needs to tell why: the pods, claims and StatefulSets of
// ns with the fields that decide readiness and deletion, its events, and the manager's log tail.
func dumpNamespace(ctx context.Context, ns string) {
	var pods corev1.PodList
	if err := k8s.List(ctx, &pods, client.InNamespace(ns)); err == nil {
		for _, pod := range pods.Items {
			var claims []string
			for _, v := range pod.Spec.Volumes {
				if v.PersistentVolumeClaim != nil {
					claims = append(claims, v.PersistentVolumeClaim.ClaimName)
				}
			}
			GinkgoWriter.Printf("pod %s uid=%s phase=%s node=%q deleting=%v claims=%v conditions=%v\n", pod.Name, pod.UID,
				pod.Status.Phase, pod.Spec.NodeName, pod.DeletionTimestamp != nil, claims, pod.Status.Conditions)
		}
	}
	var claims corev1.PersistentVolumeClaimList
	if err := k8s.List(ctx, &claims, client.InNamespace(ns)); err == nil {
		for _, c := range claims.Items {
			GinkgoWriter.Printf("claim %s uid=%s phase=%s deleting=%v finalizers=%v owners=%v\n", c.Name, c.UID,
				c.Status.Phase, c.DeletionTimestamp != nil, c.Finalizers, c.OwnerReferences)
		}
	}
	var sets appsv1.StatefulSetList
	if err := k8s.List(ctx, &sets, client.InNamespace(ns)); err == nil {
		for _, s := range sets.Items {
			GinkgoWriter.Printf("statefulset %s generation=%d replicas=%d status=%+v\n", s.Name, s.Generation,
				ptr.Deref(s.Spec.Replicas, 0), s.Status)
		}
	}
	var events corev1.EventList
	if err := k8s.List(ctx, &events, client.InNamespace(ns)); err == nil {
		for _, e := range events.Items {
			GinkgoWriter.Printf("event %s %s/%s %s: %s (x%d)\n", e.LastTimestamp.Format(time.RFC3339), e.InvolvedObject.Kind,
				e.InvolvedObject.Name, e.Reason, e.Message, e.Count)
		}
	}
	printManagerLog()
}

// printManagerLog writes the last 4 KiB of the manager's log, for a spec that failed.
func printManagerLog() {
	if log, err := os.ReadFile(filepath.Join(cluster.WorkDir, "manager.log")); err == nil {
		GinkgoWriter.Printf("manager log (last 4 KiB):\n%s\n", tail(log, 4096))
	}
}
