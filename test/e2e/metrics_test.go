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
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/test/harness/scrape"
)

// The manager serves its metrics over HTTPS and only to clients whose token the API server
// authenticates and authorizes for GET /metrics, as Prometheus would scrape them with the
// metrics-reader ClusterRole of config/rbac.
var _ = Describe("Secure metrics", Ordered, func() {
	const ns = "e2e-metrics"
	var reader, stranger string

	// tokenOf creates a ServiceAccount and returns a token of it.
	tokenOf := func(ctx SpecContext, name string) string {
		token, err := scrape.Token(ctx, k8s, ns, name)
		Expect(err).NotTo(HaveOccurred())
		return token
	}
	// get GETs /metrics with the token ("" for none) and returns the status code and body;
	// code 0 when the server cannot be reached (it starts a little after the manager is ready).
	get := func(token string) (int, string) {
		code, body, err := scrape.Metrics(context.Background(), fmt.Sprintf("127.0.0.1:%d", metricsPort), token)
		if code == 0 {
			GinkgoWriter.Printf("scraping: %v\n", err)
			return 0, ""
		}
		Expect(err).NotTo(HaveOccurred())
		return code, body
	}

	BeforeAll(func(ctx SpecContext) {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		// A cluster of its own, so that the operator's metrics have something to tell
		// whatever order the specs run in.
		Expect(k8s.Create(ctx, &databasev1alpha1.DatabaseCluster{
			ObjectMeta: metav1.ObjectMeta{Name: "measured", Namespace: ns},
			Spec: databasev1alpha1.DatabaseClusterSpec{
				Replicas:  ptr.To[int32](2),
				Image:     "registry.example/db:1",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}},
				Storage:   databasev1alpha1.StorageSpec{StorageClassName: "standard", Size: "1Gi"},
			},
		})).To(Succeed())
		role := &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "e2e-metrics-reader"},
			Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
		}
		Expect(k8s.Create(ctx, role)).To(Succeed())
		reader, stranger = tokenOf(ctx, "prometheus"), tokenOf(ctx, "stranger")
		Expect(k8s.Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "e2e-metrics-reader"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "prometheus", Namespace: ns}},
		})).To(Succeed())
	})

	It("refuses a client without a token", func() {
		Eventually(func() int { code, _ := get(""); return code }).Should(Equal(http.StatusUnauthorized))
	})

	It("refuses a token not allowed to read metrics", func() {
		Eventually(func() int { code, _ := get(stranger); return code }).Should(Equal(http.StatusForbidden))
	})

	It("serves controller-runtime's and the operator's own metrics to an allowed token", func() {
		Eventually(func(g Gomega) {
			code, body := get(reader)
			g.Expect(code).To(Equal(http.StatusOK))
			g.Expect(body).To(ContainSubstring("controller_runtime_reconcile_total{controller=\"databasecluster\""))
			g.Expect(body).To(ContainSubstring(`database_operator_resource_condition{kind="DatabaseCluster",name="measured",namespace="e2e-metrics",status="true",type="Available"} 1`))
			g.Expect(body).To(ContainSubstring(`database_operator_databasecluster_ready_replicas{name="measured",namespace="e2e-metrics"} 2`))
			g.Expect(body).To(ContainSubstring(`database_operator_databasecluster_replicas{name="measured",namespace="e2e-metrics"} 2`))
		}).Should(Succeed())
	})

	It("serves the storage, backup, conflict and error series of a cluster, and none of it once it is gone", func(ctx SpecContext) {
		b := &databasev1alpha1.DatabaseBackup{
			ObjectMeta: metav1.ObjectMeta{Name: "measured-1", Namespace: ns},
			Spec:       databasev1alpha1.DatabaseBackupSpec{ClusterName: "measured"},
		}
		Expect(k8s.Create(ctx, b)).To(Succeed())
		Eventually(func(g Gomega) databasev1alpha1.BackupPhase {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
			return b.Status.Phase
		}).Should(Equal(databasev1alpha1.BackupCompleted))
		cluster := `{name="measured",namespace="e2e-metrics"}`
		want := map[string]float64{
			"database_operator_databasecluster_storage_requested_bytes" + cluster:                                       1 << 30,
			"database_operator_databasecluster_storage_capacity_bytes" + cluster:                                        1 << 30,
			"database_operator_databasecluster_last_backup_completion_timestamp_seconds" + cluster:                      float64(b.Status.CompletionTime.Unix()),
			"database_operator_databasecluster_last_backup_succeeded" + cluster:                                         1,
			`database_operator_resource_child_conflict{kind="DatabaseCluster",name="measured",namespace="e2e-metrics"}`: 0,
			`database_operator_reconcile_errors_total{kind="DatabaseCluster",reason="conflict"}`:                        -1,
			`database_operator_reconcile_errors_total{kind="DatabaseBackup",reason="other"}`:                            -1,
		}
		Eventually(func(g Gomega) {
			code, body := get(reader)
			g.Expect(code).To(Equal(http.StatusOK))
			for series, value := range want {
				got, found := sample(body, series)
				g.Expect(found).To(BeTrue(), "no series %s", series)
				if value >= 0 { // -1: a counter, only present
					g.Expect(got).To(Equal(value), series)
				}
			}
		}).Should(Succeed())

		By("deleting the cluster; its backup stays, its series go")
		Expect(k8s.Delete(ctx, &databasev1alpha1.DatabaseCluster{ObjectMeta: metav1.ObjectMeta{Name: "measured", Namespace: ns}})).To(Succeed())
		Eventually(func(g Gomega) string {
			code, body := get(reader)
			g.Expect(code).To(Equal(http.StatusOK))
			return body
		}).ShouldNot(ContainSubstring(`name="measured",namespace="e2e-metrics"`))
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
		Expect(k8s.Delete(ctx, b)).To(Succeed())
	})
})

// sample finds the sample of series (name and labels as the text format prints them) in a
// /metrics body.
func sample(body, series string) (float64, bool) {
	for line := range strings.Lines(body) {
		if value, ok := strings.CutPrefix(strings.TrimSpace(line), series+" "); ok {
			f, err := strconv.ParseFloat(value, 64)
			return f, err == nil
		}
	}
	return 0, false
}
