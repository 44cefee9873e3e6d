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
	"context"
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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

const (
	// deploymentName is the manager's Deployment as the bundle names it.
	deploymentName = "database-operator-controller-manager"
	// recheck is short in these specs so that a change is seen within Eventually's timeout.
	recheck = 200 * time.Millisecond
)

// namespaces are the two operator namespaces of the specs: in "operators" the names are free,
// in "taken" someone else's ServiceMonitor holds the name before the Deployment exists.
var namespaces = []string{"operators", "taken"}

// setupInstallers adds an Installer per namespace to the manager, as main.go does for its own.
func setupInstallers(mgr ctrl.Manager) error {
	direct, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return err
	}
	deps := testenv.ReconcilerBase(mgr)
	for _, ns := range namespaces {
		if err := mgr.Add(&Installer{Client: direct, Mapper: mgr.GetRESTMapper(), Recorder: deps.Recorder,
			Namespace: ns, Deployment: deploymentName, Recheck: recheck}); err != nil {
			return err
		}
	}
	return nil
}

var _ = Describe("Installer", Ordered, Label("integration"), func() {
	env := testenv.StartInBeforeAll(setupInstallers)
	var deployment *appsv1.Deployment

	It("keeps running while the Prometheus Operator's kinds are not served", func(ctx context.Context) {
		for _, ns := range namespaces {
			Expect(env.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		}
		deployment = newDeployment("operators")
		Expect(env.Create(ctx, deployment)).To(Succeed())
		var pods corev1.PodList
		Consistently(func() error { return env.List(ctx, &pods) }, "1s").Should(Succeed(), "the manager keeps serving")
	})

	It("creates the ServiceMonitor and PrometheusRule once their CRDs are served, controlled by the Deployment", func(ctx context.Context) {
		installCRDs(ctx, env)
		sm, rule := built(deployment)
		Eventually(func(g Gomega) {
			got := &monitoringv1.ServiceMonitor{}
			g.Expect(env.Get(ctx, client.ObjectKeyFromObject(sm), got)).To(Succeed())
			g.Expect([]any{got.Labels, got.OwnerReferences, got.Spec}).To(Equal([]any{sm.Labels, sm.OwnerReferences, sm.Spec}))
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			got := &monitoringv1.PrometheusRule{}
			g.Expect(env.Get(ctx, client.ObjectKeyFromObject(rule), got)).To(Succeed())
			g.Expect([]any{got.Labels, got.OwnerReferences, got.Spec}).To(Equal([]any{rule.Labels, rule.OwnerReferences, rule.Spec}))
		}).Should(Succeed())

		By("writing nothing more while both are as built")
		versions := func(g Gomega) []string {
			gotSM, gotRule := &monitoringv1.ServiceMonitor{}, &monitoringv1.PrometheusRule{}
			g.Expect(env.Get(ctx, client.ObjectKeyFromObject(sm), gotSM)).To(Succeed())
			g.Expect(env.Get(ctx, client.ObjectKeyFromObject(rule), gotRule)).To(Succeed())
			return []string{gotSM.ResourceVersion, gotRule.ResourceVersion}
		}
		before := versions(Default)
		Consistently(versions, "1s").Should(Equal(before))
	})

	It("puts back a PrometheusRule whose alerts were changed", func(ctx context.Context) {
		_, rule := built(deployment)
		got := &monitoringv1.PrometheusRule{}
		Expect(env.Get(ctx, client.ObjectKeyFromObject(rule), got)).To(Succeed())
		patched := got.DeepCopy()
		patched.Spec.Groups = patched.Spec.Groups[:1]
		Expect(env.Patch(ctx, patched, client.MergeFrom(got))).To(Succeed())
		Eventually(func(g Gomega) monitoringv1.PrometheusRuleSpec {
			g.Expect(env.Get(ctx, client.ObjectKeyFromObject(rule), got)).To(Succeed())
			return got.Spec
		}).Should(Equal(rule.Spec))
	})

	It("leaves a ServiceMonitor of that name it does not control exactly as it is, and says so on the Deployment", func(ctx context.Context) {
		theirs := &monitoringv1.ServiceMonitor{
			ObjectMeta: metav1.ObjectMeta{Name: "database-operator-controller-manager-metrics-monitor", Namespace: "taken"},
			Spec: monitoringv1.ServiceMonitorSpec{Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "theirs"}},
				Endpoints: []monitoringv1.Endpoint{{Port: "web"}}},
		}
		Expect(env.Create(ctx, theirs)).To(Succeed())
		owner := newDeployment("taken")
		Expect(env.Create(ctx, owner)).To(Succeed())

		_, rule := built(owner)
		Eventually(func() error { return env.Get(ctx, client.ObjectKeyFromObject(rule), &monitoringv1.PrometheusRule{}) }).
			Should(Succeed(), "the free name is taken")
		Eventually(func(g Gomega) []string {
			var list eventsv1.EventList
			g.Expect(env.List(ctx, &list, client.InNamespace("taken"))).To(Succeed())
			var out []string
			for _, ev := range list.Items {
				if ev.Regarding.Kind == "Deployment" && ev.Regarding.Name == deploymentName {
					out = append(out, ev.Type+" "+ev.Reason+": "+ev.Note)
				}
			}
			return out
		}).Should(ConsistOf("Warning " + EventConflict + ": ServiceMonitor database-operator-controller-manager-metrics-monitor exists and is not controlled by this resource (held by no controller): it is left as it is until the name is free"))
		Consistently(func(g Gomega) *monitoringv1.ServiceMonitor {
			got := &monitoringv1.ServiceMonitor{}
			g.Expect(env.Get(ctx, client.ObjectKeyFromObject(theirs), got)).To(Succeed())
			return got
		}, "1s").Should(And(HaveField("ResourceVersion", theirs.ResourceVersion), HaveField("OwnerReferences", BeEmpty())))
	})
})

// newDeployment is the manager's Deployment in ns (envtest runs no pods: only the object matters).
func newDeployment(ns string) *appsv1.Deployment {
	selector := map[string]string{"app.kubernetes.io/name": "database-operator"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: deploymentName, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: selector},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: "database-operator:0.3.0"}}},
			},
		},
	}
}

// built are the objects the builders make for owner.
func built(owner *appsv1.Deployment) (*monitoringv1.ServiceMonitor, *monitoringv1.PrometheusRule) {
	GinkgoHelper()
	sm, err := BuildServiceMonitor(owner)
	Expect(err).NotTo(HaveOccurred())
	rule, err := BuildPrometheusRule(owner)
	Expect(err).NotTo(HaveOccurred())
	return sm, rule
}

// installCRDs installs the Prometheus Operator's ServiceMonitor and PrometheusRule CRDs
// (testdata/crds, v0.85.0) and waits until both are Established.
func installCRDs(ctx context.Context, env *testenv.Env) {
	GinkgoHelper()
	for _, kind := range []string{"servicemonitors", "prometheusrules"} {
		data, err := os.ReadFile(filepath.Join("testdata", "crds", "monitoring.coreos.com_"+kind+".yaml"))
		Expect(err).NotTo(HaveOccurred())
		crd := &apiextensionsv1.CustomResourceDefinition{}
		Expect(yaml.UnmarshalStrict(data, crd)).To(Succeed())
		Expect(env.Create(ctx, crd)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(env.Get(ctx, client.ObjectKeyFromObject(crd), crd)).To(Succeed())
			g.Expect(crd.Status.Conditions).To(ContainElement(And(
				HaveField("Type", apiextensionsv1.Established), HaveField("Status", apiextensionsv1.ConditionTrue))))
		}).Should(Succeed())
	}
}
