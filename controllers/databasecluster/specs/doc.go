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

// Package specs is the pure layer of the DatabaseCluster controller: what the children should
// be, and whether the live ones differ. Every function takes values and returns values: no
// client, no clock, no logging, no Reconciler. The phases (package databasecluster) resolve the
// inputs by reading the API, call BuildStatefulSet once with all of them, and write its output
// as it is; DiffStatefulSet alone decides whether the live StatefulSet must be patched, and why.
// The other children are built from dc alone (BuildHeadlessService, BuildClientService,
// BuildPodDisruptionBudget, BuildPodMonitor, BuildConfigMap); the rules that say whether a live
// one is in sync and what a patch writes into it (ServiceInSync and MergeService, and so on) are
// here too, and the phases' write path (child.Spec) only wires them.
//
// make verify's layout rule (hack/check-layout.sh) fails when this package depends on
// controller-runtime's client or on client-go.
package specs
