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

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// configMapProblems returns what the API server would refuse in the name and labels of the
// ConfigMap of a VoteConfig called name.
func configMapProblems(name string) []string {
	vc := &VoteConfig{ObjectMeta: metav1.ObjectMeta{Name: name}}
	problems := validation.IsDNS1123Subdomain(vc.ConfigMapName())
	for _, value := range vc.Labels() {
		problems = append(problems, validation.IsValidLabelValue(value)...)
	}
	return problems
}

func TestMaxNameLengthIsTheLongestNameTheConfigMapTakes(t *testing.T) {
	if problems := configMapProblems(strings.Repeat("a", MaxNameLength)); len(problems) > 0 {
		t.Errorf("a name of MaxNameLength (%d) is too long: %v", MaxNameLength, problems)
	}
	if problems := configMapProblems(strings.Repeat("a", MaxNameLength+1)); len(problems) == 0 {
		t.Errorf("a name of MaxNameLength+1 fits: MaxNameLength is too small")
	}
}
