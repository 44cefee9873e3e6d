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
	corev1 "k8s.io/api/core/v1"

	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
)

// serviceSpec is the Services' write path: specs.ServiceInSync decides and specs.MergeService
// writes the ports, selector, type and load balancer settings of a Service, and the labels and
// annotations spec.service gave it. clusterIP is immutable once allocated and is only ever set on
// create; node ports the API server allocated are kept (a port sent without one keeps the one it
// had).
var serviceSpec = child.Spec[*corev1.Service]{
	InSync: specs.ServiceInSync,
	Merge:  specs.MergeService,
}
