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
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// BuildPodDisruptionBudget returns the PodDisruptionBudget that lets voluntary disruptions (node
// drains) take at most one database pod at a time.
func BuildPodDisruptionBudget(dc *databasev1alpha1.DatabaseCluster) *policyv1.PodDisruptionBudget {
	maxUnavailable := intstr.FromInt32(1)
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: ChildMeta(dc, dc.PodDisruptionBudgetName()),
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: &maxUnavailable,
			Selector:       &metav1.LabelSelector{MatchLabels: dc.SelectorLabels()},
		},
	}
}

// PodDisruptionBudgetInSync says whether observed has desired's maxUnavailable and selector, and
// no minAvailable.
func PodDisruptionBudgetInSync(desired, observed *policyv1.PodDisruptionBudget) bool {
	return equality.Semantic.DeepEqual(desired.Spec.MaxUnavailable, observed.Spec.MaxUnavailable) &&
		observed.Spec.MinAvailable == nil &&
		equality.Semantic.DeepEqual(desired.Spec.Selector, observed.Spec.Selector)
}

// MergePodDisruptionBudget writes desired's maxUnavailable and selector into observed and
// removes a minAvailable (the API refuses both set).
func MergePodDisruptionBudget(desired, observed *policyv1.PodDisruptionBudget) {
	observed.Spec.MaxUnavailable = desired.Spec.MaxUnavailable
	observed.Spec.MinAvailable = nil
	observed.Spec.Selector = desired.Spec.Selector
}
