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
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/test/harness/manager"
	"github.com/seed1b407122/database-operator/test/harness/olm"
)

// Least privilege by install mode: the CSV lists the manager's rules on namespaced resources
// under permissions, so for OwnNamespace and SingleNamespace OLM grants them by Roles in the
// target namespaces only; clusterPermissions holds only the cluster-scoped reviews of the
// secure metrics endpoint, read access (get, list) to StorageClasses and VolumeSnapshotClasses,
// which DatabaseBackups read, and get/create/delete of VolumeSnapshotContents (the Retain copies
// of a clone from another namespace). For AllNamespaces OLM makes ClusterRoles of the same
// permissions.

// outsideNamespace is a namespace no namespaced install targets.
const outsideNamespace = "default"

// probeWrites are writes the manager needs on namespaced resources; the API server is asked
// (SubjectAccessReview) whether the operator's ServiceAccount may make them.
var probeWrites = []authorizationv1.ResourceAttributes{
	{Verb: "create", Group: "apps", Resource: "statefulsets"},
	{Verb: "delete", Group: "", Resource: "persistentvolumeclaims"},
	{Verb: "create", Group: "batch", Resource: "jobs"},
	{Verb: "patch", Group: databasev1alpha1.GroupVersion.Group, Resource: "databaseclusters", Subresource: "status"},
}

// reportGrants adds the roles bound to the CSV's ServiceAccount to the report: the RBAC of
// each install mode.
func reportGrants(csv *unstructured.Unstructured, mode string, grants []olm.RoleGrant) {
	saName, _ := operatorNames(csv)
	AddReportEntry(fmt.Sprintf("RBAC of %s, %s install (ServiceAccount %s/%s)", csv.GetName(), mode, csv.GetNamespace(), saName),
		"\n"+olm.DescribeGrants(grants))
}

// clusterWideNamespacedWrites returns, per ClusterRoleBinding'd role, the writes on namespaced
// resources it allows in every namespace.
func clusterWideNamespacedWrites(grants []olm.RoleGrant) map[string][]string {
	out := map[string][]string{}
	for _, g := range grants {
		if g.Namespace != "" {
			continue
		}
		writes, err := olm.NamespacedWrites(g.Rules, olm.NamespacedByMapper(k8s.RESTMapper()))
		Expect(err).NotTo(HaveOccurred())
		if len(writes) > 0 {
			out[g.String()] = writes
		}
	}
	return out
}

// expectNamespacedRBAC checks a namespaced install: no role bound cluster-wide to the
// operator's ServiceAccount allows a write on a namespaced resource; each target namespace
// has Roles with every rule of the CSV's permissions; and the API server allows the probe
// writes in the targets and refuses them outside.
func expectNamespacedRBAC(ctx context.Context, csv *unstructured.Unstructured, mode string, targets ...string) {
	GinkgoHelper()
	saName, _ := operatorNames(csv)
	var grants []olm.RoleGrant
	// OLM copies the Roles into the target namespaces after the CSV succeeds.
	Eventually(func(g Gomega) {
		var err error
		grants, err = olm.ServiceAccountGrants(ctx, k8s, csv.GetNamespace(), saName)
		g.Expect(err).NotTo(HaveOccurred())
		for _, ns := range targets {
			g.Expect(rulesIn(grants, ns)).To(ContainElements(csvRules(csv, "permissions")),
				"the Roles in %s lack rules of the CSV's permissions:\n%s", ns, olm.DescribeGrants(grants))
		}
	}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
	reportGrants(csv, mode, grants)
	Expect(clusterWideNamespacedWrites(grants)).To(BeEmpty(),
		"roles bound cluster-wide to %s allow writes on namespaced resources in every namespace", saName)
	for _, ns := range targets {
		expectAllowed(ctx, Default, csv.GetNamespace(), saName, ns, true)
	}
	expectAllowed(ctx, Default, csv.GetNamespace(), saName, outsideNamespace, false)
}

// expectAllowed asks the API server (SubjectAccessReview) whether the ServiceAccount may make
// each probe write in namespace, and expects want.
func expectAllowed(ctx context.Context, g Gomega, saNamespace, saName, namespace string, want bool) {
	for _, w := range probeWrites {
		w.Namespace = namespace
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:               "system:serviceaccount:" + saNamespace + ":" + saName,
			Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + saNamespace, "system:authenticated"},
			ResourceAttributes: &w,
		}}
		g.Expect(k8s.Create(ctx, sar)).To(Succeed())
		g.Expect(sar.Status.Allowed).To(Equal(want), "%s %s/%s in %s by %s/%s: allowed=%v (%s)",
			w.Verb, w.Group, w.Resource, namespace, saNamespace, saName, sar.Status.Allowed, sar.Status.Reason)
	}
}

// rulesIn returns the rules of the roles bound in namespace.
func rulesIn(grants []olm.RoleGrant, namespace string) []rbacv1.PolicyRule {
	var rules []rbacv1.PolicyRule
	for _, g := range grants {
		if g.Namespace == namespace {
			rules = append(rules, g.Rules...)
		}
	}
	return rules
}

// csvRules returns the rules of the CSV's install strategy field ("permissions" or
// "clusterPermissions"), of every ServiceAccount.
func csvRules(csv *unstructured.Unstructured, field string) []rbacv1.PolicyRule {
	perms, _, _ := unstructured.NestedSlice(csv.Object, "spec", "install", "spec", field)
	var rules []rbacv1.PolicyRule
	for _, p := range perms {
		var sp struct {
			Rules []rbacv1.PolicyRule `json:"rules"`
		}
		ExpectWithOffset(1, runtime.DefaultUnstructuredConverter.FromUnstructured(p.(map[string]any), &sp)).To(Succeed())
		rules = append(rules, sp.Rules...)
	}
	ExpectWithOffset(1, rules).NotTo(BeEmpty(), "the CSV %s has no %s", csv.GetName(), field)
	return rules
}

var _ = Describe("SingleNamespace install", Ordered, func() {
	const (
		namespace     = "dbo-single-op"
		operatorGroup = "dbo-single"
		target        = "dbo-single"
	)
	var (
		csv *unstructured.Unstructured
		mgr *manager.Process
		dc  *databasev1alpha1.DatabaseCluster
	)

	AfterAll(NodeTimeout(6*time.Minute), func(_ SpecContext) { cleanupInstall(mgr, dc, namespace, operatorGroup) })

	It("installs 0.4.0 for one other namespace, with Roles there and no cluster-wide writes", NodeTimeout(5*time.Minute), func(ctx SpecContext) {
		csv = installForTargets(ctx, namespace, operatorGroup,
			olm.InstallMode{Type: olm.InstallModeSingleNamespace, TargetNamespaces: []string{target}})
		expectInstalledObjects(ctx, csv, target)
		expectNamespacedRBAC(ctx, csv, "SingleNamespace", target)
	})

	It("runs the manager as OLM's ServiceAccount: a DatabaseCluster in the target namespace becomes Available", NodeTimeout(5*time.Minute), func(ctx SpecContext) {
		saName, _ := operatorNames(csv)
		kubeconfig := impersonatingKubeconfig(namespace, saName)
		expectImpersonationEnforced(ctx, kubeconfig)
		mgr = startManager(ctx, "manager-single-0.4.0", kubeconfig, target)

		began := time.Now()
		dc = newSample(target)
		Expect(k8s.Create(ctx, dc)).To(Succeed())
		waitAvailable(ctx, dc, mgr)
		AddReportEntry("DatabaseCluster Available with the SingleNamespace RBAC", since(began))
		deleteAndWait(dc)
		dc = nil
		stopManager(mgr)
	})
})

var _ = Describe("MultiNamespace install", Ordered, func() {
	const (
		namespace     = "dbo-multi-op"
		operatorGroup = "dbo-multi"
	)
	targets := []string{"dbo-multi-a", "dbo-multi-b"}
	var (
		csv *unstructured.Unstructured
		mgr *manager.Process
		dc  *databasev1alpha1.DatabaseCluster
	)

	AfterAll(NodeTimeout(6*time.Minute), func(_ SpecContext) { cleanupInstall(mgr, dc, namespace, operatorGroup) })

	It("installs 0.4.0 for two other namespaces, with Roles in each and no cluster-wide writes", NodeTimeout(5*time.Minute), func(ctx SpecContext) {
		csv = installForTargets(ctx, namespace, operatorGroup,
			olm.InstallMode{Type: olm.InstallModeMultiNamespace, TargetNamespaces: targets})
		expectInstalledObjects(ctx, csv, strings.Join(targets, ","))
		expectNamespacedRBAC(ctx, csv, "MultiNamespace", targets...)
	})

	It("runs the manager as OLM's ServiceAccount with WATCH_NAMESPACE as OLM sets it: a DatabaseCluster in each target becomes Available", NodeTimeout(5*time.Minute), func(ctx SpecContext) {
		saName, depName := operatorNames(csv)
		dep := &appsv1.Deployment{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: depName}, dep)).To(Succeed())
		kubeconfig := impersonatingKubeconfig(namespace, saName)
		expectImpersonationEnforced(ctx, kubeconfig)
		mgr = startManager(ctx, "manager-multi-0.4.0", kubeconfig, dep.Spec.Template.Annotations["olm.targetNamespaces"])

		began := time.Now()
		for _, ns := range targets {
			dc = newSample(ns)
			Expect(k8s.Create(ctx, dc)).To(Succeed())
			waitAvailable(ctx, dc, mgr)
			deleteAndWait(dc)
			dc = nil
		}
		AddReportEntry("a DatabaseCluster Available in each of 2 target namespaces with the MultiNamespace RBAC", since(began))
		stopManager(mgr)
	})
})

// installForTargets creates namespace and the mode's target namespaces, installs 0.4.0 into
// namespace for those targets (olm.Install: OperatorGroup, Subscription with Automatic approval,
// the wait for the CSV) and returns the CSV.
func installForTargets(ctx SpecContext, namespace, operatorGroup string, mode olm.InstallMode) *unstructured.Unstructured {
	GinkgoHelper()
	for _, ns := range append([]string{namespace}, mode.TargetNamespaces...) {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metaName(ns)})).To(Succeed())
	}
	subscribed := time.Now()
	guarded, cancel := guard(ctx)
	defer cancel()
	inst, err := olm.Install(guarded, k8s, olm.InstallOptions{
		Namespace: namespace, Package: packageName, Channel: channel,
		CatalogSource: catalogSourceName, CatalogSourceNamespace: olmNamespace,
		InstallMode: mode, OperatorGroup: operatorGroup,
	})
	Expect(err).NotTo(HaveOccurred())
	AddReportEntry(fmt.Sprintf("install 0.4.0 %s (Subscription -> CSV Succeeded, Automatic)", mode.Type), since(subscribed))
	Expect(inst.CSV.GetName()).To(Equal(csvCurrent))
	return inst.CSV
}

// expectClusterWideRBAC checks an AllNamespaces install: OLM made ClusterRoles of the CSV's
// permissions, so the probe writes are allowed in any namespace.
func expectClusterWideRBAC(ctx context.Context, csv *unstructured.Unstructured, namespaces ...string) {
	GinkgoHelper()
	saName, _ := operatorNames(csv)
	var grants []olm.RoleGrant
	Eventually(func(g Gomega) {
		var err error
		grants, err = olm.ServiceAccountGrants(ctx, k8s, csv.GetNamespace(), saName)
		g.Expect(err).NotTo(HaveOccurred())
		var clusterWide []rbacv1.PolicyRule
		for _, gr := range grants {
			if gr.Namespace == "" {
				clusterWide = append(clusterWide, gr.Rules...)
			}
		}
		g.Expect(clusterWide).To(ContainElements(csvRules(csv, "permissions")))
		g.Expect(clusterWide).To(ContainElements(csvRules(csv, "clusterPermissions")))
		for _, ns := range namespaces {
			expectAllowed(ctx, g, csv.GetNamespace(), saName, ns, true)
		}
	}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
	reportGrants(csv, "AllNamespaces", grants)
}
