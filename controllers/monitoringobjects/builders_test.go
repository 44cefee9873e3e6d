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

package monitoringobjects

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// operatorDeployment is the manager's Deployment as OLM names it, in namespace ns.
func operatorDeployment(ns string) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "database-operator-controller-manager", Namespace: ns, UID: types.UID("d-1")}}
}

var _ = Describe("Builders", Label("unit"), func() {
	ownedBy := []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "database-operator-controller-manager",
		UID: "d-1", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	wantLabels := map[string]string{"app.kubernetes.io/name": "database-operator", "app.kubernetes.io/component": "manager",
		"app.kubernetes.io/managed-by": "database-operator"}

	It("BuildServiceMonitor: config/prometheus's ServiceMonitor in the Deployment's namespace, controlled by it", func() {
		sm, err := BuildServiceMonitor(operatorDeployment("operators"))
		Expect(err).NotTo(HaveOccurred())
		Expect(sm.ObjectMeta).To(Equal(metav1.ObjectMeta{Name: "database-operator-controller-manager-metrics-monitor",
			Namespace: "operators", Labels: wantLabels, OwnerReferences: ownedBy}))
		Expect(sm.Spec.JobLabel).To(Equal("app.kubernetes.io/name"))
		Expect(sm.Spec.Selector.MatchLabels).To(Equal(map[string]string{"app.kubernetes.io/name": "database-operator", "app.kubernetes.io/component": "manager"}))
		Expect(sm.Spec.Endpoints).To(HaveLen(1))
		ep := sm.Spec.Endpoints[0]
		Expect([]any{ep.Port, ep.Path, ep.Scheme, ep.HonorLabels}).To(Equal([]any{"https", "/metrics", "https", true}))
	})

	It("BuildPrometheusRule: config/prometheus's alerts in the Deployment's namespace, controlled by it", func() {
		rule, err := BuildPrometheusRule(operatorDeployment("operators"))
		Expect(err).NotTo(HaveOccurred())
		Expect(rule.ObjectMeta).To(Equal(metav1.ObjectMeta{Name: "database-operator", Namespace: "operators", Labels: wantLabels, OwnerReferences: ownedBy}))
		var alerts []string
		for _, g := range rule.Spec.Groups {
			for _, r := range g.Rules {
				alerts = append(alerts, r.Alert)
			}
		}
		Expect(alerts).To(ContainElements("DatabaseClusterNotAvailable", "DatabaseClusterMemberNotReady", "DatabaseOperatorDown"))
	})
})
