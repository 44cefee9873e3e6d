//go:build linux && node

package nodee2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed1b407122/database-operator/test/harness/olm"
	"github.com/seed1b407122/database-operator/test/harness/realnode"
)

// The operator as OLM installs it from catalog/: an AllNamespaces install into a namespace
// that enforces the restricted Pod Security profile, the released 0.3.0 first (its bundle as
// released, its image by the digest its CSV names, holding the manager built from its release
// commit; Manual approval, so that a spec decides when 0.4.0, today's code, comes).
const (
	olmNamespace      = "olm"
	operatorNamespace = "database-operator"
	operatorGroupName = "database-operator"
	catalogSourceName = "database-operator-catalog"
	packageName       = "database-operator"
	// releasedChannel is the channel 0.2.0 was released in, as its subscribers name it: deprecated
	// in the catalog (the default is candidate-v0) and still upgraded along; 0.3.0 was released
	// in it too, so its subscribers there upgrade to 0.4.0 along it.
	releasedChannel   = "stable"
	deprecationNotice = "The stable channel of database-operator is deprecated: releases are published in the candidate-v0 channel"
	csvPrevious       = "database-operator.v0.3.0"
	csvCurrent        = "database-operator.v0.4.0"
	// releasedBundleDir is the released bundle of csvPrevious, as released (the Makefile's
	// PREVIOUS_BUNDLE_DIR).
	releasedBundleDir = "../../hack/olm/released/0.3.0"
	operatorReplicas  = 2
	managerContainer  = "manager"
	leaseName         = "database-operator.seed1b407122.io"
	metricsService    = "database-operator-controller-manager-metrics-service"
	// operatorDeployment is the bundle's Deployment; the operator's ServiceMonitor and
	// PrometheusRule (config/prometheus) are controlled by it.
	operatorDeployment     = "database-operator-controller-manager"
	operatorServiceMonitor = "database-operator-controller-manager-metrics-monitor"
	operatorPrometheusRule = "database-operator"
	metricsReaderRole      = "database-operator-metrics-reader"
	operatorUser           = "65532 65532 65532 65532"
	olmWaitTimeout         = 4 * time.Minute
)

// operatorImage is the operator image of 0.4.0 as its CSV names it, by digest
// (OPERATOR_IMAGE's digest in the node's registry); operatorImagePrev is the one the released
// 0.3.0's CSV names, by digest: the node's registry serves it only if the image rebuilt from
// 0.3.0's release commit has exactly that digest (hack/node/build-images.sh).
var operatorImage, operatorImagePrev string

// deployOLM runs OLM as a cluster runs it: OLM's image (OLM_IMAGE, built from the module and
// pulled from the node's registry by digest) in Deployments on the node, with in-cluster
// credentials. Its catalog operator dials the registry pods of catalog sources by their
// Service names through CoreDNS and unpacks bundle images with Jobs on the node (its util
// image, the same OLM image, and opm's image, both by digest).
func deployOLM(ctx context.Context) *olm.Deployed {
	GinkgoHelper()
	Expect(node.Registry).NotTo(BeNil(), "the real-node tier needs the node's registry (make node-images writes registry.txt)")
	began := time.Now()
	image := registryImage("OLM_IMAGE")
	deployed, err := olm.DeployOLM(ctx, k8s, olm.DeployOptions{
		CRDDir: filepath.Join(requireEnv("OLM_BIN_DIR"), "crds"), Namespace: olmNamespace, Image: image,
		DisableCopiedCSVs: true,
		CatalogArgs:       []string{"--util-image", image, "--opmImage", registryImage("OPM_IMAGE")},
	})
	if err != nil && deployed != nil {
		saveOLMLogs(ctx, deployed)
	}
	Expect(err).NotTo(HaveOccurred())
	report("OLM deployed (olm-operator and catalog-operator pods available on the node)", time.Since(began))
	expectPulled(ctx, olmNamespace, image)
	return deployed
}

// saveOLMLogs writes the logs of OLM's controllers into the node's work directory, next to the
// logs of the host processes (the node removes its pods' logs when it stops).
func saveOLMLogs(ctx context.Context, deployed *olm.Deployed) {
	if err := deployed.SaveLogs(ctx, clientset, node.WorkDir); err != nil {
		GinkgoWriter.Printf("saving OLM's logs: %v\n", err)
	}
}

// addCatalogSource creates the CatalogSource of the catalog image (CATALOG_IMAGE, by digest):
// OLM runs it in a registry pod on the node, pulled from the node's registry.
func addCatalogSource(ctx context.Context) {
	GinkgoHelper()
	guarded, cancel := whileOLMRuns(ctx, operatorLM)
	defer cancel()
	catalogImage := registryImage("CATALOG_IMAGE")
	catalogCreated = time.Now()
	Expect(olm.CreateCatalogSource(guarded, k8s, olm.BuildImageCatalogSource(olmNamespace, catalogSourceName,
		catalogImage, "database-operator (catalog image)", "", nil))).To(Succeed())
	report("CatalogSource of the catalog image created -> READY (registry pod pulled by digest and serving)", time.Since(catalogCreated))
	expectPulled(ctx, olmNamespace, catalogImage)
}

// registryImage returns the reference by digest of the image the environment variable env
// names by tag (make test-node sets them), as the node's registry serves it.
func registryImage(env string) string {
	GinkgoHelper()
	ref, err := node.Registry.Digest(requireEnv(env))
	Expect(err).NotTo(HaveOccurred())
	return ref
}

// whileOLMRuns bounds a wait on OLM: olmWaitTimeout, and an end as soon as one of OLM's
// controllers exits (the wait then fails saying how it exited instead of timing out).
func whileOLMRuns(ctx context.Context, deployed *olm.Deployed) (context.Context, context.CancelFunc) {
	return deployed.Within(ctx, olmWaitTimeout)
}

// installOperator subscribes operatorNamespace to the released 0.3.0 of the package, approves its
// InstallPlan and waits until the CSV has Succeeded: OLM says so once the operator's
// Deployment is available, that is, its pods passed their readiness probes on the node.
func installOperator(ctx context.Context) {
	GinkgoHelper()
	ns := &corev1.Namespace{}
	ns.Name = operatorNamespace
	ns.Labels = restrictedLabels()
	Expect(k8s.Create(ctx, ns)).To(Succeed())
	// No target namespaces: AllNamespaces, the DatabaseClusters of every spec's namespace.
	group, created, err := olm.EnsureOperatorGroup(ctx, k8s, operatorNamespace, operatorGroupName, nil, nil)
	Expect(err).NotTo(HaveOccurred())
	Expect(created).To(BeTrue())
	Expect(group).To(Equal(operatorGroupName))
	_, err = olm.Subscribe(ctx, k8s, olm.SubscriptionOptions{
		Namespace: operatorNamespace, Package: packageName, Channel: releasedChannel,
		CatalogSource: catalogSourceName, CatalogSourceNamespace: olmNamespace,
		StartingCSV: csvPrevious, Approval: olm.ApprovalManual,
		// As a user of the catalog changes a manager setting: the auto-grow story waits for
		// measurements every measureInterval, not once a minute (0.3.0 ignores the variable).
		Env: []corev1.EnvVar{{Name: measureIntervalEnv, Value: measureInterval.String()}},
	})
	Expect(err).NotTo(HaveOccurred())
	approveAndWait(ctx, csvPrevious)
	expectChannelDeprecated(ctx)
}

// expectChannelDeprecated waits until OLM tells the operator's Subscription (on releasedChannel)
// that its channel is deprecated and where to go, as the grpc catalog image's olm.deprecations
// says.
func expectChannelDeprecated(ctx context.Context) {
	GinkgoHelper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	message, err := olm.WaitSubscriptionCondition(ctx, k8s, operatorNamespace, packageName, "ChannelDeprecated")
	Expect(err).NotTo(HaveOccurred())
	Expect(message).To(HavePrefix("olm.channel/" + releasedChannel + ": " + deprecationNotice))
}

// approveAndWait approves the InstallPlan that installs csvName and waits for the CSV to
// succeed.
func approveAndWait(ctx context.Context, csvName string) *unstructured.Unstructured {
	GinkgoHelper()
	guarded, cancel := whileOLMRuns(ctx, operatorLM)
	defer cancel()
	_, err := olm.ApproveInstallPlan(guarded, k8s, operatorNamespace, csvName)
	Expect(err).NotTo(HaveOccurred())
	csv, err := olm.WaitForCSV(guarded, k8s, operatorNamespace, csvName)
	Expect(err).NotTo(HaveOccurred())
	phase, _, _ := unstructured.NestedString(csv.Object, "status", "phase")
	Expect(phase).To(Equal("Succeeded"))
	return csv
}

// expectCSVGone waits until OLM has removed a replaced CSV.
func expectCSVGone(ctx context.Context, name string) {
	GinkgoHelper()
	Eventually(func() error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: name}, olm.NewCSV(operatorNamespace, name))
	}).WithContext(ctx).Should(Satisfy(apierrors.IsNotFound), "the replaced CSV %s was not removed", name)
}

// operatorPods returns the operator's pods that are not being deleted.
func operatorPods(ctx context.Context) []corev1.Pod {
	GinkgoHelper()
	return operatorPodsIn(ctx, operatorNamespace)
}

// operatorPodsIn returns the operator's pods in namespace that are not being deleted.
func operatorPodsIn(ctx context.Context, namespace string) []corev1.Pod {
	GinkgoHelper()
	var pods corev1.PodList
	Expect(k8s.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabels{
		"app.kubernetes.io/name": "database-operator", "app.kubernetes.io/component": "manager",
	})).To(Succeed())
	var live []corev1.Pod
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			live = append(live, p)
		}
	}
	return live
}

// waitOperatorPods waits until exactly operatorReplicas pods of the operator run image on the
// real node, every one Ready, and returns them.
func waitOperatorPods(ctx context.Context, image string) []corev1.Pod {
	GinkgoHelper()
	var pods []corev1.Pod
	Eventually(func(g Gomega) {
		pods = operatorPods(ctx)
		g.Expect(pods).To(HaveLen(operatorReplicas))
		for _, p := range pods {
			g.Expect(p.Spec.NodeName).To(Equal(realnode.NodeName))
			g.Expect(p.Spec.Containers[0].Image).To(Equal(image), "pod %s", p.Name)
			g.Expect(isReady(&p)).To(BeTrue(), "pod %s is not Ready", p.Name)
		}
	}).WithContext(ctx).Should(Succeed(), "the operator's pods on %s", image)
	return pods
}

// managerStatus returns the status of the pod's manager container.
func managerStatus(p *corev1.Pod) corev1.ContainerStatus {
	GinkgoHelper()
	i := slices.IndexFunc(p.Status.ContainerStatuses, func(s corev1.ContainerStatus) bool { return s.Name == managerContainer })
	Expect(i).To(BeNumerically(">=", 0), "pod %s has no status of container %s", p.Name, managerContainer)
	return p.Status.ContainerStatuses[i]
}

// managerPID returns the host PID of the manager process in pod p.
func managerPID(ctx context.Context, p *corev1.Pod) int {
	GinkgoHelper()
	pid, err := node.ContainerPID(ctx, managerStatus(p).ContainerID)
	Expect(err).NotTo(HaveOccurred())
	return pid
}

// leaseHolder returns the leader Lease's holder identity ("<pod name>_<uuid>") and the pod
// name in it.
func leaseHolder(ctx context.Context) (identity, pod string) {
	GinkgoHelper()
	var lease coordinationv1.Lease
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: leaseName}, &lease)).To(Succeed())
	if lease.Spec.HolderIdentity == nil {
		return "", ""
	}
	identity = *lease.Spec.HolderIdentity
	pod, _, _ = strings.Cut(identity, "_")
	return identity, pod
}

// waitLeaderAmong waits until the Lease is held by one of pods and returns that pod's name.
func waitLeaderAmong(ctx context.Context, pods []corev1.Pod) string {
	GinkgoHelper()
	var holder string
	Eventually(func(g Gomega) {
		_, holder = leaseHolder(ctx)
		g.Expect(slices.ContainsFunc(pods, func(p corev1.Pod) bool { return p.Name == holder })).To(BeTrue(),
			"Lease %s/%s is held by %q", operatorNamespace, leaseName, holder)
	}).WithContext(ctx).Should(Succeed())
	return holder
}

// After a failed spec, the operator's own account: the last lines of each manager's log, read
// through the API server from the kubelet as "kubectl logs" does.
var _ = ReportAfterEach(func(ctx SpecContext, report SpecReport) {
	if !report.Failed() || clientset == nil {
		return
	}
	pods, err := clientset.CoreV1().Pods(operatorNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=manager"})
	if err != nil {
		GinkgoWriter.Printf("listing the operator's pods: %v\n", err)
		return
	}
	for _, p := range pods.Items {
		log, err := clientset.CoreV1().Pods(operatorNamespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: managerContainer, TailLines: ptr.To[int64](40)}).DoRaw(ctx)
		GinkgoWriter.Printf("--- log of %s/%s (%v):\n%s\n", operatorNamespace, p.Name, err, log)
	}
}, NodeTimeout(30*time.Second))

// expectPulled checks that every container of namespace's pods that names ref (an image by
// digest) runs that image as the kubelet reports it (status imageID), and prints each.
func expectPulled(ctx context.Context, namespace, ref string) {
	GinkgoHelper()
	var pods corev1.PodList
	Expect(k8s.List(ctx, &pods, client.InNamespace(namespace))).To(Succeed())
	found := 0
	for _, p := range pods.Items {
		statuses := append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...)
		for _, c := range append(slices.Clone(p.Spec.InitContainers), p.Spec.Containers...) {
			if c.Image != ref {
				continue
			}
			found++
			i := slices.IndexFunc(statuses, func(st corev1.ContainerStatus) bool { return st.Name == c.Name })
			Expect(i).NotTo(Equal(-1), "pod %s container %s has no status", p.Name, c.Name)
			Expect(statuses[i].ImageID).To(Equal(ref), "pod %s container %s (status image %s)", p.Name, c.Name, statuses[i].Image)
			fmt.Fprintf(os.Stderr, "PULLED %s (pod %s/%s, container %s)\n", statuses[i].ImageID, namespace, p.Name, c.Name)
		}
	}
	Expect(found).NotTo(BeZero(), "no container of %s names %s", namespace, ref)
}

// expectUnpacked waits until OLM's bundle unpack Job in namespace (the CatalogSource's) for the
// bundle image tagged env (by its digest) has completed, reports how long it ran, and checks the
// images its pod pulled: the bundle, OLM's util image and the opm image, each by digest.
func expectUnpacked(ctx context.Context, namespace, env string) {
	GinkgoHelper()
	bundle := registryImage(env)
	var job batchv1.Job
	Eventually(func(g Gomega) {
		var jobs batchv1.JobList
		g.Expect(k8s.List(ctx, &jobs, client.InNamespace(namespace))).To(Succeed())
		i := slices.IndexFunc(jobs.Items, func(j batchv1.Job) bool {
			return slices.ContainsFunc(j.Spec.Template.Spec.InitContainers, func(c corev1.Container) bool { return c.Image == bundle })
		})
		g.Expect(i).NotTo(Equal(-1), "no unpack Job for %s yet", bundle)
		job = jobs.Items[i]
		g.Expect(job.Status.Succeeded).To(BeNumerically(">=", 1), "Job %s has not succeeded", job.Name)
		g.Expect(job.Status.StartTime).NotTo(BeNil())
		g.Expect(job.Status.CompletionTime).NotTo(BeNil())
	}).WithContext(ctx).WithTimeout(olmWaitTimeout).Should(Succeed())
	report("bundle image "+requireEnv(env)+" unpacked by OLM's Job in "+namespace+" (start -> complete)", job.Status.CompletionTime.Sub(job.Status.StartTime.Time))
	for _, img := range []string{bundle, registryImage("OLM_IMAGE"), registryImage("OPM_IMAGE")} {
		expectPulled(ctx, namespace, img)
	}
}
