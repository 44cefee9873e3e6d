//go:build e2e

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

package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/cmd/kubectl-dbc/plugin"
)

// dbcStatusGolden is the status of the cluster of the kubectl-dbc spec, ages and node names
// normalized; KUBECTL_DBC_UPDATE_GOLDEN=1 rewrites it.
var dbcStatusGolden = filepath.Join("..", "..", "cmd", "kubectl-dbc", "plugin", "testdata", "e2e-status.golden")

// dbcAges matches the ages kubectl-dbc prints (5s, 2m3s, 4h, 3d5h, ...); dbcNodes the simulated
// nodes, which the scheduler picks; dbcPads the padding of the table columns, which the widths
// of the ages change.
var (
	dbcAges  = regexp.MustCompile(`\b\d+[ydhms](\d+[dhms])?\b`)
	dbcNodes = regexp.MustCompile(`\bkwok-node-\d+\b`)
	dbcPads  = regexp.MustCompile(` {2,}`)
)

// normalizeStatus replaces ages and node names by placeholders and every column padding by two
// spaces.
func normalizeStatus(out string) string {
	out = dbcAges.ReplaceAllString(out, "<age>")
	out = dbcNodes.ReplaceAllString(out, "<node>")
	return dbcPads.ReplaceAllString(out, "  ")
}

// managedPaths are the leaf field paths (f:spec.f:paused, ...) manager owns on obj.
func managedPaths(obj client.Object, manager string) []string {
	var paths []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			if k == "." {
				continue
			}
			child, _ := v.(map[string]any)
			if len(child) == 0 || (len(child) == 1 && child["."] != nil) {
				paths = append(paths, prefix+k)
				continue
			}
			walk(prefix+k+".", child)
		}
	}
	for _, f := range obj.GetManagedFields() {
		if f.Manager != manager || f.FieldsV1 == nil {
			continue
		}
		Expect(f.Operation).To(Equal(metav1.ManagedFieldsOperationUpdate), "a merge patch is an Update")
		var m map[string]any
		Expect(json.Unmarshal(f.FieldsV1.GetRawBytes(), &m)).To(Succeed())
		walk("", m)
	}
	sort.Strings(paths)
	return paths
}

// The kubectl plugin against the manager on the local control plane: each command run in-process
// through plugin.Run with --kubeconfig and -n, as kubectl would run the binary.
var _ = Describe("kubectl-dbc", Ordered, func() {
	const ns = "e2e-kubectl-dbc"
	// restartAt is the plugin's clock when it restarts the cluster.
	restartAt := time.Date(2026, 11, 25, 12, 34, 56, 0, time.UTC)
	dc := &databasev1alpha1.DatabaseCluster{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: ns}}

	// dbc runs the plugin with args on the suite's cluster and namespace, at the clock now (nil:
	// the real one), and returns its exit code, standard output and standard error.
	dbc := func(ctx SpecContext, now func() time.Time, args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := plugin.Run(ctx, plugin.Options{
			Streams: genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
			Now:     now,
		}, append([]string{"--kubeconfig", cluster.KubeconfigPath, "-n", ns}, args...))
		return code, out.String(), errOut.String()
	}
	// succeeds runs the plugin and expects exit 0, nothing on stderr and stdout want.
	succeeds := func(ctx SpecContext, want string, args ...string) {
		GinkgoHelper()
		code, out, errOut := dbc(ctx, nil, args...)
		Expect([]any{code, out, errOut}).To(Equal([]any{0, want, ""}), "kubectl dbc %v", args)
	}
	current := func(ctx SpecContext) *databasev1alpha1.DatabaseCluster {
		GinkgoHelper()
		got := &databasev1alpha1.DatabaseCluster{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), got)).To(Succeed())
		return got
	}
	waitCondition := func(ctx SpecContext, conditionType, status, reason string) {
		GinkgoHelper()
		Eventually(func(g Gomega) {
			got := &databasev1alpha1.DatabaseCluster{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), got)).To(Succeed())
			i := slices.IndexFunc(got.Status.Conditions, func(c metav1.Condition) bool { return c.Type == conditionType })
			g.Expect(i).NotTo(Equal(-1), "no condition %s", conditionType)
			c := got.Status.Conditions[i]
			g.Expect([]string{string(c.Status), c.Reason}).To(Equal([]string{status, reason}))
			g.Expect(c.ObservedGeneration).To(Equal(got.Generation))
		}).Should(Succeed())
	}
	// toggles runs command and expects spec.<field> to be value afterwards and everything else
	// of the cluster as before: spec, labels, annotations; one generation more.
	toggles := func(ctx SpecContext, command, field, done string, value bool) {
		GinkgoHelper()
		before := current(ctx)
		succeeds(ctx, "databasecluster/orders "+done+" (spec."+field+": "+map[bool]string{true: "true", false: "false"}[value]+")\n", command, "orders")
		after := current(ctx)
		want := before.Spec.DeepCopy()
		switch field {
		case "paused":
			want.Paused = value
		case "hibernated":
			want.Hibernated = value
		}
		Expect(after.Spec).To(Equal(*want))
		Expect(after.GetLabels()).To(Equal(before.GetLabels()))
		Expect(after.Annotations).To(Equal(before.Annotations))
		Expect(after.Generation).To(Equal(before.Generation + 1))
		Expect(managedPaths(after, plugin.FieldManager)).To(ContainElement("f:spec.f:" + field))

		// Again: nothing to change, and the plugin says so.
		succeeds(ctx, "databasecluster/orders unchanged: spec."+field+" is already "+map[bool]string{true: "true", false: "false"}[value]+"\n", command, "orders")
		Expect(current(ctx).Generation).To(Equal(after.Generation))
	}

	BeforeAll(func(ctx SpecContext) {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		dc.Spec = databasev1alpha1.DatabaseClusterSpec{
			Replicas: ptr.To[int32](3), Image: "registry.example.com/db:1.0",
			Storage: databasev1alpha1.StorageSpec{StorageClassName: "standard", Size: "1Gi"},
		}
		Expect(k8s.Create(ctx, dc)).To(Succeed())
		waitCondition(ctx, databasev1alpha1.ConditionAvailable, "True", databasev1alpha1.ReasonAllReplicasReady)
	})

	AfterEach(func() {
		if CurrentSpecReport().Failed() {
			printManagerLog()
		}
	})

	It("backup --name creates exactly a DatabaseBackup of the cluster, Online, which the operator completes", func(ctx SpecContext) {
		succeeds(ctx, "databasebackup/first created (Online backup of databasecluster/orders)\n", "backup", "orders", "--name", "first")
		b := &databasev1alpha1.DatabaseBackup{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "first"}, b)).To(Succeed())
		Expect(b.Spec).To(Equal(databasev1alpha1.DatabaseBackupSpec{ClusterName: "orders", Method: databasev1alpha1.BackupOnline}))
		Expect(b.GetLabels()).To(BeEmpty())
		Expect(b.GetAnnotations()).To(BeEmpty())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
			g.Expect(b.Status.Phase).To(Equal(databasev1alpha1.BackupCompleted))
		}).Should(Succeed())
	})

	It("status prints the cluster on one screen, as the golden file says (ages and nodes normalized)", func(ctx SpecContext) {
		code, out, errOut := dbc(ctx, nil, "status", "orders")
		Expect(code).To(Equal(0), errOut)
		Expect(errOut).To(BeEmpty())
		GinkgoWriter.Printf("kubectl dbc status orders:\n%s", out)
		Expect(strings.Count(out, "\n")).To(BeNumerically("<=", 40), "one screen")
		got := normalizeStatus(out)
		if os.Getenv("KUBECTL_DBC_UPDATE_GOLDEN") == "1" {
			Expect(os.WriteFile(dbcStatusGolden, []byte(got), 0o644)).To(Succeed())
		}
		want, err := os.ReadFile(dbcStatusGolden)
		Expect(err).NotTo(HaveOccurred(), "KUBECTL_DBC_UPDATE_GOLDEN=1 writes it")
		Expect(got).To(Equal(string(want)))

		// The nodes are the ones the pods run on, whichever the scheduler chose.
		var pods corev1.PodList
		Expect(k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels(dc.SelectorLabels()))).To(Succeed())
		Expect(pods.Items).To(HaveLen(3))
		for _, pod := range pods.Items {
			Expect(out).To(MatchRegexp(`(?m)^%s +member +1/1 +Running +0 +%s +data-%s `, pod.Name, pod.Spec.NodeName, pod.Name))
		}
	})

	It("status of a cluster that does not exist fails with the API server's word", func(ctx SpecContext) {
		code, out, errOut := dbc(ctx, nil, "status", "missing")
		Expect([]any{code, out, errOut}).To(Equal([]any{1, "",
			`error: reading databasecluster e2e-kubectl-dbc/missing: databaseclusters.database.seed1b407122.io "missing" not found` + "\n"}))
	})

	It("pause and resume set exactly spec.paused, and the operator says Paused", func(ctx SpecContext) {
		toggles(ctx, "pause", "paused", "paused", true)
		waitCondition(ctx, databasev1alpha1.ConditionPaused, "True", databasev1alpha1.ReasonPausedByUser)
		toggles(ctx, "resume", "paused", "resumed", false)
		waitCondition(ctx, databasev1alpha1.ConditionPaused, "False", databasev1alpha1.ReasonNotPaused)
	})

	It("hibernate and wake set exactly spec.hibernated; the pods stop and come back on the same claims", func(ctx SpecContext) {
		toggles(ctx, "hibernate", "hibernated", "hibernated", true)
		waitCondition(ctx, databasev1alpha1.ConditionHibernated, "True", databasev1alpha1.ReasonHibernated)
		code, out, _ := dbc(ctx, nil, "status", "orders")
		Expect(code).To(Equal(0))
		for _, member := range []string{"orders-0", "orders-1", "orders-2"} {
			Expect(out).To(MatchRegexp(`(?m)^%s +member +- +absent +- +- +data-%s +1Gi +1Gi +-$`, member, member))
		}

		toggles(ctx, "wake", "hibernated", "woken", false)
		waitCondition(ctx, databasev1alpha1.ConditionAvailable, "True", databasev1alpha1.ReasonAllReplicasReady)
	})

	It("restart sets exactly the restartedAt annotation to the plugin's clock, and every pod is replaced by one that carries it", func(ctx SpecContext) {
		before := current(ctx)
		code, out, errOut := dbc(ctx, func() time.Time { return restartAt }, "restart", "orders")
		Expect([]any{code, out, errOut}).To(Equal([]any{0,
			"databasecluster/orders restarted (database.seed1b407122.io/restartedAt: 2026-11-25T12:34:56Z)\n", ""}))
		after := current(ctx)
		want := map[string]string{databasev1alpha1.RestartedAtAnnotation: "2026-11-25T12:34:56Z"}
		for k, v := range before.Annotations {
			want[k] = v
		}
		Expect(after.Annotations).To(Equal(want))
		Expect(after.Spec).To(Equal(before.Spec))
		Expect(after.GetLabels()).To(Equal(before.GetLabels()))
		Expect(managedPaths(after, plugin.FieldManager)).To(Equal([]string{
			"f:metadata.f:annotations.f:" + databasev1alpha1.RestartedAtAnnotation, "f:spec.f:hibernated", "f:spec.f:paused",
		}), "what the plugin ever wrote to the cluster")

		// Every pod is replaced by one of the new template (the StatefulSet's pod template carries
		// the annotation), and Ready.
		Eventually(func(g Gomega) {
			var pods corev1.PodList
			g.Expect(k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels(dc.SelectorLabels()))).To(Succeed())
			g.Expect(pods.Items).To(HaveLen(3))
			for _, pod := range pods.Items {
				g.Expect(pod.Annotations).To(HaveKeyWithValue(databasev1alpha1.RestartedAtAnnotation, "2026-11-25T12:34:56Z"), pod.Name)
				g.Expect(pod.DeletionTimestamp).To(BeNil(), pod.Name)
				g.Expect(pod.Status.Conditions).To(ContainElement(HaveField("Type", corev1.PodReady)))
				for _, c := range pod.Status.Conditions {
					if c.Type == corev1.PodReady {
						g.Expect(c.Status).To(Equal(corev1.ConditionTrue), pod.Name)
					}
				}
			}
		}).Should(Succeed())
		// The status says the rollout is over (the operator wrote Progressing True with its
		// StatefulSet patch), so Available is no longer the one of before the restart.
		waitCondition(ctx, databasev1alpha1.ConditionProgressing, "False", databasev1alpha1.ReasonRolloutComplete)
		waitCondition(ctx, databasev1alpha1.ConditionAvailable, "True", databasev1alpha1.ReasonAllReplicasReady)
	})

	It("backup --offline without a name creates an Offline DatabaseBackup named after the cluster, which the operator completes", func(ctx SpecContext) {
		code, out, errOut := dbc(ctx, nil, "backup", "orders", "--offline")
		Expect([]any{code, errOut}).To(Equal([]any{0, ""}))
		m := regexp.MustCompile(`^databasebackup/(orders-[a-z0-9]{5}) created \(Offline backup of databasecluster/orders\)\n$`).FindStringSubmatch(out)
		Expect(m).To(HaveLen(2), out)
		b := &databasev1alpha1.DatabaseBackup{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: m[1]}, b)).To(Succeed())
		Expect(b.GenerateName).To(Equal("orders-"))
		Expect(b.Spec).To(Equal(databasev1alpha1.DatabaseBackupSpec{ClusterName: "orders", Method: databasev1alpha1.BackupOffline}))
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
			g.Expect(b.Status.Phase).To(Equal(databasev1alpha1.BackupCompleted), "conditions: %v", b.Status.Conditions)
		}).Should(Succeed())
		waitCondition(ctx, databasev1alpha1.ConditionAvailable, "True", databasev1alpha1.ReasonAllReplicasReady)
	})
})
