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
	"fmt"
	"math"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation"
)

// maxOrdinal is the ordinal of the last pod of the largest cluster (spec.replicas is at most 9).
const maxOrdinal = 8

// childProblems returns what the API server would refuse among the names and labels of the
// children of a cluster called name, and of the pods the StatefulSet controller makes.
func childProblems(name string) []string {
	dc := &DatabaseCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	// The StatefulSet controller's revision hash: a 32-bit FNV sum in decimal digits, each mapped
	// to one character; the largest sum has the most digits.
	longestHash := rand.SafeEncodeString(fmt.Sprint(uint32(math.MaxUint32)))
	var problems []string
	check := func(what string, errs []string) {
		for _, err := range errs {
			problems = append(problems, what+": "+err)
		}
	}
	check("StatefulSet", validation.IsDNS1123Label(dc.StatefulSetName()))
	check("client Service", validation.IsDNS1035Label(dc.ClientServiceName()))
	check("headless Service", validation.IsDNS1035Label(dc.HeadlessServiceName()))
	check("PodDisruptionBudget", validation.IsDNS1123Subdomain(dc.PodDisruptionBudgetName()))
	check("label controller-revision-hash", validation.IsValidLabelValue(dc.StatefulSetName()+"-"+longestHash))
	for key, value := range dc.Labels() {
		check("label "+key, validation.IsValidLabelValue(value))
	}
	for ordinal := int32(0); ordinal <= maxOrdinal; ordinal++ {
		pod := fmt.Sprintf("%s-%d", dc.StatefulSetName(), ordinal)
		check("pod hostname", validation.IsDNS1123Label(pod))
		check("label statefulset.kubernetes.io/pod-name", validation.IsValidLabelValue(pod))
		check("claim", validation.IsDNS1123Subdomain(dc.ClaimName(ordinal)))
	}
	return problems
}

func TestMaxNameLengthIsTheLongestNameEveryChildTakes(t *testing.T) {
	if problems := childProblems(strings.Repeat("a", MaxNameLength)); len(problems) > 0 {
		t.Errorf("a name of MaxNameLength (%d) is too long: %v", MaxNameLength, problems)
	}
	if problems := childProblems(strings.Repeat("a", MaxNameLength+1)); len(problems) == 0 {
		t.Errorf("a name of MaxNameLength+1 (%d) fits every child: MaxNameLength is too small", MaxNameLength+1)
	}
}
