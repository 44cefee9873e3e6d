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

package testenv

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// conditionMetric is the gauge that holds the conditions of every resource of the operator.
const conditionMetric = "database_operator_resource_condition"

// Gauges reads the gauge name from controller-runtime's metrics registry, where the manager of
// the specs registers its metrics, and returns its series whose labels include match. Each is
// keyed by its other labels, sorted, as Prometheus prints them: {status="true",type="Ready"}, or
// {} when match holds every label.
func Gauges(name string, match map[string]string) (map[string]float64, error) {
	families, err := metrics.Registry.Gather()
	if err != nil {
		return nil, fmt.Errorf("gathering the metrics: %w", err)
	}
	series := map[string]float64{}
	for _, family := range families {
		if family.GetName() != name {
			continue
		}
		for _, m := range family.GetMetric() {
			labels := map[string]string{}
			for _, pair := range m.GetLabel() {
				labels[pair.GetName()] = pair.GetValue()
			}
			if key, ok := seriesKey(labels, match); ok {
				series[key] = m.GetGauge().GetValue()
			}
		}
	}
	return series, nil
}

// ConditionSeries returns the condition series of one resource, keyed by type and status:
// {status="true",type="Ready"}.
func ConditionSeries(kind, namespace, name string) (map[string]float64, error) {
	return Gauges(conditionMetric, map[string]string{"kind": kind, "namespace": namespace, "name": name})
}

// ChildConflictSeries returns the child-conflict series of one resource: {"{}": 1} while a
// child's name is held by another object, {"{}": 0} otherwise.
func ChildConflictSeries(kind, namespace, name string) (map[string]float64, error) {
	return Gauges("database_operator_resource_child_conflict", map[string]string{"kind": kind, "namespace": namespace, "name": name})
}

// WantConditionSeries returns the condition series of a resource whose conditions have the given
// statuses ("true", "false" or "unknown"), by type: one series per type, 1, for its status.
func WantConditionSeries(statuses map[string]string) map[string]float64 {
	series := map[string]float64{}
	for conditionType, current := range statuses {
		series[fmt.Sprintf("{status=%q,type=%q}", current, conditionType)] = 1
	}
	return series
}

// seriesKey reports whether labels hold every label of match, and formats the others.
func seriesKey(labels, match map[string]string) (string, bool) {
	var rest []string
	for name, value := range labels {
		want, matched := match[name]
		if !matched {
			rest = append(rest, fmt.Sprintf("%s=%q", name, value))
		} else if want != value {
			return "", false
		}
	}
	if len(labels)-len(rest) != len(match) {
		return "", false
	}
	slices.Sort(rest)
	return "{" + strings.Join(rest, ",") + "}", true
}
