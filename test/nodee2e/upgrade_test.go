//go:build linux && node

package nodee2e

import (
	"context"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// databaseClustersCRD is the CRD of DatabaseClusters, whichever version of the bundle installed it.
const databaseClustersCRD = "databaseclusters.database.seed1b407122.io"

// upgradeStory, one ordered story: the released operator 0.2.0 (its bundle as released, its
// manager built from its release commit) runs a 3-member etcd created through 0.2.0's API; OLM
// upgrades the operator to 0.3.0 (today's code and CRDs); the database is not restarted and
// every key is still there; 0.3.0 then owns the old cluster to its deletion.
func upgradeStory() {
	var (
		dc *databasev1alpha1.DatabaseCluster
		db *etcdClient
	)

	It("runs the released operator 0.2.0 in pods: restricted, probes passing, one leader, 0.2.0's API served", func(ctx SpecContext) {
		expectRestrictedEnforced(ctx, operatorNamespace)
		pods := waitOperatorPods(ctx, operatorImagePrev)
		for i := range pods {
			status := managerStatus(&pods[i])
			Expect(status.RestartCount).To(BeZero(), "pod %s restarted", pods[i].Name)
		}
		expectProbesPass(ctx, pods)
		waitLeaderAmong(ctx, pods)
		// 0.2.0's DatabaseCluster schema: none of the fields 0.3.0 added.
		Expect(specFields(ctx)).NotTo(ContainElements("securityContext", "command", "hibernated", "bootstrap", "monitoring"))
	}, NodeTimeout(3*time.Minute))

	It("runs a 3-member etcd created through 0.2.0's API and keeps its keys", func(ctx SpecContext) {
		ns := newNamespace(ctx, "upgrade")
		dc = releasedEtcd(ns)
		began := time.Now()
		Expect(k8s.Create(ctx, dc)).To(Succeed())
		report("etcd under the released operator 0.2.0: create -> Available (3 members, real node)", waitAvailable(ctx, dc, began))
		db = &etcdClient{dc: dc}
		Eventually(func(g Gomega) { g.Expect(db.put(ctx, "probe", "1")).To(Succeed()) }).WithContext(ctx).Should(Succeed())
		for i := range etcdKeys {
			Expect(db.put(ctx, etcdKey(i), etcdValue(i))).To(Succeed())
		}
		db.expectAll(ctx)
	}, NodeTimeout(6*time.Minute))

	It("keeps every key through the operator's upgrade 0.2.0 -> 0.3.0 through OLM, without restarting a member", func(ctx SpecContext) {
		before := statefulSet(ctx, Default, dc)
		members := podsOf(ctx, dc)
		Expect(members).To(HaveLen(etcdMembers))
		old := waitOperatorPods(ctx, operatorImagePrev)
		began := time.Now()
		db.duringChange(ctx, func() {
			csv := approveAndWait(ctx, csvCurrent)
			// What this suite proves is what the CSV claims: level II (this upgrade), level III,
			// Full Lifecycle (backupStory: backup and restore of real data; etcdStory: a lost
			// member and a killed leader recovered, storage grown, hibernation) and level IV, Deep
			// Insights (monitoringStory: this install's own ServiceMonitor and PrometheusRule,
			// a real Prometheus scraping the operator and the members, an alert fired and resolved).
			Expect(csv.GetAnnotations()).To(HaveKeyWithValue("capabilities", "Deep Insights"))
			expectCSVGone(ctx, csvPrevious)
			Expect(csvImage(csv)).To(Equal(operatorImage), "0.3.0's CSV names the operator by the digest this tree builds")
			pods := waitOperatorPods(ctx, operatorImage)
			expectPulled(ctx, operatorNamespace, operatorImage)
			for _, p := range pods {
				Expect(slices.ContainsFunc(old, func(o corev1.Pod) bool { return o.UID == p.UID })).To(BeFalse(), "pod %s of 0.2.0 kept", p.Name)
			}
			waitLeaderAmong(ctx, pods)
		})
		report("operator upgrade 0.2.0 (released) -> 0.3.0 through OLM (approval -> 0.3.0 pods Ready and leading)", time.Since(began))
		Expect(specFields(ctx)).To(ContainElements("securityContext", "command", "hibernated", "bootstrap", "monitoring"), "0.3.0's CRD")

		// 0.3.0 has reconciled the cluster: its status carries a condition 0.2.0 did not know.
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
			hibernated := apimeta.FindStatusCondition(dc.Status.Conditions, databasev1alpha1.ConditionHibernated)
			g.Expect(hibernated).NotTo(BeNil())
			g.Expect(hibernated.Reason).To(Equal(databasev1alpha1.ReasonNotHibernated))
		}).WithContext(ctx).Should(Succeed())
		waitAvailable(ctx, dc, began)
		after := statefulSet(ctx, Default, dc)
		Expect(after.UID).To(Equal(before.UID))
		Expect(after.Generation).To(Equal(before.Generation), "the upgrade changed the StatefulSet's spec")
		Expect(after.Spec.Template).To(Equal(before.Spec.Template))
		for name, p := range podsOf(ctx, dc) {
			Expect(p.UID).To(Equal(members[name].UID), "member %s was replaced by the upgrade", name)
			Expect(p.Status.ContainerStatuses[0].RestartCount).To(Equal(members[name].Status.ContainerStatuses[0].RestartCount),
				"member %s was restarted by the upgrade", name)
		}
		db.expectAll(ctx)
		reportCount("etcd keys read back after the operator's upgrade 0.2.0 -> 0.3.0", etcdKeys)
	}, NodeTimeout(8*time.Minute))

	It("deletes the cluster created under 0.2.0 with 0.3.0 and keeps its claims (whenDeleted Retain)", func(ctx SpecContext) {
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

// releasedEtcd is the etcd sample as 0.2.0's API can hold it: without the fields 0.3.0 added
// (securityContext, command), on the etcd image that names its user (65532) and entrypoint.
func releasedEtcd(namespace string) *databasev1alpha1.DatabaseCluster {
	dc := sampleCluster(namespace, etcdSampleFile)
	dc.Spec.SecurityContext = nil
	dc.Spec.Command = nil
	dc.Spec.Image = etcdImageV2
	return dc
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
