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
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/test/harness/manager"
	"github.com/seed1b407122/database-operator/test/harness/olm"
)

// Each case installs the package, checks it, and uninstalls it again in AfterAll (CRDs are
// cluster-scoped: two installs of the same package whose OperatorGroups overlap would fight
// over them), so the cases run in either order.

var _ = Describe("OwnNamespace install of 0.3.0 and upgrade to 0.4.0", Ordered, func() {
	const (
		namespace     = "dbo-own"
		operatorGroup = "dbo-own"
	)
	var (
		subscribed time.Time
		saName     string
		kubeconfig string
		mgr        *manager.Process
		dc         *databasev1alpha1.DatabaseCluster
	)

	BeforeAll(NodeTimeout(time.Minute), func(ctx SpecContext) {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metaName(namespace)})).To(Succeed())
		createOperatorGroup(ctx, namespace, operatorGroup, namespace)
		// Manual approval: the test decides when the upgrade to 0.4.0 happens.
		subscribed = time.Now()
		createSubscription(ctx, namespace, csvPrevious, olm.ApprovalManual)
	})

	AfterAll(NodeTimeout(6*time.Minute), func(_ SpecContext) { cleanupInstall(mgr, dc, namespace, operatorGroup) })

	It("installs the released 0.3.0 from the deprecated channel with the Deployment, ServiceAccount and RBAC of the CSV, and OLM says where to go", NodeTimeout(5*time.Minute), func(ctx SpecContext) {
		approveInstallPlan(ctx, namespace, csvPrevious)
		csv := waitCSVSucceeded(ctx, namespace, csvPrevious)
		AddReportEntry("install 0.3.0 (Subscription -> CSV Succeeded, Manual approval)", since(subscribed))
		expectChannelDeprecated(ctx, namespace)
		expectInstalledObjects(ctx, csv, namespace)
		expectNamespacedRBAC(ctx, csv, "OwnNamespace", namespace)
		saName, _ = operatorNames(csv)
	})

	It("runs the manager as OLM's ServiceAccount: a DatabaseCluster becomes Available", NodeTimeout(5*time.Minute), func(ctx SpecContext) {
		kubeconfig = impersonatingKubeconfig(namespace, saName)
		expectImpersonationEnforced(ctx, kubeconfig)
		mgr = startPreviousManager(ctx, "manager-own-0.3.0", kubeconfig, namespace)

		Expect(specFields(ctx)).NotTo(ContainElement(BeElementOf(fieldsAdded)), "0.3.0's CRD has none of 0.4.0's fields")
		began := time.Now()
		dc = createReleasedSample(ctx, namespace)
		waitAvailable(ctx, dc, mgr)
		Expect(dc.Status.Selector).To(BeEmpty(), "0.3.0 writes no status.selector")
		AddReportEntry("DatabaseCluster Available with the 0.3.0 RBAC", since(began))
		Expect(*dc.Spec.Replicas).To(BeEquivalentTo(3))
		expectNoForbidden(mgr.LogPath)
	})

	It("upgrades to 0.4.0 and leaves the DatabaseCluster's StatefulSet alone", NodeTimeout(8*time.Minute), func(ctx SpecContext) {
		before := statefulSetOf(ctx, dc)
		// The operator's pod of 0.3.0 goes away during the upgrade: so does its manager.
		stopManager(mgr)

		began := time.Now()
		approveInstallPlan(ctx, namespace, csvCurrent)
		csv := waitCSVSucceeded(ctx, namespace, csvCurrent)
		replaces, _, _ := unstructured.NestedString(csv.Object, "spec", "replaces")
		Expect(replaces).To(Equal(csvPrevious))
		Eventually(func() error {
			return k8s.Get(ctx, client.ObjectKeyFromObject(olm.NewCSV(namespace, csvPrevious)), olm.NewCSV(namespace, csvPrevious))
		}).WithContext(ctx).Should(Satisfy(apierrors.IsNotFound), "the replaced CSV %s was not removed", csvPrevious)
		AddReportEntry("upgrade 0.3.0 -> 0.4.0 (approval -> 0.4.0 Succeeded, 0.3.0 gone)", since(began))

		expectInstalledCSV(ctx, olm.NewSubscription(namespace, packageName), csvCurrent)
		Expect(specFields(ctx)).To(ContainElements(fieldsAdded), "0.4.0's CRD")
		moveToDefaultChannel(ctx, namespace)
		expectInstalledObjects(ctx, csv, namespace)
		expectNamespacedRBAC(ctx, csv, "OwnNamespace", namespace)
		newSA, _ := operatorNames(csv)
		Expect(newSA).To(Equal(saName))
		// The RBAC of 0.3.0 goes with its CSV: from here on only 0.4.0's grants count.
		Eventually(func(g Gomega) {
			roles := &rbacv1.ClusterRoleList{}
			g.Expect(k8s.List(ctx, roles, client.MatchingLabels{"olm.owner": csvPrevious})).To(Succeed())
			g.Expect(roles.Items).To(BeEmpty())
		}).WithContext(ctx).Should(Succeed(), "ClusterRoles of %s left after the upgrade", csvPrevious)

		// The operator's pod of 0.4.0 starts: the manager runs again, with 0.4.0's RBAC only.
		mgr = startManager(ctx, "manager-own-0.4.0", kubeconfig, namespace)
		// 0.4.0 has reconciled the cluster once its status carries the scale subresource's
		// selector, which 0.3.0 did not write: the StatefulSet phase ran before that status write.
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
			g.Expect(dc.Status.Selector).NotTo(BeEmpty())
		}).WithContext(ctx).Should(Succeed(), "0.4.0 did not reconcile the cluster created under 0.3.0")
		waitAvailable(ctx, dc, mgr)
		Consistently(func(g Gomega) {
			after := &appsv1.StatefulSet{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(before), after)).To(Succeed())
			g.Expect(after.UID).To(Equal(before.UID))
			g.Expect(after.Generation).To(Equal(before.Generation), "the StatefulSet's spec changed")
			g.Expect(after.Spec.Template).To(Equal(before.Spec.Template), "the pod template changed")
			g.Expect(after.Status.UpdateRevision).To(Equal(before.Status.UpdateRevision))
			g.Expect(after.Status.CurrentRevision).To(Equal(before.Status.UpdateRevision))
		}).WithContext(ctx).WithTimeout(5 * time.Second).Should(Succeed())
		AddReportEntry("StatefulSet across the upgrade", "generation "+itoa(before.Generation)+", revision "+before.Status.UpdateRevision+": unchanged")
		expectNoForbidden(mgr.LogPath)
	})

	It("deletes the DatabaseCluster with 0.4.0's RBAC", NodeTimeout(3*time.Minute), func(_ SpecContext) {
		deleteAndWait(dc)
		dc = nil
		stopManager(mgr)
	})
})

var _ = Describe("AllNamespaces install", Ordered, func() {
	const (
		namespace     = "operators"
		operatorGroup = "global-operators"
		dbNamespace   = "dbo-all"
	)
	var (
		csv *unstructured.Unstructured
		mgr *manager.Process
		dc  *databasev1alpha1.DatabaseCluster
	)

	AfterAll(NodeTimeout(6*time.Minute), func(_ SpecContext) { cleanupInstall(mgr, dc, namespace, operatorGroup) })

	It("installs 0.4.0 watching every namespace", NodeTimeout(5*time.Minute), func(ctx SpecContext) {
		// olm.Install, as run-bundle uses it: an OperatorGroup without targets, a Subscription
		// with Automatic approval and no startingCSV (the head of the channel, 0.4.0), the wait.
		subscribed := time.Now()
		guarded, cancel := guard(ctx)
		defer cancel()
		inst, err := olm.Install(guarded, k8s, olm.InstallOptions{
			Namespace: namespace, Package: packageName, Channel: channel,
			CatalogSource: catalogSourceName, CatalogSourceNamespace: olmNamespace,
			InstallMode: olm.InstallMode{Type: olm.InstallModeAllNamespaces}, OperatorGroup: operatorGroup,
		})
		Expect(err).NotTo(HaveOccurred())
		AddReportEntry("install 0.4.0 AllNamespaces (Subscription -> CSV Succeeded, Automatic)", since(subscribed))
		Expect(inst.OperatorGroup).To(Equal(operatorGroup))
		Expect(inst.CreatedOperatorGroup).To(BeTrue())
		csv = inst.CSV
		Expect(csv.GetName()).To(Equal(csvCurrent))
		expectPhase(csv, "Succeeded")
		og := olm.NewOperatorGroup(namespace, operatorGroup)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(og), og)).To(Succeed())
		// AllNamespaces: neither target namespaces nor a selector (OLM adds upgradeStrategy).
		Expect(og.Object["spec"]).NotTo(HaveKey("targetNamespaces"))
		Expect(og.Object["spec"]).NotTo(HaveKey("selector"))
		expectInstalledObjects(ctx, csv, "")
		expectClusterWideRBAC(ctx, csv, dbNamespace, outsideNamespace)
	})

	It("runs the manager as OLM's ServiceAccount: a DatabaseCluster in another namespace becomes Available", NodeTimeout(5*time.Minute), func(ctx SpecContext) {
		saName, _ := operatorNames(csv)
		kubeconfig := impersonatingKubeconfig(namespace, saName)
		expectImpersonationEnforced(ctx, kubeconfig)
		mgr = startManager(ctx, "manager-all-0.4.0", kubeconfig, "")

		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metaName(dbNamespace)})).To(Succeed())
		began := time.Now()
		dc = newSample(dbNamespace)
		Expect(k8s.Create(ctx, dc)).To(Succeed())
		waitAvailable(ctx, dc, mgr)
		AddReportEntry("DatabaseCluster Available with the AllNamespaces RBAC", since(began))
		deleteAndWait(dc)
		dc = nil
		stopManager(mgr)
	})
})

func itoa(i int64) string { return strconv.FormatInt(i, 10) }
