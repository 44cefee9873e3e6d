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
	"strings"
	"testing"
)

func TestExtractWritesTheGroups(t *testing.T) {
	in := `apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: database-operator
spec:
  groups:
  - name: g
    rules:
    - alert: A
      expr: up == 0
      for: 5m
`
	got, err := extract([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := `groups:
- name: g
  rules:
  - alert: A
    expr: up == 0
    for: 5m
`
	if string(got) != want {
		t.Errorf("extract:\n%s\nwant:\n%s", got, want)
	}
}

func TestExtractRefuses(t *testing.T) {
	for name, in := range map[string]string{
		"another kind":  "apiVersion: v1\nkind: ConfigMap\n",
		"no groups":     "apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nspec: {}\n",
		"not YAML":      "apiVersion: [\n",
		"another group": "apiVersion: example.com/v1\nkind: PrometheusRule\nspec:\n  groups: [{name: g}]\n",
	} {
		if _, err := extract([]byte(in)); err == nil || strings.TrimSpace(err.Error()) == "" {
			t.Errorf("%s: want an error, got %v", name, err)
		}
	}
}
