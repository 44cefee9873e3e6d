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

// Package admission holds the admission corpus of the operator's four kinds and the envtest
// suite that replays it against a real kube-apiserver with the generated CRDs: every spec under
// testdata/refused must be refused with the message fragment it names, every spec under
// testdata/admitted must be stored. The rules themselves are markers on the API types
// (api/<group>/v1alpha1); this package has no code of its own.
//
// A corpus file is one YAML object, or two: the first is created (and must be admitted) and the
// second is then sent as a merge patch, for rules on changes such as a storage size that
// shrinks. Its header comments say what is expected:
//
//	# want: <fragment of the API server's error>     (refused)
//	# want: admitted                                  (admitted)
//	# condition: <type> <status> <reason> <message fragment>   (admitted, then reported by the controller)
//
// Other comment lines say why the spec can never work.
package admission
