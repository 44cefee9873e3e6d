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

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

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
})
