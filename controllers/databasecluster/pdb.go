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

	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
)

// pdbSpec is the PodDisruptionBudget's write path: specs.PodDisruptionBudgetInSync decides and
// specs.MergePodDisruptionBudget writes maxUnavailable and the selector.
var pdbSpec = child.Spec[*policyv1.PodDisruptionBudget]{
	InSync: specs.PodDisruptionBudgetInSync,
	Merge:  specs.MergePodDisruptionBudget,
}
