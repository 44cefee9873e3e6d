package olm

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
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/seed1b407122/database-operator/test/child"
)

// olmMapper knows the built-in kinds this package uses and, with olm, OLM's kinds: a fake
// cluster with or without OLM installed.
func olmMapper(olm bool) meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(corev1.SchemeGroupVersion.WithKind("Namespace"), meta.RESTScopeRoot)
	for _, gvk := range []schema.GroupVersionKind{
		corev1.SchemeGroupVersion.WithKind("ConfigMap"), corev1.SchemeGroupVersion.WithKind("Service"),
		appsv1.SchemeGroupVersion.WithKind("Deployment"),
	} {
		m.Add(gvk, meta.RESTScopeNamespace)
	}
	if olm {
		for _, kind := range []string{KindCatalogSource, KindClusterServiceVersion, KindInstallPlan, KindSubscription} {
			m.Add(schema.FromAPIVersionAndKind(APIVersionV1alpha1, kind), meta.RESTScopeNamespace)
		}
		m.Add(schema.FromAPIVersionAndKind(APIVersionV1, KindOperatorGroup), meta.RESTScopeNamespace)
	}
	return m
}

func fakeCluster(olm bool, objs ...client.Object) client.Client {
	return fake.NewClientBuilder().WithRESTMapper(olmMapper(olm)).WithObjects(objs...).Build()
}

var _ = Describe("RunBundle's checks", Label("unit"), func() {
	ctx := context.Background()
	b := &Bundle{Package: "pkg", CSVName: "pkg.v1"}
	opts := func(stateDir string) RunBundleOptions {
		return RunBundleOptions{Namespace: "ns", StateDir: stateDir, CatalogMode: CatalogModeHost, CatalogServer: "catalog-serve"}
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
		sub := BuildSubscription(SubscriptionOptions{Namespace: "ns", Name: "mine", Package: "pkg", Channel: "stable"})
		err := checkReady(ctx, fakeCluster(true, sub), opts(GinkgoT().TempDir()), b)
		Expect(err).To(MatchError("namespace ns already subscribes to pkg (Subscription mine): remove it first"))
	})

	DescribeTable("refuses incomplete options",
		func(change func(*RunBundleOptions), want string) {
			o := opts(GinkgoT().TempDir())
			change(&o)
			Expect(checkReady(ctx, fakeCluster(true), o, b)).To(MatchError(want))
		},
		Entry("no namespace", func(o *RunBundleOptions) { o.Namespace = "" }, "no namespace given"),
		Entry("an unknown catalog mode", func(o *RunBundleOptions) { o.CatalogMode = "docker" }, `catalog mode "docker": want host or cluster`),
		Entry("host mode without a server", func(o *RunBundleOptions) { o.CatalogServer = "" }, "the host mode needs the catalog-serve binary"),
	)
})

var _ = Describe("CleanupBundle", Label("unit"), func() {
	ctx := context.Background()
	managed := map[string]string{ManagedByLabel: ManagedBy}
	plan := func(name string, csvs ...string) client.Object {
		p := NewObject(APIVersionV1alpha1, KindInstallPlan, "ns", name)
		p.Object["spec"] = map[string]any{"clusterServiceVersionNames": toAny(csvs)}
		return p
	}
	copied := NewCSV("ns", "pkg.v2")
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
		server, err := child.Start("server", "/bin/sh", []string{"-c", "sleep 60", mark}, child.Options{LogPath: filepath.Join(dir, "server.log"), Detached: true})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { _ = server.Stop() })
		// Until the child has called exec, /proc shows this test's command line, not the mark.
		Eventually(func() bool { return child.Alive(server.PID(), mark) }).Should(BeTrue())
		Expect(os.WriteFile(filepath.Join(dir, PIDFile), []byte(strconv.Itoa(server.PID())+"\n"), 0o644)).To(Succeed())

		sub := withStatus(BuildSubscription(SubscriptionOptions{Namespace: "ns", Package: "pkg", Labels: managed}),
			map[string]any{"installedCSV": "pkg.v1", "currentCSV": "pkg.v1"})
		gone := []client.Object{
			sub, NewCSV("ns", "pkg.v1"), NewCSV("ns", "pkg.v0"), plan("install-pkg", "pkg.v1"),
			BuildOperatorGroup("ns", "pkg", []string{"ns"}, managed),
			BuildCatalogSource("ns", "pkg-catalog", "127.0.0.1:1", "pkg", managed),
			&corev1.ConfigMap{ObjectMeta: objMeta("pkg-catalog", managed)},
			&appsv1.Deployment{ObjectMeta: objMeta("pkg-catalog", managed)},
		}
		kept := []client.Object{
			NewCSV("ns", "other.v1"), copied, plan("install-other", "other.v1"),
			BuildOperatorGroup("ns", "theirs", nil, nil),
			&corev1.Service{ObjectMeta: objMeta("pkg-catalog", nil)},
		}
		c := fakeCluster(true, append(append([]client.Object{}, gone...), kept...)...)
		var log bytes.Buffer
		Expect(CleanupBundle(ctx, c, CleanupOptions{Namespace: "ns", StateDir: stateDir, Log: &log})).To(Succeed())

		for _, obj := range gone {
			Expect(isGone(ctx, c, obj)).To(BeTrue(), "%s %s is left", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName())
		}
		for _, obj := range kept {
			Expect(c.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed(), "%s was deleted", obj.GetName())
		}
		Eventually(server.Done()).Should(BeClosed())
		Expect(dir).NotTo(BeAnExistingFile())
		Expect(log.String()).To(ContainSubstring("Removed pkg from namespace ns"))

		// Without the state, the bundle directory names the package; nothing is left to do.
		bundleDir := writeBundle("annotations:\n  operators.operatorframework.io.bundle.package.v1: pkg\n  operators.operatorframework.io.bundle.channels.v1: fast\n", testCSV)
		Expect(CleanupBundle(ctx, c, CleanupOptions{Namespace: "ns", StateDir: stateDir, BundleDir: bundleDir})).To(Succeed())
		for _, obj := range kept {
			Expect(c.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed(), "%s was deleted", obj.GetName())
		}
	})
})
