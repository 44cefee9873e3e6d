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
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/test/harness/manager"
	"github.com/seed1b407122/database-operator/test/harness/olm"
	"github.com/seed1b407122/database-operator/test/harness/proc"
)

func metaName(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }

// olmWaitTimeout bounds each wait on OLM below, within the specs' longer NodeTimeouts.
const olmWaitTimeout = 2 * time.Minute

// guard bounds a wait on OLM: olmWaitTimeout, and an end as soon as OLM or the catalog
// server exits.
func guard(ctx context.Context) (context.Context, context.CancelFunc) {
	return proc.WhileRunningWithin(ctx, olmWaitTimeout, olmProcs...)
}

// createOperatorGroup creates an OperatorGroup; no target namespaces means AllNamespaces.
func createOperatorGroup(ctx context.Context, namespace, name string, targets ...string) {
	got, created, err := olm.EnsureOperatorGroup(ctx, k8s, namespace, name, targets, nil)
	Expect(err).NotTo(HaveOccurred())
	Expect(created).To(BeTrue(), "namespace %s already had an OperatorGroup", namespace)
	Expect(got).To(Equal(name))
}

// createSubscription subscribes namespace to the package on releasedChannel of the suite's
// catalog, as the users of 0.2.0 and 0.3.0 did.
func createSubscription(ctx context.Context, namespace, startingCSV string, approval olm.Approval) {
	_, err := olm.Subscribe(ctx, k8s, olm.SubscriptionOptions{
		Namespace: namespace, Package: packageName, Channel: releasedChannel,
		CatalogSource: catalogSourceName, CatalogSourceNamespace: olmNamespace,
		StartingCSV: startingCSV, Approval: approval,
	})
	Expect(err).NotTo(HaveOccurred())
}

// approveInstallPlan waits for the InstallPlan that installs csvName, approves it and waits
// until it is Complete (olm.ApproveInstallPlan: a Failed plan fails at once with OLM's
// explanation).
func approveInstallPlan(ctx context.Context, namespace, csvName string) {
	began := time.Now()
	ctx, cancel := guard(ctx)
	defer cancel()
	plan, err := olm.ApproveInstallPlan(ctx, k8s, namespace, csvName)
	Expect(err).NotTo(HaveOccurred())
	phase, _, _ := unstructured.NestedString(plan.Object, "status", "phase")
	Expect(phase).To(Equal("Complete"))
	approved, _, _ := unstructured.NestedBool(plan.Object, "spec", "approved")
	Expect(approved).To(BeTrue())
	GinkgoWriter.Printf("InstallPlan %s (%s) approved and Complete after %s\n", plan.GetName(), csvName, since(began))
}

// waitCSVSucceeded waits for the CSV's phase Succeeded (olm.WaitForCSV: a Failed CSV fails
// at once with its reason and message) and returns the CSV.
func waitCSVSucceeded(ctx context.Context, namespace, name string) *unstructured.Unstructured {
	began := time.Now()
	ctx, cancel := guard(ctx)
	defer cancel()
	csv, err := olm.WaitForCSV(ctx, k8s, namespace, name)
	Expect(err).NotTo(HaveOccurred())
	expectPhase(csv, "Succeeded")
	GinkgoWriter.Printf("CSV %s/%s Succeeded after %s more\n", namespace, name, since(began))
	return csv
}

func expectPhase(obj *unstructured.Unstructured, want string) {
	phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
	ExpectWithOffset(1, phase).To(Equal(want), "%s %s/%s: %v", obj.GetKind(), obj.GetNamespace(), obj.GetName(), obj.Object["status"])
}

// operatorNames reads the ServiceAccount and Deployment names from the CSV's install strategy.
func operatorNames(csv *unstructured.Unstructured) (serviceAccount, deployment string) {
	deployments, _, _ := unstructured.NestedSlice(csv.Object, "spec", "install", "spec", "deployments")
	Expect(deployments).To(HaveLen(1))
	deployment, _, _ = unstructured.NestedString(deployments[0].(map[string]any), "name")
	serviceAccount, _, _ = unstructured.NestedString(deployments[0].(map[string]any), "spec", "template", "spec", "serviceAccountName")
	Expect(deployment).NotTo(BeEmpty())
	Expect(serviceAccount).NotTo(BeEmpty())
	return serviceAccount, deployment
}

// expectInstalledObjects checks what OLM created for a CSV in namespace: the Deployment (with
// the OperatorGroup's target namespaces in the pod annotation that feeds WATCH_NAMESPACE), the
// ServiceAccount, Roles and ClusterRoles with bindings to that ServiceAccount.
func expectInstalledObjects(ctx context.Context, csv *unstructured.Unstructured, wantTargets string) {
	namespace := csv.GetNamespace()
	saName, depName := operatorNames(csv)
	dep := &appsv1.Deployment{}
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: depName}, dep)).To(Succeed())
	Expect(dep.Spec.Template.Annotations).To(HaveKeyWithValue("olm.targetNamespaces", wantTargets))
	Expect(dep.Spec.Template.Spec.ServiceAccountName).To(Equal(saName))
	Expect(dep.Status.AvailableReplicas).To(BeNumerically(">=", 1))
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: saName}, &corev1.ServiceAccount{})).To(Succeed())

	owned := client.MatchingLabels{"olm.owner": csv.GetName(), "olm.owner.namespace": namespace}
	roles := &rbacv1.RoleList{}
	Expect(k8s.List(ctx, roles, client.InNamespace(namespace), owned)).To(Succeed())
	Expect(roles.Items).NotTo(BeEmpty(), "no Role owned by %s", csv.GetName())
	roleBindings := &rbacv1.RoleBindingList{}
	Expect(k8s.List(ctx, roleBindings, client.InNamespace(namespace), owned)).To(Succeed())
	Expect(roleBindings.Items).To(ContainElement(bindsServiceAccount(namespace, saName)))
	clusterRoles := &rbacv1.ClusterRoleList{}
	Expect(k8s.List(ctx, clusterRoles, owned)).To(Succeed())
	Expect(clusterRoles.Items).NotTo(BeEmpty(), "no ClusterRole owned by %s", csv.GetName())
	clusterRoleBindings := &rbacv1.ClusterRoleBindingList{}
	Expect(k8s.List(ctx, clusterRoleBindings, owned)).To(Succeed())
	Expect(clusterRoleBindings.Items).To(ContainElement(bindsServiceAccount(namespace, saName)))
	AddReportEntry(fmt.Sprintf("objects OLM created for %s/%s", namespace, csv.GetName()),
		fmt.Sprintf("Deployment %s, ServiceAccount %s, %d Role(s), %d RoleBinding(s), %d ClusterRole(s), %d ClusterRoleBinding(s)",
			depName, saName, len(roles.Items), len(roleBindings.Items), len(clusterRoles.Items), len(clusterRoleBindings.Items)))
}

// bindsServiceAccount matches a RoleBinding or ClusterRoleBinding with the ServiceAccount as a
// subject.
func bindsServiceAccount(namespace, name string) OmegaMatcher {
	return WithTransform(func(b any) []rbacv1.Subject {
		switch b := b.(type) {
		case rbacv1.RoleBinding:
			return b.Subjects
		case rbacv1.ClusterRoleBinding:
			return b.Subjects
		}
		return nil
	}, ContainElement(rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: name}))
}

// cleanupInstall removes what an install's specs left: the DatabaseCluster, deleted while its
// manager still runs so that the finalizer can go, then the manager, then the install.
func cleanupInstall(mgr *manager.Process, dc *databasev1alpha1.DatabaseCluster, namespace, operatorGroup string) {
	if mgr != nil && mgr.Running() {
		if dc != nil {
			deleteAndWait(dc)
		}
		_ = mgr.Stop(managerStopTimeout)
	}
	uninstall(namespace, operatorGroup)
}

// uninstall removes the Subscription, the CSVs and the OperatorGroup of namespace with
// olm.Uninstall (the DatabaseClusters must be gone already: their finalizer needs the
// manager), then checks that no CSV and no Deployment is left there (OLM's Deployment goes
// with its CSV, through the garbage collector). The CRDs stay, as OLM leaves them.
func uninstall(namespace, operatorGroup string) {
	ctx, cancel := withTimeout(3 * time.Minute)
	defer cancel()
	Expect(olm.Uninstall(ctx, k8s, olm.UninstallOptions{
		Namespace: namespace, Package: packageName, OperatorGroups: []string{operatorGroup},
	})).To(Succeed())
	expectNoOperator(ctx, namespace)
}

// expectNoOperator checks that namespace has no CSV, Subscription, OperatorGroup or
// Deployment left.
func expectNoOperator(ctx context.Context, namespace string) {
	Eventually(func(g Gomega) {
		for _, kind := range []struct{ apiVersion, kind string }{
			{olm.APIVersionV1alpha1, olm.KindClusterServiceVersion},
			{olm.APIVersionV1alpha1, olm.KindSubscription},
			{olm.APIVersionV1, olm.KindOperatorGroup},
		} {
			list := olm.NewList(kind.apiVersion, kind.kind)
			g.Expect(k8s.List(ctx, list, client.InNamespace(namespace))).To(Succeed())
			g.Expect(list.Items).To(BeEmpty(), "%s left in %s", kind.kind, namespace)
		}
		deps := &appsv1.DeploymentList{}
		g.Expect(k8s.List(ctx, deps, client.InNamespace(namespace))).To(Succeed())
		g.Expect(deps.Items).To(BeEmpty())
	}).WithContext(ctx).Should(Succeed(), "the operator in %s was not removed", namespace)
}

// impersonatingKubeconfig writes a kubeconfig with the admin's credentials that has the API
// server impersonate the ServiceAccount (user and groups as the API server gives a real
// token of that account): every request is authorized against the ServiceAccount's RBAC.
func impersonatingKubeconfig(namespace, serviceAccount string) string {
	cfg, err := clientcmd.LoadFromFile(cluster.KubeconfigPath)
	Expect(err).NotTo(HaveOccurred())
	current := cfg.Contexts[cfg.CurrentContext]
	Expect(current).NotTo(BeNil())
	user := cfg.AuthInfos[current.AuthInfo]
	Expect(user).NotTo(BeNil())
	user.Impersonate = fmt.Sprintf("system:serviceaccount:%s:%s", namespace, serviceAccount)
	user.ImpersonateGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace}
	path := filepath.Join(cluster.WorkDir, fmt.Sprintf("sa-%s-%s.kubeconfig", namespace, serviceAccount))
	Expect(clientcmd.WriteToFile(*cfg, path)).To(Succeed())
	return path
}

// expectImpersonationEnforced is the negative control: through the kubeconfig, something the
// operator was never granted (Secrets in kube-system) must be forbidden, else the manager's
// success would prove nothing about RBAC.
func expectImpersonationEnforced(ctx context.Context, kubeconfig string) {
	restCfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	c, err := client.New(restCfg, client.Options{Scheme: k8s.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	err = c.List(ctx, &corev1.SecretList{}, client.InNamespace("kube-system"))
	Expect(apierrors.IsForbidden(err)).To(BeTrue(), "listing Secrets as the operator's ServiceAccount: want Forbidden, got %v", err)
}

// managerStopTimeout bounds a manager's clean exit on SIGINT before it is killed.
const managerStopTimeout = 15 * time.Second

// startManager runs the manager binary on the host with the kubeconfig (impersonating the
// ServiceAccount) and WATCH_NAMESPACE, as OLM's Deployment would, and waits until it is ready.
func startManager(ctx context.Context, name, kubeconfig, watchNamespace string) *manager.Process {
	return startManagerOf(ctx, "MANAGER_BIN", name, kubeconfig, watchNamespace)
}

// startPreviousManager starts the manager of the previous release (PREVIOUS_MANAGER_BIN, built
// from its own commit), which the previous bundle's CSV would run.
func startPreviousManager(ctx context.Context, name, kubeconfig, watchNamespace string) *manager.Process {
	return startManagerOf(ctx, "PREVIOUS_MANAGER_BIN", name, kubeconfig, watchNamespace)
}

// startManagerOf starts the manager binary the environment variable binaryEnv names.
func startManagerOf(ctx context.Context, binaryEnv, name, kubeconfig, watchNamespace string) *manager.Process {
	m, err := manager.Start(ctx, manager.Options{
		Binary:     requireEnv(binaryEnv),
		Kubeconfig: kubeconfig,
		LogPath:    filepath.Join(cluster.WorkDir, name+".log"),
		Args:       []string{"--leader-elect=false", "--metrics-bind-address=0", "--zap-log-level=info"},
		Env:        []string{"WATCH_NAMESPACE=" + watchNamespace},
	})
	Expect(err).NotTo(HaveOccurred())
	GinkgoWriter.Printf("Started %s (pid %d), log %s\n", name, m.Pid(), m.LogPath)
	return m
}

// stopManager stops the manager with SIGINT, expects a clean exit, and fails when its log has
// a line with "forbidden": the RBAC OLM wired was not enough for something it did.
func stopManager(m *manager.Process) {
	if m == nil {
		return
	}
	Expect(m.Stop(managerStopTimeout)).To(Succeed())
	expectNoForbidden(m.LogPath)
}

func expectNoForbidden(logPath string) {
	forbidden := forbiddenLines(logPath)
	Expect(forbidden).To(BeEmpty(), "the manager was refused by RBAC (%s):\n%s", logPath, strings.Join(forbidden, "\n"))
}

// forbiddenLines returns the log's lines that mention "forbidden" (at most 10, then a count).
func forbiddenLines(logPath string) []string {
	data, err := os.ReadFile(logPath)
	Expect(err).NotTo(HaveOccurred())
	var forbidden []string
	for line := range strings.Lines(string(data)) {
		if strings.Contains(strings.ToLower(line), "forbidden") {
			forbidden = append(forbidden, strings.TrimSpace(line))
		}
	}
	if len(forbidden) > 10 {
		forbidden = append(forbidden[:10], fmt.Sprintf("... and %d more", len(forbidden)-10))
	}
	return forbidden
}

// newSample reads config/samples/database_v1alpha1_databasecluster_etcd.yaml into namespace.
func newSample(namespace string) *databasev1alpha1.DatabaseCluster {
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "samples", "database_v1alpha1_databasecluster_etcd.yaml"))
	Expect(err).NotTo(HaveOccurred())
	dc := &databasev1alpha1.DatabaseCluster{}
	Expect(yaml.UnmarshalStrict(data, dc)).To(Succeed())
	dc.Namespace = namespace
	return dc
}

// fieldsAdded are spec fields of the DatabaseCluster that 0.4.0 added, none in 0.3.0's schema.
var fieldsAdded = []string{"config", "credentials", "tls", "service", "sidecars", "initContainers", "volumes",
	"topologySpreadConstraints", "startupProbe", "autoHeal", "rollout", "minReplicas"}

// createReleasedSample creates the etcd example of the released bundle (releasedBundleDir, its
// CSV's alm-examples) in namespace, as a user of that version applied it: with exactly the fields
// its API had, not today's types' empty new fields.
func createReleasedSample(ctx context.Context, namespace string) *databasev1alpha1.DatabaseCluster {
	csv, err := olm.ReadCSV(releasedBundleDir)
	Expect(err).NotTo(HaveOccurred())
	example, err := olm.Example(csv, "DatabaseCluster", "etcd-sample")
	Expect(err).NotTo(HaveOccurred())
	example.SetNamespace(namespace)
	Expect(k8s.Create(ctx, example)).To(Succeed())
	dc := &databasev1alpha1.DatabaseCluster{}
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(example), dc)).To(Succeed())
	return dc
}

// specFields lists the properties of the served DatabaseCluster schema's spec.
func specFields(ctx context.Context) []string {
	var crd apiextensionsv1.CustomResourceDefinition
	Expect(k8s.Get(ctx, client.ObjectKey{Name: "databaseclusters.database.seed1b407122.io"}, &crd)).To(Succeed())
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

// waitAvailable waits until the DatabaseCluster is Available with every replica ready. It
// stops at once when the manager exits or is refused by RBAC.
func waitAvailable(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, m *manager.Process) {
	Eventually(func(g Gomega) {
		if !m.Running() {
			StopTrying(fmt.Sprintf("the manager exited (%v); tail of %s:\n%s", m.ExitErr(), m.LogPath, proc.Tail(m.LogPath))).Now()
		}
		if forbidden := forbiddenLines(m.LogPath); len(forbidden) > 0 {
			StopTrying(fmt.Sprintf("the manager was refused by RBAC (%s):\n%s", m.LogPath, strings.Join(forbidden, "\n"))).Now()
		}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		g.Expect(apimeta.IsStatusConditionTrue(dc.Status.Conditions, databasev1alpha1.ConditionAvailable)).To(BeTrue(),
			"conditions: %v", dc.Status.Conditions)
		g.Expect(dc.Status.ReadyReplicas).To(Equal(*dc.Spec.Replicas))
	}).WithContext(ctx).Should(Succeed(), "DatabaseCluster %s/%s did not become Available", dc.Namespace, dc.Name)
}

// statefulSetOf returns the StatefulSet the DatabaseCluster owns.
func statefulSetOf(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) *appsv1.StatefulSet {
	list := &appsv1.StatefulSetList{}
	Expect(k8s.List(ctx, list, client.InNamespace(dc.Namespace))).To(Succeed())
	for i := range list.Items {
		for _, ref := range list.Items[i].OwnerReferences {
			if ref.UID == dc.UID {
				return &list.Items[i]
			}
		}
	}
	Fail(fmt.Sprintf("no StatefulSet owned by DatabaseCluster %s/%s", dc.Namespace, dc.Name))
	return nil
}

// deleteAndWait deletes the DatabaseCluster (the manager must run: it removes the finalizer).
func deleteAndWait(dc *databasev1alpha1.DatabaseCluster) {
	ctx, cancel := withTimeout(2 * time.Minute)
	defer cancel()
	Expect(client.IgnoreNotFound(k8s.Delete(ctx, dc))).To(Succeed())
	Eventually(func() error {
		return k8s.Get(ctx, client.ObjectKeyFromObject(dc), &databasev1alpha1.DatabaseCluster{})
	}).WithContext(ctx).Should(Satisfy(apierrors.IsNotFound), "DatabaseCluster %s/%s was not deleted", dc.Namespace, dc.Name)
}

// expectInstalledCSV waits until the Subscription's status names csvName as installed.
func expectInstalledCSV(ctx context.Context, sub *unstructured.Unstructured, csvName string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(sub), sub)).To(Succeed())
		installed, _, _ := unstructured.NestedString(sub.Object, "status", "installedCSV")
		g.Expect(installed).To(Equal(csvName))
	}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed(), "status.installedCSV of Subscription %s/%s", sub.GetNamespace(), sub.GetName())
}

// expectChannelDeprecated waits until OLM tells namespace's Subscription (on releasedChannel)
// that its channel is deprecated, and where to go: ChannelDeprecated=True with the catalog's
// message.
func expectChannelDeprecated(ctx context.Context, namespace string) {
	GinkgoHelper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	message, err := olm.WaitSubscriptionCondition(ctx, k8s, namespace, packageName, "ChannelDeprecated")
	Expect(err).NotTo(HaveOccurred())
	Expect(message).To(HavePrefix("olm.channel/" + releasedChannel + ": " + deprecationNotice))
}

// moveToDefaultChannel does what the deprecation message asks (docs/olm.md, "Channels"): it
// patches namespace's Subscription from releasedChannel to channel, then waits until OLM has
// dropped the deprecation conditions, with the installed CSV unchanged.
func moveToDefaultChannel(ctx context.Context, namespace string) {
	GinkgoHelper()
	sub := olm.NewSubscription(namespace, packageName)
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(sub), sub)).To(Succeed())
	installed, _, _ := unstructured.NestedString(sub.Object, "status", "installedCSV")
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"channel":"`+channel+`"}}`))
	Expect(k8s.Patch(ctx, sub, patch)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(sub), sub)).To(Succeed())
		for _, typ := range []string{"ChannelDeprecated", "Deprecated"} {
			status, message := olm.SubscriptionCondition(sub, typ)
			g.Expect(status).NotTo(Equal("True"), "%s: %s", typ, message)
		}
		state, _, _ := unstructured.NestedString(sub.Object, "status", "state")
		g.Expect(state).To(Equal("AtLatestKnown"))
		now, _, _ := unstructured.NestedString(sub.Object, "status", "installedCSV")
		g.Expect(now).To(Equal(installed))
	}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
}
