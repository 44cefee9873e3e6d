package runbundle

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/seed1b407122/database-operator/test/harness/olm"
	"github.com/seed1b407122/database-operator/test/harness/proc"
)

// olmMapper knows the built-in kinds this package uses and, with olm, OLM's kinds: a fake
// cluster with or without OLM installed.
func olmMapper(withOLM bool) meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(corev1.SchemeGroupVersion.WithKind("Namespace"), meta.RESTScopeRoot)
	for _, gvk := range []schema.GroupVersionKind{
		corev1.SchemeGroupVersion.WithKind("ConfigMap"), corev1.SchemeGroupVersion.WithKind("Service"),
		appsv1.SchemeGroupVersion.WithKind("Deployment"),
	} {
		m.Add(gvk, meta.RESTScopeNamespace)
	}
	if withOLM {
		for _, kind := range []string{olm.KindCatalogSource, olm.KindClusterServiceVersion, olm.KindInstallPlan, olm.KindSubscription} {
			m.Add(schema.FromAPIVersionAndKind(olm.APIVersionV1alpha1, kind), meta.RESTScopeNamespace)
		}
		m.Add(schema.FromAPIVersionAndKind(olm.APIVersionV1, olm.KindOperatorGroup), meta.RESTScopeNamespace)
	}
	return m
}

func fakeCluster(withOLM bool, objs ...client.Object) client.Client {
	return fake.NewClientBuilder().WithRESTMapper(olmMapper(withOLM)).WithObjects(objs...).Build()
}

var _ = Describe("RunBundle's checks", Label("unit"), func() {
	ctx := context.Background()
	b := &olm.Bundle{Package: "pkg", CSVName: "pkg.v1"}
	opts := func(stateDir string) Options {
		return Options{Namespace: "ns", StateDir: stateDir, CatalogMode: CatalogModeHost, CatalogServer: "catalog-serve"}
	}

	It("says so when the cluster has no OLM", func() {
		err := checkReady(ctx, fakeCluster(false), opts(GinkgoT().TempDir()), b)
		Expect(err).To(MatchError("OLM is not installed on this cluster (no operators.coreos.com/v1alpha1 CatalogSource API): install OLM first"))
	})

	It("refuses a namespace with an earlier run's state", func() {
		stateDir := GinkgoT().TempDir()
		Expect(os.MkdirAll(filepath.Join(stateDir, "ns"), 0o755)).To(Succeed())
		Expect(writeState(filepath.Join(stateDir, "ns"), &bundleState{Namespace: "ns"})).To(Succeed())
		err := checkReady(ctx, fakeCluster(true), opts(stateDir), b)
		Expect(err).To(MatchError(filepath.Join(stateDir, "ns") + " holds an earlier run-bundle in namespace ns: remove it first (make cleanup-bundle NAMESPACE=ns)"))
	})

	It("refuses a namespace that already subscribes to the package", func() {
		sub := olm.BuildSubscription(olm.SubscriptionOptions{Namespace: "ns", Name: "mine", Package: "pkg", Channel: "stable"})
		err := checkReady(ctx, fakeCluster(true, sub), opts(GinkgoT().TempDir()), b)
		Expect(err).To(MatchError("namespace ns already subscribes to pkg (Subscription mine): remove it first"))
	})

	DescribeTable("refuses incomplete options",
		func(change func(*Options), want string) {
			o := opts(GinkgoT().TempDir())
			change(&o)
			Expect(checkReady(ctx, fakeCluster(true), o, b)).To(MatchError(want))
		},
		Entry("no namespace", func(o *Options) { o.Namespace = "" }, "no namespace given"),
		Entry("an unknown catalog mode", func(o *Options) { o.CatalogMode = "docker" }, `catalog mode "docker": want host or cluster`),
		Entry("host mode without a server", func(o *Options) { o.CatalogServer = "" }, "the host mode needs the catalog-serve binary"),
	)
})

var _ = Describe("CleanupBundle", Label("unit"), func() {
	ctx := context.Background()
	managed := map[string]string{olm.ManagedByLabel: olm.ManagedBy}
	plan := func(name string, csvs ...string) client.Object {
		p := olm.NewObject(olm.APIVersionV1alpha1, olm.KindInstallPlan, "ns", name)
		p.Object["spec"] = map[string]any{"clusterServiceVersionNames": csvNames(csvs)}
		return p
	}
	copied := olm.NewCSV("ns", "pkg.v2")
	copied.SetLabels(map[string]string{"olm.copiedFrom": "elsewhere"})
	objMeta := func(name string, labels map[string]string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: labels}
	}

	It("removes what run-bundle made, stops its server, leaves the rest, and can run again", func() {
		stateDir := GinkgoT().TempDir()
		dir := filepath.Join(stateDir, "ns")
		Expect(os.MkdirAll(filepath.Join(dir, catalogSubdir), 0o755)).To(Succeed())
		Expect(writeState(dir, &bundleState{Namespace: "ns", Package: "pkg", CSV: "pkg.v1", CatalogSource: "pkg-catalog", CatalogMode: CatalogModeHost})).To(Succeed())
		mark, err := ServerMark(stateDir, "ns")
		Expect(err).NotTo(HaveOccurred())
		server, err := proc.Start("server", "/bin/sh", []string{"-c", "sleep 60", mark}, proc.Options{LogPath: filepath.Join(dir, "server.log"), Detached: true})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { _ = server.Stop() })
		// Until the child has called exec, /proc shows this test's command line, not the mark.
		Eventually(func() bool { return proc.Alive(server.PID(), mark) }).Should(BeTrue())
		Expect(os.WriteFile(filepath.Join(dir, PIDFile), []byte(strconv.Itoa(server.PID())+"\n"), 0o644)).To(Succeed())

		sub := withStatus(olm.BuildSubscription(olm.SubscriptionOptions{Namespace: "ns", Package: "pkg", Labels: managed}),
			map[string]any{"installedCSV": "pkg.v1", "currentCSV": "pkg.v1"})
		gone := []client.Object{
			sub, olm.NewCSV("ns", "pkg.v1"), olm.NewCSV("ns", "pkg.v0"), plan("install-pkg", "pkg.v1"),
			olm.BuildOperatorGroup("ns", "pkg", []string{"ns"}, managed),
			olm.BuildCatalogSource("ns", "pkg-catalog", "127.0.0.1:1", "pkg", managed),
			&corev1.ConfigMap{ObjectMeta: objMeta("pkg-catalog", managed)},
			&appsv1.Deployment{ObjectMeta: objMeta("pkg-catalog", managed)},
		}
		kept := []client.Object{
			olm.NewCSV("ns", "other.v1"), copied, plan("install-other", "other.v1"),
			olm.BuildOperatorGroup("ns", "theirs", nil, nil),
			&corev1.Service{ObjectMeta: objMeta("pkg-catalog", nil)},
		}
		c := fakeCluster(true, append(append([]client.Object{}, gone...), kept...)...)
		var log bytes.Buffer
		Expect(Cleanup(ctx, c, CleanupOptions{Namespace: "ns", StateDir: stateDir, Log: &log})).To(Succeed())

		for _, obj := range gone {
			Expect(apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(obj), obj))).To(BeTrue(), "%s %s is left", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName())
		}
		for _, obj := range kept {
			Expect(c.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed(), "%s was deleted", obj.GetName())
		}
		Eventually(server.Done()).Should(BeClosed())
		Expect(dir).NotTo(BeAnExistingFile())
		Expect(log.String()).To(ContainSubstring("Removed pkg from namespace ns"))

		// Without the state, the bundle directory names the package; nothing is left to do.
		bundleDir := writeBundle("annotations:\n  operators.operatorframework.io.bundle.package.v1: pkg\n  operators.operatorframework.io.bundle.channels.v1: fast\n", olm.MinimalCSV)
		Expect(Cleanup(ctx, c, CleanupOptions{Namespace: "ns", StateDir: stateDir, BundleDir: bundleDir})).To(Succeed())
		for _, obj := range kept {
			Expect(c.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed(), "%s was deleted", obj.GetName())
		}
	})
})

// csvNames is csvs as the []any an unstructured object holds.
func csvNames(csvs []string) []any {
	out := make([]any, len(csvs))
	for i, v := range csvs {
		out[i] = v
	}
	return out
}

// withStatus sets obj's status, as OLM would.
func withStatus(obj *unstructured.Unstructured, status map[string]any) *unstructured.Unstructured {
	obj.Object["status"] = status
	return obj
}

// writeBundle writes a minimal bundle directory: annotations and a CSV.
func writeBundle(annotations, csv string) string {
	dir := GinkgoT().TempDir()
	Expect(olm.WriteMinimalBundle(dir, annotations, csv)).To(Succeed())
	return dir
}
