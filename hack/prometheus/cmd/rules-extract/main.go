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

// Command rules-extract writes the rule groups of a PrometheusRule (its spec) as a plain
// Prometheus rules file, the input of "promtool check rules" and of the rule_files of
// "promtool test rules".
//
//	rules-extract -o bin/prometheus/database-operator.rules.yaml config/prometheus/prometheusrule.yaml
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// prometheusRule is the part of a monitoring.coreos.com/v1 PrometheusRule this command reads.
// The groups are kept as they are: promtool, not this command, checks them.
type prometheusRule struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Spec       struct {
		Groups []any `json:"groups"`
	} `json:"spec"`
}

func main() {
	out := flag.String("o", "", "rules file to write (default: standard output)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: rules-extract [-o RULES_FILE] PROMETHEUSRULE_YAML")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *out); err != nil {
		fmt.Fprintln(os.Stderr, "rules-extract:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	data, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	rules, err := extract(data)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	if out == "" {
		_, err = os.Stdout.Write(rules)
		return err
	}
	return os.WriteFile(out, rules, 0o644)
}

// extract returns the groups of the PrometheusRule in data as a rules file ("groups: ...").
func extract(data []byte) ([]byte, error) {
	var pr prometheusRule
	if err := yaml.Unmarshal(data, &pr); err != nil {
		return nil, err
	}
	if pr.APIVersion != "monitoring.coreos.com/v1" || pr.Kind != "PrometheusRule" {
		return nil, fmt.Errorf("not a monitoring.coreos.com/v1 PrometheusRule: %s %s", pr.APIVersion, pr.Kind)
	}
	if len(pr.Spec.Groups) == 0 {
		return nil, errors.New("spec.groups is empty")
	}
	return yaml.Marshal(map[string]any{"groups": pr.Spec.Groups})
}
