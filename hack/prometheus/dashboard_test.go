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

package prometheus_test

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
)

const dashboardsDir = "config/grafana"

// grafanaVariables stand in for Grafana's variables so that a query parses as PromQL: a range
// for the interval ones, a plain name for the dashboard's own (they sit in label values).
var grafanaVariables = strings.NewReplacer(
	"$__rate_interval", "5m", "${__rate_interval}", "5m", "$__interval", "1m", "${__interval}", "1m",
	"${namespace}", "ns", "$namespace", "ns", "${cluster}", "db", "$cluster", "db",
)

// labelValues is Grafana's label_values(SELECTOR, LABEL) of a variable's query.
var labelValues = regexp.MustCompile(`^label_values\((.*),\s*[a-zA-Z_][a-zA-Z0-9_]*\)$`)

type panel struct {
	ID      int    `json:"id"`
	Type    string `json:"type"`
	Title   string `json:"title"`
	Targets []struct {
		Expr  string `json:"expr"`
		RefID string `json:"refId"`
	} `json:"targets"`
	Panels []panel `json:"panels"`
}

type dashboard struct {
	UID        string  `json:"uid"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			Type       string `json:"type"`
			Definition string `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
}

// TestDashboardQueriesUseExportedMetrics parses every query of every dashboard under
// config/grafana (panel targets and the variables' label_values selectors) with the PromQL
// parser and checks that each metric it reads is listed in docs/metrics.md.
func TestDashboardQueriesUseExportedMetrics(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot, dashboardsDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards in %s (%v)", dashboardsDir, err)
	}
	documented := documentedMetrics(t)
	promql := parser.NewParser(parser.Options{})
	for _, f := range files {
		rel, _ := filepath.Rel(repoRoot, f)
		var d dashboard
		if err := json.Unmarshal(read(t, rel), &d); err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		queries := map[string]string{} // where -> query
		ids := map[int]bool{}
		var walk func([]panel)
		walk = func(ps []panel) {
			for _, p := range ps {
				if ids[p.ID] {
					t.Errorf("%s: panel id %d used twice", rel, p.ID)
				}
				ids[p.ID] = true
				if p.Type != "row" && len(p.Targets) == 0 {
					t.Errorf("%s: panel %q has no query", rel, p.Title)
				}
				for _, tg := range p.Targets {
					queries["panel "+p.Title+" "+tg.RefID] = tg.Expr
				}
				walk(p.Panels)
			}
		}
		walk(d.Panels)
		for _, v := range d.Templating.List {
			if v.Type != "query" {
				continue
			}
			m := labelValues.FindStringSubmatch(v.Definition)
			if m == nil {
				t.Errorf("%s: variable %s: %q is not label_values(SELECTOR, LABEL)", rel, v.Name, v.Definition)
				continue
			}
			queries["variable "+v.Name] = m[1]
		}
		if len(queries) == 0 {
			t.Errorf("%s: no queries", rel)
		}
		for where, q := range queries {
			expr, err := promql.ParseExpr(grafanaVariables.Replace(q))
			if err != nil {
				t.Errorf("%s: %s: %v\n  %s", rel, where, err, q)
				continue
			}
			names := metricNames(expr)
			if len(names) == 0 {
				t.Errorf("%s: %s reads no metric: %s", rel, where, q)
			}
			for _, name := range names {
				if !exported(documented, name) {
					t.Errorf("%s: %s reads %s, which %s does not list", rel, where, name, metricsDoc)
				}
			}
		}
	}
}

// exported says whether name is a documented metric, or a series of a documented histogram
// (name_bucket, name_sum, name_count).
func exported(documented map[string]bool, name string) bool {
	if documented[name] {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && documented[base] {
			return true
		}
	}
	return false
}
