//go:build linux && node

package nodee2e

import (
	"context"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/test/harness/olm"
)

// databaseClustersCRD is the CRD of DatabaseClusters, whichever version of the bundle installed it.
const databaseClustersCRD = "databaseclusters.database.seed1b407122.io"

// fieldsOfReleased are spec fields the released version's DatabaseCluster has; fieldsAdded are
// those the upgrade adds (0.4.0: configuration, credentials, TLS, pod extensions, exposure,
// Auto Pilot), each empty in a cluster created through the released API.
var (
	fieldsOfReleased = []string{"securityContext", "command", "hibernated", "bootstrap", "monitoring"}
	fieldsAdded      = []string{"config", "credentials", "tls", "service", "sidecars", "initContainers", "volumes",
		"topologySpreadConstraints", "startupProbe", "autoHeal", "rollout", "minReplicas"}
)

// upgradeStory, one ordered story: the released operator 0.3.0 (its bundle as released, its
// image pulled by the digest its CSV names, the manager built from its release commit) runs a
// 3-member etcd created through 0.3.0's API (its bundle's own example); OLM upgrades the operator
// to 0.4.0 (today's code and CRDs); no member is replaced or restarted, the StatefulSet's spec
// and revisions do not change (0.4.0's defaults, e.g. the topology spread and the template hash,
// must not roll a StatefulSet 0.3.0 wrote), every key is still there; 0.4.0 then owns the old
// cluster to its deletion.
func upgradeStory() {
	var (
		dc *databasev1alpha1.DatabaseCluster
		db *etcdClient
	)

	It("runs the released operator 0.3.0 in pods: restricted, pulled by its CSV's digest, probes passing, one leader, 0.3.0's API served", func(ctx SpecContext) {
		expectRestrictedEnforced(ctx, operatorNamespace)
		pods := waitOperatorPods(ctx, operatorImagePrev)
		expectPulled(ctx, operatorNamespace, operatorImagePrev)
		for i := range pods {
			status := managerStatus(&pods[i])
			Expect(status.RestartCount).To(BeZero(), "pod %s restarted", pods[i].Name)
		}
		expectProbesPass(ctx, pods)
		waitLeaderAmong(ctx, pods)
		fields := specFields(ctx)
		Expect(fields).To(ContainElements(fieldsOfReleased), "0.3.0's CRD")
		for _, f := range fieldsAdded {
			Expect(fields).NotTo(ContainElement(f), "0.3.0's CRD has no spec.%s", f)
		}
	}, NodeTimeout(3*time.Minute))

	It("runs a 3-member etcd created through 0.3.0's API, its bundle's own example, and keeps its keys", func(ctx SpecContext) {
		ns := newNamespace(ctx, "upgrade")
		example := releasedExample("DatabaseCluster", "etcd-sample", ns)
		began := time.Now()
		Expect(k8s.Create(ctx, example)).To(Succeed())
		dc = &databasev1alpha1.DatabaseCluster{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(example), dc)).To(Succeed())
		report("etcd under the released operator 0.3.0: create -> Available (3 members, real node)", waitAvailable(ctx, dc, began))
		Expect(dc.Status.Selector).To(BeEmpty(), "0.3.0 has no status.selector")
		db = &etcdClient{dc: dc.DeepCopy()}
		Eventually(func(g Gomega) { g.Expect(db.put(ctx, "probe", "1")).To(Succeed()) }).WithContext(ctx).Should(Succeed())
		for i := range etcdKeys {
			Expect(db.put(ctx, etcdKey(i), etcdValue(i))).To(Succeed())
		}
		db.expectAll(ctx)
	}, NodeTimeout(6*time.Minute))

	It("keeps every key through the operator's upgrade 0.3.0 -> 0.4.0 through OLM, without restarting a member", func(ctx SpecContext) {
		before := statefulSet(ctx, Default, dc)
		Expect(before.Status.CurrentRevision).To(Equal(before.Status.UpdateRevision), "a roll before the upgrade")
		members := podsOf(ctx, dc)
		Expect(members).To(HaveLen(etcdMembers))
		old := waitOperatorPods(ctx, operatorImagePrev)
		began := time.Now()
		db.duringChange(ctx, func() {
			csv := approveAndWait(ctx, csvCurrent)
			// What this suite proves is what the CSV claims: level II (this upgrade), level III,
			// Full Lifecycle (backupStory: backup and restore of real data; etcdStory: a lost
			// member and a killed leader recovered, storage grown, hibernation), level IV, Deep
			// Insights (monitoringStory: this install's own ServiceMonitor and PrometheusRule,
			// a real Prometheus scraping the operator and the members, an alert fired and resolved)
			// and level V, Auto Pilot (etcdStory's stuck rollouts healed, autoGrowStory's volume
			// grown before it fills; test/e2e: autoscaling and lost members).
			Expect(csv.GetAnnotations()).To(HaveKeyWithValue("capabilities", "Auto Pilot"))
			replaces, _, _ := unstructured.NestedString(csv.Object, "spec", "replaces")
			Expect(replaces).To(Equal(csvPrevious))
			expectCSVGone(ctx, csvPrevious)
			Expect(csvImage(csv)).To(Equal(operatorImage), "0.4.0's CSV names the operator by the digest this tree builds")
			pods := waitOperatorPods(ctx, operatorImage)
			expectPulled(ctx, operatorNamespace, operatorImage)
			for _, p := range pods {
				Expect(slices.ContainsFunc(old, func(o corev1.Pod) bool { return o.UID == p.UID })).To(BeFalse(), "pod %s of 0.3.0 kept", p.Name)
			}
			waitLeaderAmong(ctx, pods)
		})
		report("operator upgrade 0.3.0 (released) -> 0.4.0 through OLM (approval -> 0.4.0 pods Ready and leading)", time.Since(began))
		Expect(specFields(ctx)).To(ContainElements(fieldsAdded), "0.4.0's CRD")

		// 0.4.0 has reconciled the cluster: its status carries the scale subresource's selector,
		// which 0.3.0 did not write, in the status write that follows the StatefulSet's phase.
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
			g.Expect(dc.Status.Selector).NotTo(BeEmpty())
		}).WithContext(ctx).Should(Succeed())
		waitAvailable(ctx, dc, began)
		expectUpgradeRolledNothing(ctx, dc, before, members)
		db.expectAll(ctx)
		reportCount("etcd keys read back after the operator's upgrade 0.3.0 -> 0.4.0", etcdKeys)
		reportCount("etcd members restarted or replaced by the operator's upgrade 0.3.0 -> 0.4.0", 0)
	}, NodeTimeout(8*time.Minute))

	It("deletes the cluster created under 0.3.0 with 0.4.0 and keeps its claims (whenDeleted Retain)", func(ctx SpecContext) {
		claims := claimUIDs(ctx, dc)
		Expect(claims).To(HaveLen(etcdMembers))
		Expect(k8s.Delete(ctx, dc)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).NotTo(Succeed())
			g.Expect(podsOf(ctx, dc)).To(BeEmpty())
		}).WithContext(ctx).Should(Succeed())
		Expect(claimUIDs(ctx, dc)).To(Equal(claims))
	}, NodeTimeout(3*time.Minute))
}

// upgradeSettle is how long the StatefulSet must stay as it was after the new operator has
// reconciled the cluster: a roll would show within one reconcile, well inside it.
const upgradeSettle = 15 * time.Second

// expectUpgradeRolledNothing: the StatefulSet keeps its UID, generation, pod template and
// revisions for upgradeSettle, and every member its pod UID and restart count.
func expectUpgradeRolledNothing(ctx context.Context, dc *databasev1alpha1.DatabaseCluster,
	before *appsv1.StatefulSet, members map[string]corev1.Pod,
) {
	GinkgoHelper()
	Consistently(func(g Gomega) {
		after := statefulSet(ctx, g, dc)
		g.Expect(after.UID).To(Equal(before.UID))
		g.Expect(after.Generation).To(Equal(before.Generation), "the upgrade changed the StatefulSet's spec")
		g.Expect(after.Spec.Template).To(Equal(before.Spec.Template), "the upgrade changed the pod template")
		g.Expect(after.Status.UpdateRevision).To(Equal(before.Status.UpdateRevision))
		g.Expect(after.Status.CurrentRevision).To(Equal(before.Status.CurrentRevision))
	}).WithContext(ctx).WithTimeout(upgradeSettle).WithPolling(time.Second).Should(Succeed())
	for name, p := range podsOf(ctx, dc) {
		Expect(p.UID).To(Equal(members[name].UID), "member %s was replaced by the upgrade", name)
		Expect(p.Status.ContainerStatuses[0].RestartCount).To(Equal(members[name].Status.ContainerStatuses[0].RestartCount),
			"member %s was restarted by the upgrade", name)
	}
}

// releasedCSV reads the ClusterServiceVersion of the released bundle (releasedBundleDir).
func releasedCSV() *unstructured.Unstructured {
	GinkgoHelper()
	csv, err := olm.ReadCSV(releasedBundleDir)
	Expect(err).NotTo(HaveOccurred())
	Expect(csv.GetName()).To(Equal(csvPrevious))
	return csv
}

// releasedExample returns the released CSV's alm-examples object of kind and name, in namespace:
// what a user of the released version applied, with exactly the fields its API had.
func releasedExample(kind, name, namespace string) *unstructured.Unstructured {
	GinkgoHelper()
	example, err := olm.Example(releasedCSV(), kind, name)
	Expect(err).NotTo(HaveOccurred())
	example.SetNamespace(namespace)
	return example
}

// specFields lists the properties of the served DatabaseCluster schema's spec.
func specFields(ctx context.Context) []string {
	GinkgoHelper()
	var crd apiextensionsv1.CustomResourceDefinition
	Expect(k8s.Get(ctx, client.ObjectKey{Name: databaseClustersCRD}, &crd)).To(Succeed())
	var fields []string
	for _, v := range crd.Spec.Versions {
		if v.Served && v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			for name := range v.Schema.OpenAPIV3Schema.Properties["spec"].Properties {
				fields = append(fields, name)
			}
		}
	}
	return fields
}

// csvImage returns the image of the first container of the CSV's first Deployment.
func csvImage(csv *unstructured.Unstructured) string {
	GinkgoHelper()
	deployments, _, err := unstructured.NestedSlice(csv.Object, "spec", "install", "spec", "deployments")
	Expect(err).NotTo(HaveOccurred())
	Expect(deployments).NotTo(BeEmpty())
	containers, _, err := unstructured.NestedSlice(deployments[0].(map[string]any), "spec", "template", "spec", "containers")
	Expect(err).NotTo(HaveOccurred())
	Expect(containers).NotTo(BeEmpty())
	return containers[0].(map[string]any)["image"].(string)
}
