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

// MaxNameLength is the longest name of a VoteConfig, for which the CRD's rule on metadata.name
// says the same number (markers take no constants; the admission corpus creates a name of this
// length and one character more to hold the two together). The ConfigMap NAME-config may be up
// to 253 long (a DNS subdomain), but it carries the label app.kubernetes.io/instance=NAME, and a
// label value is at most 63.
const MaxNameLength = 63
