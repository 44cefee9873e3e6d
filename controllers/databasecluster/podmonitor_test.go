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

package databasecluster

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// withMonitoring sets spec.monitoring: the metrics port, path and interval.
func withMonitoring(port int32, path, interval string) clusterOption {
	return func(dc *databasev1alpha1.DatabaseCluster) {
		dc.Spec.Monitoring = &databasev1alpha1.MonitoringSpec{Port: port, Path: path, Interval: interval}
	}
}

// crdMissingMessage is what MonitoringReady says of cluster db while PodMonitors are not served.
const crdMissingMessage = "the API server does not serve monitoring.coreos.com/v1 PodMonitors: install the Prometheus Operator " +
	"(its PodMonitor CRD) and PodMonitor db is created within 1m0s; the pods name the metrics port metrics (9100) meanwhile"

var _ = Describe("PodMonitor", Label("unit"), func() {
	It("builds the whole PodMonitor of spec.monitoring", func() {
		dc := newCluster("db", withMonitoring(9100, "/custom", "30s"))
		parent := testenv.ParentOf(dc, "database")
		Expect(specs.BuildPodMonitor(dc)).To(Equal(&monitoringv1.PodMonitor{
			ObjectMeta: parent.ChildMeta("db"),
			Spec: monitoringv1.PodMonitorSpec{
				Selector:            metav1.LabelSelector{MatchLabels: parent.Selector()},
				PodMetricsEndpoints: []monitoringv1.PodMetricsEndpoint{{Port: ptr.To("metrics"), Path: "/custom", Interval: "30s"}},
			},
		}))
	})

	It("scrapes /metrics at Prometheus's own interval when path and interval are not set", func() {
		Expect(specs.BuildPodMonitor(newCluster("db", withMonitoring(9100, "", ""))).Spec.PodMetricsEndpoints).To(Equal(
			[]monitoringv1.PodMetricsEndpoint{{Port: ptr.To("metrics"), Path: "/metrics"}}))
	})

	DescribeTable("the database container's ports",
		func(dc *databasev1alpha1.DatabaseCluster, want []corev1.ContainerPort) {
			sts, err := specs.BuildStatefulSet(dc, specs.Inputs{})
			Expect(err).NotTo(HaveOccurred())
			Expect(sts.Spec.Template.Spec.Containers[0].Ports).To(Equal(want))
		},
		Entry("without spec.monitoring: the database port alone", newCluster("db"),
			[]corev1.ContainerPort{{Name: "db", ContainerPort: 9000, Protocol: corev1.ProtocolTCP}}),
		Entry("with spec.monitoring: the metrics port named metrics", newCluster("db", withPort(2379), withMonitoring(9100, "", "")),
			[]corev1.ContainerPort{
				{Name: "db", ContainerPort: 2379, Protocol: corev1.ProtocolTCP},
				{Name: "metrics", ContainerPort: 9100, Protocol: corev1.ProtocolTCP},
			}),
	)

	It("rolls the pods when spec.monitoring adds or removes the metrics port", func() {
		without, err := specs.BuildStatefulSet(newCluster("db"), specs.Inputs{})
		Expect(err).NotTo(HaveOccurred())
		with, err := specs.BuildStatefulSet(newCluster("db", withMonitoring(9100, "", "")), specs.Inputs{})
		Expect(err).NotTo(HaveOccurred())
		Expect(templateInSync(with.Spec.Template, without.Spec.Template)).To(BeFalse())
		Expect(templateInSync(without.Spec.Template, with.Spec.Template)).To(BeFalse())
		Expect(templateInSync(with.Spec.Template, with.Spec.Template)).To(BeTrue())
	})

	DescribeTable("podMonitorSpec puts back the selector and the endpoints",
		func(change func(*monitoringv1.PodMonitor)) {
			desired := specs.BuildPodMonitor(newCluster("db", withMonitoring(9100, "", "")))
			observed := desired.DeepCopy()
			Expect(podMonitorSpec.InSync(desired, observed)).To(BeTrue())
			change(observed)
			Expect(podMonitorSpec.InSync(desired, observed)).To(BeFalse())
			podMonitorSpec.Merge(desired, observed)
			Expect(observed.Spec).To(Equal(desired.Spec))
		},
		Entry("a path edited by hand", func(pm *monitoringv1.PodMonitor) { pm.Spec.PodMetricsEndpoints[0].Path = "/other" }),
		Entry("an endpoint added by hand", func(pm *monitoringv1.PodMonitor) {
			pm.Spec.PodMetricsEndpoints = append(pm.Spec.PodMetricsEndpoints, monitoringv1.PodMetricsEndpoint{Port: ptr.To("db")})
		}),
		Entry("a selector widened by hand", func(pm *monitoringv1.PodMonitor) {
			pm.Spec.Selector.MatchLabels = map[string]string{"app.kubernetes.io/name": "database"}
		}),
	)

	DescribeTable("setMonitoringReadyCondition",
		func(dc *databasev1alpha1.DatabaseCluster, obs observation, want []string) {
			conditions := []metav1.Condition{{
				Type: databasev1alpha1.ConditionMonitoringReady, Status: metav1.ConditionTrue,
				Reason: databasev1alpha1.ReasonPodMonitorReady, Message: "before",
			}}
			setMonitoringReadyCondition(&conditions, dc, obs)
			Expect(conditionOf(conditions, databasev1alpha1.ConditionMonitoringReady)).To(Equal(want))
		},
		Entry("no spec.monitoring: no condition", newCluster("db"), observation{}, nil),
		Entry("the phase did not run: kept as it was", newCluster("db", withMonitoring(9100, "", "")),
			observation{podMonitor: podMonitorNotReached},
			[]string{"MonitoringReady", "True", "PodMonitorReady", "before"}),
		Entry("the PodMonitor in place", newCluster("db", withMonitoring(9100, "", "")),
			observation{podMonitor: podMonitorReady},
			[]string{"MonitoringReady", "True", "PodMonitorReady", "PodMonitor db scrapes port metrics (9100) at /metrics on every pod"}),
		Entry("no PodMonitor CRD", newCluster("db", withMonitoring(9100, "", "")),
			observation{podMonitor: podMonitorCRDMissing, monitoringRecheck: time.Minute},
			[]string{"MonitoringReady", "False", "PodMonitorCRDMissing", crdMissingMessage}),
		Entry("the name held by another object", newCluster("db", withMonitoring(9100, "", "")),
			observation{podMonitor: podMonitorFailed, err: fmt.Errorf("wrapped: %w", &child.ConflictError{Kind: "PodMonitor", Name: "db", Holder: "no controller"})},
			[]string{"MonitoringReady", "False", "PodMonitorFailed",
				"wrapped: PodMonitor db exists and is not controlled by this resource (held by no controller): it is left as it is until the name is free"}),
	)

	DescribeTable("withMonitoringRecheck",
		func(obs observation, want time.Duration) {
			withMonitoringRecheck(&obs, time.Minute)
			Expect(obs.recheckAfter).To(Equal(want))
		},
		Entry("no CRD, nothing else waits: a minute", observation{podMonitor: podMonitorCRDMissing}, time.Minute),
		Entry("no CRD, a pod's bound sooner: the bound", observation{podMonitor: podMonitorCRDMissing, recheckAfter: 20 * time.Second}, 20*time.Second),
		Entry("no CRD, a pod's bound later: a minute", observation{podMonitor: podMonitorCRDMissing, recheckAfter: 5 * time.Minute}, time.Minute),
		Entry("the PodMonitor in place: no recheck", observation{podMonitor: podMonitorReady}, time.Duration(0)),
	)

	It("sees no PodMonitor API and nothing watched without a controller", func() {
		var w *podMonitorWatch
		Expect(w.watching()).To(BeFalse())
		Expect(w.served()).To(BeFalse())
	})
})
