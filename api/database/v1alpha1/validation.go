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

package v1alpha1

// MaxNameLength is the longest metadata.name of a DatabaseCluster that keeps the name of every
// child, and every label its children and their pods carry, within the API server's limits. The
// CRD's rule on metadata.name says the same number (markers take no constants; the admission
// corpus creates a name of this length and one of MaxNameLength+1 to hold the two together).
//
// The tightest limit is the label controller-revision-hash that the StatefulSet controller puts
// on every pod: the name of the pod's ControllerRevision, "<StatefulSet name>-<hash>". The
// StatefulSet is named NAME and the hash is a 32-bit FNV sum written as up to 10 characters
// (4294967295 has 10 digits, each mapped to one character), and a label value is at most 63:
//
//	63 - len("-") - 10 = 52
//
// Every other child leaves more room:
//   - headless Service NAME-headless, a DNS-1035 label of at most 63, also every pod's subdomain: 63 - 9 = 54
//   - pods NAME-<ordinal>, ordinals 0 to 8 (at most 9 replicas), hostnames of at most 63: 63 - 2 = 61
//   - label statefulset.kubernetes.io/pod-name = NAME-<ordinal>, at most 63: 61
//   - client Service, StatefulSet and PodDisruptionBudget NAME, labels app.kubernetes.io/instance = NAME: 63
//   - claims data-NAME-<ordinal>, DNS subdomains of at most 253: 253 - 7 = 246
const MaxNameLength = 52
