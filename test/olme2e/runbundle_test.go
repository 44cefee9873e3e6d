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

package olme2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed1b407122/database-operator/hack/runbundle"
	"github.com/seed1b407122/database-operator/test/harness/olm"
	"github.com/seed1b407122/database-operator/test/harness/proc"
)

// These cases run "make run-bundle" and "make cleanup-bundle" as a user would, with
// KUBECONFIG pointing at the local control plane whose OLM runs on this machine.

var _ = Describe("make run-bundle and make cleanup-bundle (host catalog)", Ordered, func() {
	const namespace = "dbo-run-bundle"
	var (
		bundle   *olm.Bundle
		stateDir string
		address  string
		pid      int
		mark     string
	)

	BeforeAll(func() {
		var err error
		bundle, err = olm.ReadBundle(filepath.Join(repoRoot(), "bundle"))
		Expect(err).NotTo(HaveOccurred())
		stateDir = filepath.Join(cluster.WorkDir, "run-bundle")
	})

	// After a failure, leave the cluster to the other cases: cleanup-bundle's own code.
	AfterAll(NodeTimeout(3*time.Minute), func(ctx SpecContext) {
		Expect(runbundle.Cleanup(ctx, k8s, runbundle.CleanupOptions{
			Namespace: namespace, StateDir: stateDir, BundleDir: filepath.Join(repoRoot(), "bundle"),
		})).To(Succeed())
	})

	It("installs bundle/ through OLM: CatalogSource, OperatorGroup, Subscription, CSV Succeeded", NodeTimeout(4*time.Minute), func(ctx SpecContext) {
		began := time.Now()
		out, err := runMake(ctx, stateDir, "run-bundle", "NAMESPACE="+namespace)
		Expect(err).NotTo(HaveOccurred(), out)
		AddReportEntry("make run-bundle (render, serve, CatalogSource READY, CSV Succeeded)", since(began))
		Expect(out).To(ContainSubstring(fmt.Sprintf("ClusterServiceVersion %s/%s Succeeded", namespace, bundle.CSVName)))

		managed := map[string]string{olm.ManagedByLabel: olm.ManagedBy}
		cs := olm.NewCatalogSource(namespace, runbundle.CatalogSourceName(bundle.Package))
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(cs), cs)).To(Succeed())
		Expect(cs.GetLabels()).To(Equal(managed))
		address, _, _ = unstructured.NestedString(cs.Object, "spec", "address")
		Expect(cs.Object["spec"]).To(Equal(map[string]any{
			"sourceType":  "grpc",
			"address":     address,
			"displayName": "database-operator (run-bundle " + bundle.CSVName + ")",
			"publisher":   "run-bundle",
		}))
		state, _, _ := unstructured.NestedString(cs.Object, "status", "connectionState", "lastObservedState")
		Expect(state).To(Equal("READY"))
		expectLoopbackOnly(address)

		groups := olm.NewList(olm.APIVersionV1, olm.KindOperatorGroup)
		Expect(k8s.List(ctx, groups, client.InNamespace(namespace))).To(Succeed())
		Expect(groups.Items).To(HaveLen(1))
		Expect(groups.Items[0].GetName()).To(Equal(bundle.Package))
		Expect(groups.Items[0].GetLabels()).To(Equal(managed))
		Expect(groups.Items[0].Object["spec"]).To(HaveKeyWithValue("targetNamespaces", []any{namespace}))

		sub := olm.NewSubscription(namespace, bundle.Package)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(sub), sub)).To(Succeed())
		Expect(sub.Object["spec"]).To(Equal(map[string]any{
			"channel":             bundle.DefaultChannel,
			"name":                bundle.Package,
			"source":              cs.GetName(),
			"sourceNamespace":     namespace,
			"installPlanApproval": "Automatic",
			"startingCSV":         bundle.CSVName,
		}))
		// The catalog operator records the installed CSV in the Subscription's status on its
		// own schedule, after the CSV has Succeeded.
		expectInstalledCSV(ctx, sub, bundle.CSVName)

		csv := olm.NewCSV(namespace, bundle.CSVName)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(csv), csv)).To(Succeed())
		expectPhase(csv, "Succeeded")
		expectInstalledObjects(ctx, csv, namespace)

		// The catalog server outlives make: its pidfile names it, and its command line serves
		// the catalog rendered into the state directory.
		pid, err = runbundle.ServerPID(stateDir, namespace)
		Expect(err).NotTo(HaveOccurred())
		mark, err = runbundle.ServerMark(stateDir, namespace)
		Expect(err).NotTo(HaveOccurred())
		Expect(proc.Alive(pid, mark, catalogServe)).To(BeTrue(), "no catalog server with pid %d serving %s", pid, mark)
		Expect(filepath.Join(mark, bundle.Package, "catalog.json")).To(BeAnExistingFile())
	})

	It("refuses a second run-bundle into the same namespace", NodeTimeout(time.Minute), func(ctx SpecContext) {
		out, err := runMake(ctx, stateDir, "run-bundle", "NAMESPACE="+namespace)
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("holds an earlier run-bundle in namespace " + namespace))
	})

	It("make cleanup-bundle removes Subscription, CSV, CatalogSource, OperatorGroup and stops the server, idempotently", NodeTimeout(3*time.Minute), func(ctx SpecContext) {
		Expect(pid).To(BeNumerically(">", 0), "the install case did not run")
		began := time.Now()
		out, err := runMake(ctx, stateDir, "cleanup-bundle", "NAMESPACE="+namespace)
		Expect(err).NotTo(HaveOccurred(), out)
		AddReportEntry("make cleanup-bundle", since(began))

		expectNoOperator(ctx, namespace)
		for _, kind := range []string{olm.KindCatalogSource, olm.KindInstallPlan} {
			list := olm.NewList(olm.APIVersionV1alpha1, kind)
			Expect(k8s.List(ctx, list, client.InNamespace(namespace))).To(Succeed())
			Expect(list.Items).To(BeEmpty(), "%s left in %s", kind, namespace)
		}
		Expect(proc.Alive(pid, mark)).To(BeFalse(), "the catalog server (pid %d) still runs", pid)
		_, err = net.DialTimeout("tcp", address, time.Second)
		Expect(err).To(HaveOccurred(), "something still listens on %s", address)
		Expect(filepath.Join(stateDir, namespace)).NotTo(BeAnExistingFile())

		out, err = runMake(ctx, stateDir, "cleanup-bundle", "NAMESPACE="+namespace)
		Expect(err).NotTo(HaveOccurred(), "a second cleanup-bundle must succeed:\n%s", out)
	})
})

var _ = Describe("make run-bundle CATALOG_MODE=cluster", Ordered, func() {
	// The cluster mode is for OLM running in the cluster: the catalog is served by a pod of the
	// opm image behind a Service, and run-bundle waits for that pod to be ready before it creates
	// the CatalogSource. Here OLM runs on the host, where the Service's name does not resolve,
	// and kwok runs no container (it only reports the pod ready): the CatalogSource cannot
	// become READY. So this case
	// checks the exact objects the mode creates, that run-bundle gives up with the
	// CatalogSource's state, and that cleanup-bundle removes them; serving from the pod is not
	// exercised end to end here.
	const namespace = "dbo-run-bundle-cluster"
	var stateDir string

	BeforeAll(func() {
		stateDir = filepath.Join(cluster.WorkDir, "run-bundle-cluster")
	})

	AfterAll(NodeTimeout(3*time.Minute), func(ctx SpecContext) {
		Expect(runbundle.Cleanup(ctx, k8s, runbundle.CleanupOptions{
			Namespace: namespace, StateDir: stateDir, BundleDir: filepath.Join(repoRoot(), "bundle"),
		})).To(Succeed())
	})

	It("creates the ConfigMap, Deployment and Service of the in-cluster catalog and a CatalogSource at the Service", NodeTimeout(2*time.Minute), func(ctx SpecContext) {
		out, err := runMake(ctx, stateDir, "run-bundle", "NAMESPACE="+namespace, "CATALOG_MODE=cluster", "RUN_BUNDLE_TIMEOUT=10s")
		Expect(err).To(HaveOccurred(), "the CatalogSource cannot be READY here:\n%s", out)
		Expect(out).To(ContainSubstring("waiting for CatalogSource " + namespace + "/database-operator-catalog to be READY: timed out after 10s (--timeout)"))
		Expect(out).To(ContainSubstring("(address database-operator-catalog." + namespace + ".svc:50051)"))

		name := "database-operator-catalog"
		labels := map[string]string{
			"app.kubernetes.io/name":       name,
			"app.kubernetes.io/component":  "catalog-server",
			"app.kubernetes.io/managed-by": "run-bundle",
		}
		selector := map[string]string{"app.kubernetes.io/name": name, "app.kubernetes.io/component": "catalog-server"}
		fbc, err := os.ReadFile(filepath.Join(stateDir, namespace, "catalog", "database-operator", "catalog.json"))
		Expect(err).NotTo(HaveOccurred())

		cm := &corev1.ConfigMap{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cm)).To(Succeed())
		Expect(cm.Labels).To(Equal(labels))
		Expect(cm.Data).To(Equal(map[string]string{"catalog.json": string(fbc)}))

		dep := &appsv1.Deployment{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, dep)).To(Succeed())
		Expect(dep.Labels).To(Equal(labels))
		Expect(*dep.Spec.Replicas).To(BeEquivalentTo(1))
		Expect(dep.Spec.Selector.MatchLabels).To(Equal(selector))
		Expect(dep.Spec.Template.Labels).To(Equal(labels))
		pod := dep.Spec.Template.Spec
		Expect(*pod.SecurityContext.RunAsNonRoot).To(BeTrue())
		Expect(pod.SecurityContext.SeccompProfile.Type).To(Equal(corev1.SeccompProfileTypeRuntimeDefault))
		Expect(pod.Volumes).To(ConsistOf(
			corev1.Volume{Name: "catalog", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: name}, DefaultMode: ptr.To[int32](0o644)}}},
			corev1.Volume{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		))
		Expect(pod.Containers).To(HaveLen(1))
		c := pod.Containers[0]
		Expect(c.Image).To(Equal("quay.io/operator-framework/opm:v1.74.0"))
		Expect(c.Command).To(Equal([]string{"/bin/opm", "serve", "/configs", "--port=50051", "--cache-dir=/tmp/cache", "--cache-enforce-integrity=false"}))
		Expect(c.Ports).To(Equal([]corev1.ContainerPort{{Name: "grpc", ContainerPort: 50051, Protocol: corev1.ProtocolTCP}}))
		Expect(c.ReadinessProbe.GRPC.Port).To(BeEquivalentTo(50051))
		// subPath: opm gets a plain file, not the ConfigMap volume's "..data" links.
		Expect(c.VolumeMounts).To(ConsistOf(
			corev1.VolumeMount{Name: "catalog", MountPath: "/configs/database-operator/catalog.json", SubPath: "catalog.json", ReadOnly: true},
			corev1.VolumeMount{Name: "tmp", MountPath: "/tmp"},
		))
		Expect(*c.SecurityContext.RunAsUser).To(BeEquivalentTo(1001))
		Expect(*c.SecurityContext.AllowPrivilegeEscalation).To(BeFalse())
		Expect(*c.SecurityContext.ReadOnlyRootFilesystem).To(BeTrue())
		Expect(c.SecurityContext.Capabilities.Drop).To(Equal([]corev1.Capability{"ALL"}))

		svc := &corev1.Service{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, svc)).To(Succeed())
		Expect(svc.Labels).To(Equal(labels))
		Expect(svc.Spec.Selector).To(Equal(selector))
		Expect(svc.Spec.Ports).To(Equal([]corev1.ServicePort{{Name: "grpc", Port: 50051, TargetPort: intstr.FromString("grpc"), Protocol: corev1.ProtocolTCP}}))

		cs := olm.NewCatalogSource(namespace, name)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(cs), cs)).To(Succeed())
		Expect(cs.GetLabels()).To(Equal(map[string]string{"app.kubernetes.io/managed-by": "run-bundle"}))
		Expect(cs.Object["spec"]).To(HaveKeyWithValue("sourceType", "grpc"))
		Expect(cs.Object["spec"]).To(HaveKeyWithValue("address", "database-operator-catalog."+namespace+".svc:50051"))

		// It stopped at the CatalogSource: no OperatorGroup, no Subscription, no host process.
		for _, list := range []*unstructured.UnstructuredList{
			olm.NewList(olm.APIVersionV1, olm.KindOperatorGroup), olm.NewList(olm.APIVersionV1alpha1, olm.KindSubscription),
		} {
			Expect(k8s.List(ctx, list, client.InNamespace(namespace))).To(Succeed())
			Expect(list.Items).To(BeEmpty())
		}
		Expect(filepath.Join(stateDir, namespace, runbundle.PIDFile)).NotTo(BeAnExistingFile())
	})

	It("make cleanup-bundle removes them", NodeTimeout(2*time.Minute), func(ctx SpecContext) {
		out, err := runMake(ctx, stateDir, "cleanup-bundle", "NAMESPACE="+namespace)
		Expect(err).NotTo(HaveOccurred(), out)
		name := client.ObjectKey{Namespace: namespace, Name: "database-operator-catalog"}
		for _, obj := range []client.Object{&corev1.ConfigMap{}, &appsv1.Deployment{}, &corev1.Service{}, olm.NewCatalogSource(namespace, name.Name)} {
			err := k8s.Get(ctx, name, obj)
			Expect(err).To(HaveOccurred(), "%T %s is left", obj, name)
			Expect(client.IgnoreNotFound(err)).To(Succeed())
		}
		Expect(filepath.Join(stateDir, namespace)).NotTo(BeAnExistingFile())
	})
})

// repoRoot is the repository's root directory.
func repoRoot() string {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	Expect(err).NotTo(HaveOccurred())
	return root
}

// runMake runs "make TARGET VARS..." in the repository as a user would, with KUBECONFIG
// pointing at the local control plane, the binaries "make olm-e2e" built, and the state in
// stateDir. It returns make's output (also in the work directory's make-*.log).
func runMake(ctx context.Context, stateDir, target string, vars ...string) (string, error) {
	args := append([]string{"--no-print-directory", "-C", repoRoot(), target, "RUN_BUNDLE_STATE_DIR=" + stateDir}, vars...)
	cmd := exec.CommandContext(ctx, "make", args...)
	// A fresh make, not a sub-make of the one that runs this suite.
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); name != "MAKEFLAGS" && name != "MFLAGS" && name != "MAKELEVEL" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "KUBECONFIG="+cluster.KubeconfigPath, "OPM="+opm, "CATALOG_SERVE="+catalogServe)
	began := time.Now()
	out, err := cmd.CombinedOutput()
	GinkgoWriter.Printf("$ make %s (%s, %v)\n%s", strings.Join(args, " "), since(began), err, out)
	log, logErr := os.CreateTemp(cluster.WorkDir, "make-"+target+"-*.log")
	Expect(logErr).NotTo(HaveOccurred())
	_, _ = log.Write(out)
	Expect(log.Close()).To(Succeed())
	return string(out), err
}
