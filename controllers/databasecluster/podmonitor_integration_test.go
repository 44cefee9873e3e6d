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
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// podMonitorCRD is the Prometheus Operator's PodMonitor CRD (testdata/crds, v0.85.0).
func podMonitorCRD() *apiextensionsv1.CustomResourceDefinition {
	data, err := os.ReadFile(filepath.Join("testdata", "crds", "monitoring.coreos.com_podmonitors.yaml"))
	Expect(err).NotTo(HaveOccurred())
	crd := &apiextensionsv1.CustomResourceDefinition{}
	Expect(yaml.UnmarshalStrict(data, crd)).To(Succeed())
	return crd
}

// someonesPodMonitor is a PodMonitor "db" someone else made, scraping someone else's pods.
func someonesPodMonitor() client.Object {
	return &monitoringv1.PodMonitor{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: monitoringv1.PodMonitorSpec{
			Selector:            metav1.LabelSelector{MatchLabels: someonesSelector},
			PodMetricsEndpoints: []monitoringv1.PodMetricsEndpoint{{Port: ptr.To("web")}},
		},
	}
}

// monitoringRecheck is short in these specs so that the periodic look for the PodMonitor API
// finds the CRD installed mid-suite within seconds.
const monitoringRecheck = 2 * time.Second

// spec.monitoring against a real API server: first without the Prometheus Operator's CRD (the
// envtest starts with the operator's CRDs only), then with it installed while the manager runs.
var _ = Describe("DatabaseCluster spec.monitoring", Ordered, Label("integration"), func() {
	k8s := testenv.StartInBeforeAll(func(mgr ctrl.Manager) error {
		return (&Reconciler{ReconcilerBase: testenv.ReconcilerBase(mgr), PodReadyTimeout: podReadyTimeout, MonitoringRecheck: monitoringRecheck}).SetupWithManager(mgr)
	})
	clusters := testenv.Kind[*databasev1alpha1.DatabaseCluster, *appsv1.StatefulSet]{
		Env: k8s, Name: "DatabaseCluster", ChildName: (*databasev1alpha1.DatabaseCluster).StatefulSetName,
	}
	var ns string
	var dc *databasev1alpha1.DatabaseCluster
	BeforeAll(func(ctx SpecContext) { ns = k8s.Namespace(ctx, "mon-") })

	// crdMissingEvents counts the PodMonitorCRDMissing events about dc.
	crdMissingEvents := func(ctx SpecContext) func(g Gomega) []string {
		return k8s.EventsAbout(ctx, "DatabaseCluster", dc, func(e eventsv1.Event) string {
			if e.Reason != databasev1alpha1.ReasonPodMonitorCRDMissing {
				return ""
			}
			return testenv.TypeReasonNote(e)
		})
	}
	// poke changes an annotation of dc, which makes the controller reconcile it.
	poke := func(ctx SpecContext, value string) {
		clusters.Update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) {
			dc.Annotations = map[string]string{"test.seed1b407122.io/poke": value}
		})
	}
	podMonitor := func(ctx SpecContext) func(g Gomega) *monitoringv1.PodMonitor {
		return testenv.Read[*monitoringv1.PodMonitor](ctx, k8s, client.ObjectKey{Namespace: ns, Name: "db"})
	}

	DescribeTable("rejects an invalid spec.monitoring with a message a user understands", func(ctx SpecContext, obj *databasev1alpha1.DatabaseCluster, message string) {
		obj.Namespace = ns
		k8s.ExpectCreateRefused(ctx, obj, message)
	},
		Entry("the database port", newCluster("same", withPort(2379), withMonitoring(2379, "", "")),
			"spec.monitoring.port: Invalid value: monitoring.port must differ from spec.port: the database port is named db and the metrics port metrics, and a container cannot declare one port twice"),
		Entry("the default database port", newCluster("samedefault", withMonitoring(9000, "", "")),
			"monitoring.port must differ from spec.port"),
		Entry("port 0", newCluster("zero", withMonitoring(0, "", "")),
			"spec.monitoring.port: Invalid value: 0: spec.monitoring.port in body should be greater than or equal to 1"),
		Entry("port 65536", newCluster("big", withMonitoring(65536, "", "")),
			"spec.monitoring.port: Invalid value: 65536: spec.monitoring.port in body should be less than or equal to 65535"),
		Entry("a path without /", newCluster("path", withMonitoring(9100, "metrics", "")),
			"spec.monitoring.path: Invalid value: \"metrics\": path must start with '/': it is the HTTP path Prometheus requests on the metrics port, e.g. /metrics"),
		Entry("an interval that is no Prometheus duration", newCluster("interval", withMonitoring(9100, "", "30 seconds")),
			"spec.monitoring.interval: Invalid value: \"30 seconds\": interval must be a Prometheus duration such as 30s, 1m or 1m30s (units ms, s, m, h, d, w, y)"),
	)

	It("defaults the path to /metrics", func(ctx SpecContext) {
		defaulted := newCluster("defaulted", withNamespace(ns), withMonitoring(9100, "", ""))
		Expect(k8s.Create(ctx, defaulted, client.DryRunAll)).To(Succeed())
		Expect(defaulted.Spec.Monitoring).To(Equal(&databasev1alpha1.MonitoringSpec{Port: 9100, Path: "/metrics"}))
	})

	It("without the PodMonitor CRD: names the port, says why there is no PodMonitor once, looks again, and runs on", func(ctx SpecContext) {
		dc = newCluster("db", withNamespace(ns), withPort(2379), withMonitoring(9100, "", "15s"))
		sts := clusters.Create(ctx, dc)
		Expect(sts.Spec.Template.Spec.Containers[0].Ports).To(Equal([]corev1.ContainerPort{
			{Name: "db", ContainerPort: 2379, Protocol: corev1.ProtocolTCP},
			{Name: "metrics", ContainerPort: 9100, Protocol: corev1.ProtocolTCP},
		}))
		message := "the API server does not serve monitoring.coreos.com/v1 PodMonitors: install the Prometheus Operator (its PodMonitor CRD) " +
			"and PodMonitor db is created within 2s; the pods name the metrics port metrics (9100) meanwhile"
		Eventually(k8s.Condition(ctx, dc, "MonitoringReady")).Should(Equal([]string{"False", "PodMonitorCRDMissing", message}))
		Eventually(k8s.Condition(ctx, dc, "Degraded")).Should(Equal([]string{"False", "AsExpected", "every child is as specified"}))
		Eventually(crdMissingEvents(ctx)).Should(ContainElement("Warning PodMonitorCRDMissing: " + message))

		By("further reconciles (a change, the rechecks) tell it no second time")
		poke(ctx, "1")
		Consistently(func(g Gomega) int {
			n := 0
			for _, line := range crdMissingEvents(ctx)(g) {
				if line != "" {
					n++
				}
			}
			return n
		}, 3*monitoringRecheck).Should(Equal(1))

		By("a cluster without spec.monitoring has no MonitoringReady condition")
		plain := newCluster("plain", withNamespace(ns))
		clusters.Create(ctx, plain)
		Eventually(k8s.Condition(ctx, plain, "Available")).Should(HaveLen(3))
		Expect(clusters.Current(ctx, plain)(Default).Status.Conditions).NotTo(ContainElement(HaveField("Type", "MonitoringReady")))
	})

	It("creates the exact PodMonitor at the next recheck once the CRD is installed", func(ctx SpecContext) {
		crd := podMonitorCRD()
		// Installed for the rest of the container; the API server and etcd go with the suite.
		Expect(k8s.Create(ctx, crd)).To(Succeed())
		Eventually(func(g Gomega) {
			got := &apiextensionsv1.CustomResourceDefinition{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(crd), got)).To(Succeed())
			g.Expect(got.Status.Conditions).To(ContainElement(And(
				HaveField("Type", apiextensionsv1.Established), HaveField("Status", apiextensionsv1.ConditionTrue))))
		}).Should(Succeed())

		// Nothing changes the cluster: the periodic recheck finds the API.
		installed := time.Now()
		var pm *monitoringv1.PodMonitor
		Eventually(func(g Gomega) { pm = podMonitor(ctx)(g) }).Should(Succeed())
		AddReportEntry("PodMonitor created after the CRD was established", time.Since(installed).String())
		parent := testenv.ParentOf(clusters.Current(ctx, dc)(Default), "database")
		Expect(pm.OwnerReferences).To(Equal(parent.OwnerReferences()))
		Expect(pm.Labels).To(Equal(parent.Labels()))
		Expect(pm.Spec).To(Equal(monitoringv1.PodMonitorSpec{
			Selector:            metav1.LabelSelector{MatchLabels: parent.Selector()},
			PodMetricsEndpoints: []monitoringv1.PodMetricsEndpoint{{Port: ptr.To("metrics"), Path: "/metrics", Interval: "15s"}},
		}))
		Eventually(k8s.Condition(ctx, dc, "MonitoringReady")).Should(Equal([]string{"True", "PodMonitorReady",
			"PodMonitor db scrapes port metrics (9100) at /metrics on every pod"}))
		Eventually(k8s.EventsAbout(ctx, "DatabaseCluster", dc, testenv.TypeReasonNote)).Should(ContainElement("Normal Created: Created PodMonitor db"))

		By("an edit by hand is put back")
		edited := pm.DeepCopy()
		edited.Spec.PodMetricsEndpoints[0].Path = "/other"
		Expect(k8s.Patch(ctx, edited, client.MergeFrom(pm))).To(Succeed())
		Eventually(func(g Gomega) string { return podMonitor(ctx)(g).Spec.PodMetricsEndpoints[0].Path }).Should(Equal("/metrics"))
		k8s.ExpectQuiet(ctx, pm)
	})

	It("deletes its PodMonitor, the condition and the port when spec.monitoring is removed", func(ctx SpecContext) {
		clusters.Update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Monitoring = nil })
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, &monitoringv1.PodMonitor{}))
		}).Should(BeTrue())
		Eventually(func(g Gomega) []corev1.ContainerPort {
			return clusters.Child(ctx, dc)(g).Spec.Template.Spec.Containers[0].Ports
		}).Should(Equal([]corev1.ContainerPort{{Name: "db", ContainerPort: 2379, Protocol: corev1.ProtocolTCP}}))
		Eventually(func(g Gomega) []metav1.Condition { return clusters.Current(ctx, dc)(g).Status.Conditions }).
			ShouldNot(ContainElement(HaveField("Type", "MonitoringReady")))
		Eventually(k8s.EventsAbout(ctx, "DatabaseCluster", dc, testenv.TypeReasonNote)).Should(ContainElement("Normal Removed: Deleted PodMonitor db"))
	})

	for _, holder := range testenv.Holders {
		It("leaves a PodMonitor db held by "+string(holder)+" as it is, reports it, and takes the name once it is free", func(ctx SpecContext) {
			own := k8s.Namespace(ctx, "mon-own-")
			held := someonesPodMonitor()
			held.SetNamespace(own)
			held.SetLabels(map[string]string{"made-by": "hand"})
			took := testenv.ExpectOwnershipRule(ctx, k8s, testenv.OwnershipCase{
				Resource: newCluster("db", withNamespace(own), withMonitoring(9100, "", "")),
				Child:    held, Kind: "PodMonitor", Holder: holder,
			})
			AddReportEntry("recovered after the holder was deleted", took.String())
		})
	}
})
