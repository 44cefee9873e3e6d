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

package specs

import (
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// BuildPodMonitor returns the PodMonitor that has Prometheus scrape the metrics port of every pod
// of dc (selected by the operator's labels, in dc's namespace) at spec.monitoring.path. dc must
// have spec.monitoring.
func BuildPodMonitor(dc *databasev1alpha1.DatabaseCluster) *monitoringv1.PodMonitor {
	return &monitoringv1.PodMonitor{
		ObjectMeta: ChildMeta(dc, dc.PodMonitorName()),
		Spec: monitoringv1.PodMonitorSpec{
			Selector: metav1.LabelSelector{MatchLabels: dc.SelectorLabels()},
			PodMetricsEndpoints: []monitoringv1.PodMetricsEndpoint{{
				Port:     ptr.To(databasev1alpha1.MetricsPortName),
				Path:     dc.MetricsPath(),
				Interval: monitoringv1.Duration(dc.Spec.Monitoring.Interval),
			}},
		},
	}
}

// PodMonitorInSync says whether observed has desired's selector and exactly its endpoints: an
// endpoint added by hand is a difference, as it would scrape what the spec does not ask for.
func PodMonitorInSync(desired, observed *monitoringv1.PodMonitor) bool {
	return equality.Semantic.DeepEqual(desired.Spec.Selector, observed.Spec.Selector) &&
		equality.Semantic.DeepEqual(desired.Spec.PodMetricsEndpoints, observed.Spec.PodMetricsEndpoints)
}

// MergePodMonitor writes desired's selector and endpoints into observed.
func MergePodMonitor(desired, observed *monitoringv1.PodMonitor) {
	observed.Spec.Selector = desired.Spec.Selector
	observed.Spec.PodMetricsEndpoints = desired.Spec.PodMetricsEndpoints
}
