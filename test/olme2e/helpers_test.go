//go:build olm

/*
Copyright 2026 The database-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package olme2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/test/localcluster"
)

// child is a process the suite runs beside the cluster: OLM, opm serve, the manager. It gets
// its own process group and dies with the test process (localcluster.ChildSysProcAttr); its
// output goes to WorkDir/<name>.log.
type child struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error
}

func startChild(name, bin string, args, env []string) *child {
	logPath := filepath.Join(cluster.WorkDir, name+".log")
	logFile, err := os.Create(logPath)
	Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command(bin, args...)
	cmd.Dir = cluster.WorkDir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = localcluster.ChildSysProcAttr()
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		Fail(fmt.Sprintf("starting %s (%s): %v", name, bin, err))
	}
	c := &child{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		c.waitErr = cmd.Wait()
		_ = logFile.Close()
		close(c.done)
	}()
	GinkgoWriter.Printf("Started %s (pid %d), log %s\n", name, cmd.Process.Pid, logPath)
	return c
}

func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// stop sends sig (SIGTERM when none) to the child's process group, SIGKILL after 15 s, and
// waits for it. It returns the exit error of a child that stopped on the signal, nil when it
// exited 0.
func (c *child) stop(sig ...syscall.Signal) error {
	if c == nil || c.exited() {
		return nil
	}
	s := syscall.SIGTERM
	if len(sig) > 0 {
		s = sig[0]
	}
	_ = syscall.Kill(-c.cmd.Process.Pid, s)
	select {
	case <-c.done:
		return c.waitErr
	case <-time.After(15 * time.Second):
	}
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	<-c.done
	return fmt.Errorf("%s did not stop within 15s of %v and was killed", c.name, s)
}

func metaName(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }

// newObject is an unstructured OLM object: the operator's module does not import OLM's API.
func newObject(apiVersion, kind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

func newCSV(namespace, name string) *unstructured.Unstructured {
	return newObject("operators.coreos.com/v1alpha1", "ClusterServiceVersion", namespace, name)
}

func newSubscription(namespace string) *unstructured.Unstructured {
	return newObject("operators.coreos.com/v1alpha1", "Subscription", namespace, packageName)
}

// createOperatorGroup creates an OperatorGroup; no target namespaces means AllNamespaces.
func createOperatorGroup(ctx context.Context, namespace, name string, targets ...string) {
	og := newObject("operators.coreos.com/v1", "OperatorGroup", namespace, name)
	spec := map[string]any{}
	if len(targets) > 0 {
		spec["targetNamespaces"] = toAny(targets)
	}
	og.Object["spec"] = spec
	Expect(k8s.Create(ctx, og)).To(Succeed())
}

// createSubscription subscribes namespace to the package on the stable channel.
func createSubscription(ctx context.Context, namespace, startingCSV, approval string) {
	sub := newSubscription(namespace)
	spec := map[string]any{
		"channel":             channel,
		"name":                packageName,
		"source":              catalogSourceName,
		"sourceNamespace":     olmNamespace,
		"installPlanApproval": approval,
	}
	if startingCSV != "" {
		spec["startingCSV"] = startingCSV
	}
	sub.Object["spec"] = spec
	Expect(k8s.Create(ctx, sub)).To(Succeed())
}

// approveInstallPlan waits for the InstallPlan that installs csvName, approves it and waits
// until it is Complete.
func approveInstallPlan(ctx context.Context, namespace, csvName string) {
	began := time.Now()
	var plan *unstructured.Unstructured
	Eventually(func(g Gomega) {
		expectRunning()
		plans := &unstructured.UnstructuredList{}
		plans.SetAPIVersion("operators.coreos.com/v1alpha1")
		plans.SetKind("InstallPlanList")
		g.Expect(k8s.List(ctx, plans, client.InNamespace(namespace))).To(Succeed())
		plan = nil
		for i := range plans.Items {
			names, _, _ := unstructured.NestedStringSlice(plans.Items[i].Object, "spec", "clusterServiceVersionNames")
			if slices.Contains(names, csvName) {
				plan = &plans.Items[i]
			}
		}
		g.Expect(plan).NotTo(BeNil(), "no InstallPlan for %s yet", csvName)
		phase, _, _ := unstructured.NestedString(plan.Object, "status", "phase")
		g.Expect(phase).To(Equal("RequiresApproval"))
	}).WithContext(ctx).Should(Succeed(), "no InstallPlan awaiting approval for %s", csvName)
	GinkgoWriter.Printf("Approving InstallPlan %s (%s), awaited for %s\n", plan.GetName(), csvName, since(began))
	approved := time.Now()
	patch := client.MergeFrom(plan.DeepCopy())
	Expect(unstructured.SetNestedField(plan.Object, true, "spec", "approved")).To(Succeed())
	Expect(k8s.Patch(ctx, plan, patch)).To(Succeed())
	Eventually(func(g Gomega) {
		expectRunning()
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(plan), plan)).To(Succeed())
		phase, _, _ := unstructured.NestedString(plan.Object, "status", "phase")
		g.Expect(phase).NotTo(Equal("Failed"), "InstallPlan %s failed: %v", plan.GetName(), plan.Object["status"])
		g.Expect(phase).To(Equal("Complete"))
	}).WithContext(ctx).Should(Succeed(), "InstallPlan %s did not complete", plan.GetName())
	GinkgoWriter.Printf("InstallPlan %s Complete %s after approval\n", plan.GetName(), since(approved))
}

// waitCSVSucceeded waits for the CSV's phase Succeeded and returns the CSV.
func waitCSVSucceeded(ctx context.Context, namespace, name string) *unstructured.Unstructured {
	began := time.Now()
	csv := newCSV(namespace, name)
	Eventually(func(g Gomega) {
		expectRunning()
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(csv), csv)).To(Succeed())
		phase, _, _ := unstructured.NestedString(csv.Object, "status", "phase")
		g.Expect(phase).NotTo(Equal("Failed"), "CSV %s failed: %v", name, csv.Object["status"])
		g.Expect(phase).To(Equal("Succeeded"), "CSV %s: %v", name, csv.Object["status"])
	}).WithContext(ctx).Should(Succeed())
	GinkgoWriter.Printf("CSV %s/%s Succeeded after %s more\n", namespace, name, since(began))
	return csv
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

// uninstall removes the Subscription, the CSVs and the OperatorGroup of namespace (the
// DatabaseClusters must be gone already: their finalizer needs the manager) and waits until
// OLM's Deployment is gone. The CRDs stay, as OLM leaves them.
func uninstall(namespace, operatorGroup string) {
	ctx, cancel := withTimeout(3 * time.Minute)
	defer cancel()
	Expect(client.IgnoreNotFound(k8s.Delete(ctx, newSubscription(namespace)))).To(Succeed())
	csvs := &unstructured.UnstructuredList{}
	csvs.SetAPIVersion("operators.coreos.com/v1alpha1")
	csvs.SetKind("ClusterServiceVersionList")
	Expect(k8s.DeleteAllOf(ctx, newCSV(namespace, ""), client.InNamespace(namespace))).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(k8s.List(ctx, csvs, client.InNamespace(namespace))).To(Succeed())
		g.Expect(csvs.Items).To(BeEmpty())
		deps := &appsv1.DeploymentList{}
		g.Expect(k8s.List(ctx, deps, client.InNamespace(namespace))).To(Succeed())
		g.Expect(deps.Items).To(BeEmpty())
	}).WithContext(ctx).Should(Succeed(), "the operator in %s was not removed", namespace)
	Expect(client.IgnoreNotFound(k8s.Delete(ctx, newObject("operators.coreos.com/v1", "OperatorGroup", namespace, operatorGroup)))).To(Succeed())
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

var probeClient = &http.Client{Timeout: 2 * time.Second}

// startManager runs the manager binary on the host with the kubeconfig (impersonating the
// ServiceAccount) and WATCH_NAMESPACE, as OLM's Deployment would, and waits until it is ready.
func startManager(ctx context.Context, name, kubeconfig, watchNamespace string) *child {
	bin := requireEnv("MANAGER_BIN")
	probe := freePort()
	m := startChild(name, bin, []string{"--leader-elect=false", "--metrics-bind-address=0",
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", probe), "--zap-log-level=info"},
		[]string{"KUBECONFIG=" + kubeconfig, "WATCH_NAMESPACE=" + watchNamespace})
	Eventually(func(g Gomega) {
		g.Expect(m.exited()).To(BeFalse(), "the manager exited: %v\n%s", m.waitErr, tail(m.logPath))
		resp, err := probeClient.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", probe))
		g.Expect(err).NotTo(HaveOccurred())
		defer func() { _ = resp.Body.Close() }()
		g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
	}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed(), "the manager did not become ready; see %s", m.logPath)
	return m
}

// stopManager stops the manager with SIGINT, expects a clean exit, and fails when its log has
// a line with "forbidden": the RBAC OLM wired was not enough for something it did.
func stopManager(m *child) {
	if m == nil {
		return
	}
	Expect(m.stop(syscall.SIGINT)).To(Succeed(), "the manager exits 0 on SIGINT; see %s", m.logPath)
	expectNoForbidden(m.logPath)
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

// newSample reads config/samples/database_v1alpha1_databasecluster.yaml into namespace.
func newSample(namespace string) *databasev1alpha1.DatabaseCluster {
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "samples", "database_v1alpha1_databasecluster.yaml"))
	Expect(err).NotTo(HaveOccurred())
	dc := &databasev1alpha1.DatabaseCluster{}
	Expect(yaml.UnmarshalStrict(data, dc)).To(Succeed())
	dc.Namespace = namespace
	return dc
}

// waitAvailable waits until the DatabaseCluster is Available with every replica ready. It
// stops at once when the manager exits or is refused by RBAC.
func waitAvailable(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, m *child) {
	Eventually(func(g Gomega) {
		if m.exited() {
			StopTrying(fmt.Sprintf("the manager exited: %v\n%s", m.waitErr, tail(m.logPath))).Now()
		}
		if forbidden := forbiddenLines(m.logPath); len(forbidden) > 0 {
			StopTrying(fmt.Sprintf("the manager was refused by RBAC (%s):\n%s", m.logPath, strings.Join(forbidden, "\n"))).Now()
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

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
