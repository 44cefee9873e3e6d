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
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
)

// BuildPodDisruptionBudget returns the PodDisruptionBudget that lets voluntary disruptions (node
// drains) take at most one database pod at a time.
func BuildPodDisruptionBudget(dc *databasev1alpha1.DatabaseCluster) *policyv1.PodDisruptionBudget {
	maxUnavailable := intstr.FromInt32(1)
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: specs.ChildMeta(dc, dc.PodDisruptionBudgetName()),
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: &maxUnavailable,
			Selector:       &metav1.LabelSelector{MatchLabels: dc.SelectorLabels()},
		},
	}
}

// pdbSpec keeps maxUnavailable and the selector of the PodDisruptionBudget.
var pdbSpec = child.Spec[*policyv1.PodDisruptionBudget]{
	InSync: func(desired, observed *policyv1.PodDisruptionBudget) bool {
		return equality.Semantic.DeepEqual(desired.Spec.MaxUnavailable, observed.Spec.MaxUnavailable) &&
			observed.Spec.MinAvailable == nil &&
			equality.Semantic.DeepEqual(desired.Spec.Selector, observed.Spec.Selector)
	},
	Merge: func(desired, observed *policyv1.PodDisruptionBudget) {
		observed.Spec.MaxUnavailable = desired.Spec.MaxUnavailable
		observed.Spec.MinAvailable = nil
		observed.Spec.Selector = desired.Spec.Selector
	},
}
