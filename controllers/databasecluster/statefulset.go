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
	appsv1 "k8s.io/api/apps/v1"

	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
)

// statefulSetSpec is the StatefulSet's write path: specs.DiffStatefulSet decides, and
// specs.MergeStatefulSet writes, under the resourceVersion's lock so that the generation it
// records is the one its patch makes. Selector, serviceName, podManagementPolicy and
// volumeClaimTemplates are immutable: they are set on create only and never sent again.
var statefulSetSpec = child.Spec[*appsv1.StatefulSet]{
	InSync: func(desired, observed *appsv1.StatefulSet) bool {
		return specs.DiffStatefulSet(desired, observed).InSync()
	},
	Merge:          specs.MergeStatefulSet,
	OwnAnnotations: specs.OwnAnnotations,
	OptimisticLock: true,
}
