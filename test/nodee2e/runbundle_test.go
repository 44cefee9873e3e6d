//go:build linux && node

package nodee2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed1b407122/database-operator/hack/runbundle"
	"github.com/seed1b407122/database-operator/test/harness/olm"
)

// runBundleNamespace is where run-bundle installs the operator from its bundle image.
const runBundleNamespace = "run-bundle"

// runBundleStory: run-bundle's code (what make run-bundle BUNDLE_IMG=... runs) installs 0.4.0
// from its bundle image, as "operator-sdk run bundle IMAGE" does: this machine unpacks and renders
// the image (through the node's registry), the one-bundle catalog is served in the cluster (a
// Deployment of the opm image), OLM unpacks the bundle image in a Job on the kubelet, and the
// operator's pods run from the CSV's digest. The catalog install of the other stories is
// removed first: its AllNamespaces OperatorGroup provides the same APIs to every namespace,
// which OLM would refuse to share.
func runBundleStory() {
	var stateDir string

	BeforeAll(func() { stateDir = GinkgoT().TempDir() })

	AfterEach(func(ctx SpecContext) {
		if CurrentSpecReport().Failed() {
			describeRunBundle(ctx)
		}
	}, NodeTimeout(30*time.Second))

	It("installs 0.4.0 from its bundle image, by digest: OLM unpacks it, its pods run from the CSV's digest", func(ctx SpecContext) {
		Expect(olm.Uninstall(ctx, k8s, olm.UninstallOptions{
			Namespace: operatorNamespace, Package: packageName, OperatorGroups: []string{operatorGroupName},
		})).To(Succeed())
		bundleImage := registryImage("BUNDLE_IMAGE")
		began := time.Now()
		guarded, cancel := whileOLMRuns(ctx, operatorLM)
		defer cancel()
		inst, err := runbundle.Run(guarded, k8s, runbundle.Options{
			BundleImage: bundleImage, Mirror: olm.ImageMirror{Public: node.Registry.Hosts[0], Pull: node.Registry.Addr},
			Namespace: runBundleNamespace, CatalogMode: runbundle.CatalogModeCluster,
			OPM: requireEnv("OPM"), OPMImage: registryImage("OPM_IMAGE"), StateDir: stateDir, Log: GinkgoWriter,
		})
		Expect(err).NotTo(HaveOccurred())
		report("run-bundle of the bundle image (unpack, render, catalog pod READY, unpack Job, CSV 0.4.0 Succeeded)", time.Since(began))
		Expect(inst.CSV.GetName()).To(Equal(csvCurrent))
		Expect(csvImage(inst.CSV)).To(Equal(operatorImage))

		// The catalog names the image, so OLM unpacked it in the CatalogSource's namespace.
		expectUnpacked(ctx, runBundleNamespace, "BUNDLE_IMAGE")
		name := runbundle.CatalogSourceName(packageName)
		cs := olm.NewCatalogSource(runBundleNamespace, name)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(cs), cs)).To(Succeed())
		address, _, _ := unstructured.NestedString(cs.Object, "spec", "address")
		Expect(address).To(Equal(name + "." + runBundleNamespace + ".svc:50051"))
		expectPulled(ctx, runBundleNamespace, registryImage("OPM_IMAGE"))
		Eventually(func(g Gomega) {
			pods := operatorPodsIn(ctx, runBundleNamespace)
			g.Expect(pods).To(HaveLen(operatorReplicas))
			for _, p := range pods {
				g.Expect(p.Spec.Containers[0].Image).To(Equal(operatorImage))
				g.Expect(isReady(&p)).To(BeTrue(), "pod %s is not Ready", p.Name)
			}
		}).WithContext(ctx).Should(Succeed())
		expectPulled(ctx, runBundleNamespace, operatorImage)
	}, NodeTimeout(6*time.Minute))

	It("cleanup-bundle removes the Subscription, the CSV with its Deployment, the CatalogSource and its catalog server", func(ctx SpecContext) {
		Expect(runbundle.Cleanup(ctx, k8s, runbundle.CleanupOptions{Namespace: runBundleNamespace, StateDir: stateDir})).To(Succeed())
		for _, obj := range []client.Object{
			olm.NewSubscription(runBundleNamespace, packageName),
			olm.NewCSV(runBundleNamespace, csvCurrent),
			olm.NewCatalogSource(runBundleNamespace, runbundle.CatalogSourceName(packageName)),
			namedDeployment(runBundleNamespace, runbundle.CatalogSourceName(packageName)),
			namedDeployment(runBundleNamespace, operatorDeployment),
		} {
			Eventually(func() error { return k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj) }).WithContext(ctx).
				Should(Satisfy(apierrors.IsNotFound), "%T %s", obj, obj.GetName())
		}
		Expect(filepath.Join(stateDir, runBundleNamespace)).NotTo(BeADirectory())
	}, NodeTimeout(3*time.Minute))
}

func namedDeployment(namespace, name string) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	d.Namespace, d.Name = namespace, name
	return d
}

// describeRunBundle prints what a failed run-bundle spec needs to be understood: the
// CatalogSource's status, the pods of the namespace, and what OLM's catalog operator logged
// about the namespace.
func describeRunBundle(ctx context.Context) {
	cs := olm.NewCatalogSource(runBundleNamespace, runbundle.CatalogSourceName(packageName))
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(cs), cs); err == nil {
		status, _, _ := unstructured.NestedMap(cs.Object, "status")
		GinkgoWriter.Printf("--- CatalogSource %s/%s status: %v\n", cs.GetNamespace(), cs.GetName(), status)
	}
	var pods corev1.PodList
	if err := k8s.List(ctx, &pods, client.InNamespace(runBundleNamespace)); err == nil {
		for _, p := range pods.Items {
			GinkgoWriter.Printf("--- pod %s: phase %s, conditions %+v, containers %+v\n", p.Name, p.Status.Phase, p.Status.Conditions, p.Status.ContainerStatuses)
		}
	}
	saveOLMLogs(ctx, operatorLM)
	data, err := os.ReadFile(filepath.Join(node.WorkDir, olm.CatalogOperatorName+".log"))
	if err != nil {
		GinkgoWriter.Printf("--- the catalog operator's log: %v\n", err)
		return
	}
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, runBundleNamespace) {
			lines = append(lines, l)
		}
	}
	GinkgoWriter.Printf("--- the catalog operator's log, the last lines about %s:\n%s\n", runBundleNamespace, strings.Join(lines[max(0, len(lines)-60):], "\n"))
}
