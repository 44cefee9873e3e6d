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

// Package monitoringobjects keeps the operator's own ServiceMonitor and PrometheusRule
// (config/prometheus) in the manager's namespace, controlled by the manager's Deployment, while
// the API server serves the Prometheus Operator's kinds. It is what an OLM install uses instead of
// listing those objects in the bundle: OLM v0.46.0 fails the whole InstallPlan when a bundle
// object's kind is not served (catalog operator.go, apiresourceFromGVK), so a bundle carrying them
// could not be installed on a cluster without the Prometheus Operator. The manager looks again
// every Recheck, so the objects appear once the Prometheus Operator is installed, and are garbage
// collected with the Deployment when the operator is uninstalled.
package monitoringobjects

import (
	"fmt"
	"maps"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/seed1b407122/database-operator/api/labels"
	"github.com/seed1b407122/database-operator/config/prometheus"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
)

// BuildServiceMonitor is config/prometheus/servicemonitor.yaml in owner's namespace, controlled
// by owner (the manager's Deployment).
func BuildServiceMonitor(owner *appsv1.Deployment) (*monitoringv1.ServiceMonitor, error) {
	return fromYAML(prometheus.ServiceMonitor, &monitoringv1.ServiceMonitor{}, "ServiceMonitor", owner)
}

// BuildPrometheusRule is config/prometheus/prometheusrule.yaml in owner's namespace, controlled
// by owner.
func BuildPrometheusRule(owner *appsv1.Deployment) (*monitoringv1.PrometheusRule, error) {
	return fromYAML(prometheus.PrometheusRule, &monitoringv1.PrometheusRule{}, "PrometheusRule", owner)
}

// fromYAML reads the embedded object data (a kind) into obj and gives it the metadata of a
// child of owner: owner's namespace, the controller reference, the operator's labels.
func fromYAML[T client.Object](data []byte, obj T, kind string, owner *appsv1.Deployment) (T, error) {
	if err := yaml.UnmarshalStrict(data, obj); err != nil {
		return obj, fmt.Errorf("reading the embedded %s: %w", kind, err)
	}
	m := child.Meta(owner, appsv1.SchemeGroupVersion.WithKind("Deployment"), obj.GetName(), managedLabels(obj.GetLabels()))
	obj.SetNamespace(m.Namespace)
	obj.SetLabels(m.Labels)
	obj.SetOwnerReferences(m.OwnerReferences)
	return obj, nil
}

// managedLabels are the labels of the YAML with managed-by set to the operator, which writes
// these objects (the YAML says kustomize, which applies them in a "make deploy" install).
func managedLabels(from map[string]string) map[string]string {
	l := maps.Clone(from)
	if l == nil {
		l = map[string]string{}
	}
	l[labels.ManagedBy] = labels.ManagedByValue
	return l
}

// serviceMonitorSpec and prometheusRuleSpec keep the spec as the YAML of this version has it:
// an upgraded operator brings its new alerts.
var (
	serviceMonitorSpec = child.Spec[*monitoringv1.ServiceMonitor]{
		InSync: func(desired, observed *monitoringv1.ServiceMonitor) bool {
			return equality.Semantic.DeepEqual(desired.Spec, observed.Spec)
		},
		Merge: func(desired, observed *monitoringv1.ServiceMonitor) { observed.Spec = desired.Spec },
	}
	prometheusRuleSpec = child.Spec[*monitoringv1.PrometheusRule]{
		InSync: func(desired, observed *monitoringv1.PrometheusRule) bool {
			return equality.Semantic.DeepEqual(desired.Spec, observed.Spec)
		},
		Merge: func(desired, observed *monitoringv1.PrometheusRule) { observed.Spec = desired.Spec },
	}
)
