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

package main

import (
	"slices"
	"testing"
)

func TestSetupMonitoringObjectsNeedsTheNamespace(t *testing.T) {
	t.Setenv(podNamespaceEnv, "")
	if err := setupMonitoringObjects(nil, nil, options{}); err != nil {
		t.Fatalf("without --monitoring-objects: %v, want nil (nothing set up)", err)
	}
	err := setupMonitoringObjects(nil, nil, options{monitoringObjects: true})
	want := "--monitoring-objects needs POD_NAMESPACE, the manager's namespace (the downward API's metadata.namespace)"
	if err == nil || err.Error() != want {
		t.Fatalf("--monitoring-objects without POD_NAMESPACE: %v, want %q", err, want)
	}
}

// TestSelectControllers: --controllers keeps the known names it lists, and refuses an unknown
// name or a list that selects nothing.
func TestSelectControllers(t *testing.T) {
	got, err := selectControllers(" echo,,voteconfig ")
	if err != nil || !slices.Equal(got, []string{"echo", "voteconfig"}) {
		t.Fatalf("selectControllers = %q, %v; want [echo voteconfig]", got, err)
	}
	for _, list := range []string{"", " , ", "echo,mysql"} {
		if _, err := selectControllers(list); err == nil {
			t.Errorf("selectControllers(%q): no error", list)
		}
	}
}
