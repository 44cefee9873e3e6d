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

// Package prometheus_test checks the operator's alerts (config/prometheus/prometheusrule.yaml)
// beyond what promtool checks: every alert has its annotations, its runbook and its promtool
// test file; every metric the expressions use is one docs/metrics.md lists (the one list of
// the metrics the operator, controller-runtime, Prometheus and the kubelet export), and so is
// every metric the Grafana dashboards read; every metric of controllers/internal/opmetrics is
// listed there; the chart's copies are current.
package prometheus_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"
)

const (
	repoRoot      = "../.."
	ruleFile      = "config/prometheus/prometheusrule.yaml"
	chartCopy     = "charts/database-operator/files/prometheusrule.yaml"
	dashboardFile = "config/grafana/database-operator.json"
	// chartDashboard is the chart's copy of dashboardFile.
	chartDashboard = "charts/database-operator/files/grafana-dashboard.json"
	testsDir       = "config/prometheus/tests"
	runbooksDir    = "docs/runbooks"
	metricsDoc     = "docs/metrics.md"
	opmetrics      = "controllers/internal/opmetrics"
	runbookURL     = "https://github.com/seed1b407122/database-operator/blob/main/docs/runbooks/"
	// clusterGroup holds the alerts about one DatabaseCluster: they name it.
	clusterGroup = "database-operator.databasecluster"
	clusterRef   = "{{ $labels.namespace }}/{{ $labels.name }}"
)

type rule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

type group struct {
	Name  string `json:"name"`
	Rules []rule `json:"rules"`
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, path))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func groups(t *testing.T) []group {
	t.Helper()
	var pr struct {
		APIVersion string         `json:"apiVersion"`
		Kind       string         `json:"kind"`
		Metadata   map[string]any `json:"metadata"`
		Spec       struct {
			Groups []group `json:"groups"`
		} `json:"spec"`
	}
	if err := yaml.UnmarshalStrict(read(t, ruleFile), &pr); err != nil {
		t.Fatalf("%s: %v", ruleFile, err)
	}
	if len(pr.Spec.Groups) == 0 {
		t.Fatalf("%s has no groups", ruleFile)
	}
	return pr.Spec.Groups
}

// TestEveryAlertHasAnnotationsRunbookAndTests: severity, summary, description and runbook_url
// (naming the cluster where the alert is about one), docs/runbooks/<Alert>.md, and
// config/prometheus/tests/<Alert>.yaml with a case where it fires and one where it stays silent.
func TestEveryAlertHasAnnotationsRunbookAndTests(t *testing.T) {
	alerts := map[string]bool{}
	for _, g := range groups(t) {
		for _, r := range g.Rules {
			if r.Alert == "" {
				t.Errorf("group %s: a recording rule (%s) has no test here; add one", g.Name, r.Expr)
				continue
			}
			alerts[r.Alert] = true
			checkAlert(t, g.Name, r)
		}
	}
	tests, err := filepath.Glob(filepath.Join(repoRoot, testsDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range tests {
		if name := strings.TrimSuffix(filepath.Base(f), ".yaml"); !alerts[name] {
			t.Errorf("%s tests no alert of %s", f, ruleFile)
		}
	}
	runbooks, err := filepath.Glob(filepath.Join(repoRoot, runbooksDir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range runbooks {
		if name := strings.TrimSuffix(filepath.Base(f), ".md"); name != "README" && !alerts[name] {
			t.Errorf("%s is the runbook of no alert of %s", f, ruleFile)
		}
	}
}

func checkAlert(t *testing.T, groupName string, r rule) {
	t.Helper()
	if s := r.Labels["severity"]; !slices.Contains([]string{"critical", "warning", "info"}, s) {
		t.Errorf("%s: severity %q", r.Alert, s)
	}
	for _, a := range []string{"summary", "description"} {
		if r.Annotations[a] == "" {
			t.Errorf("%s: no %s", r.Alert, a)
		} else if groupName == clusterGroup && !strings.Contains(r.Annotations[a], clusterRef) {
			t.Errorf("%s: %s does not name the cluster (%s): %q", r.Alert, a, clusterRef, r.Annotations[a])
		}
	}
	if got, want := r.Annotations["runbook_url"], runbookURL+r.Alert+".md"; got != want {
		t.Errorf("%s: runbook_url %q, want %q", r.Alert, got, want)
	}
	runbook := string(read(t, filepath.Join(runbooksDir, r.Alert+".md")))
	if !strings.HasPrefix(runbook, "# "+r.Alert+"\n") {
		t.Errorf("%s.md does not start with the title # %s", r.Alert, r.Alert)
	}
	for _, section := range []string{"## Meaning", "## Diagnosis", "## Fix"} {
		if !strings.Contains(runbook, "\n"+section+"\n") {
			t.Errorf("%s.md has no %q section", r.Alert, section)
		}
	}
	checkTestFile(t, r.Alert)
}

// checkTestFile reads config/prometheus/tests/<alert>.yaml: it must test the alert at least once
// with an expected alert and once with none.
func checkTestFile(t *testing.T, alert string) {
	t.Helper()
	var file struct {
		RuleFiles []string `json:"rule_files"`
		Tests     []struct {
			AlertRuleTest []struct {
				Alertname string `json:"alertname"`
				ExpAlerts []any  `json:"exp_alerts"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	if err := yaml.Unmarshal(read(t, filepath.Join(testsDir, alert+".yaml")), &file); err != nil {
		t.Fatalf("%s.yaml: %v", alert, err)
	}
	if !slices.Equal(file.RuleFiles, []string{"rules.yaml"}) {
		t.Errorf("%s.yaml: rule_files %v, want [rules.yaml] (make test-rules writes it)", alert, file.RuleFiles)
	}
	fires, silent := false, false
	for _, c := range file.Tests {
		for _, a := range c.AlertRuleTest {
			if a.Alertname != alert {
				continue
			}
			fires = fires || len(a.ExpAlerts) > 0
			silent = silent || len(a.ExpAlerts) == 0
		}
	}
	if !fires || !silent {
		t.Errorf("%s.yaml: a case where %s fires: %v, one where it stays silent: %v; want both", alert, alert, fires, silent)
	}
}

// documentedMetrics are the metric names in the first column of docs/metrics.md's tables.
func documentedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	row := regexp.MustCompile("(?m)^\\| `([a-z_:][a-z0-9_:]*)` \\|")
	for _, m := range row.FindAllStringSubmatch(string(read(t, metricsDoc)), -1) {
		names[m[1]] = true
	}
	if len(names) == 0 {
		t.Fatalf("no metric table rows in %s", metricsDoc)
	}
	return names
}

// TestAlertsUseOnlyDocumentedMetrics parses every expression with Prometheus's PromQL parser: a
// metric that nothing exports (a typo, a renamed series) would leave the alert silent for good.
func TestAlertsUseOnlyDocumentedMetrics(t *testing.T) {
	documented := documentedMetrics(t)
	promql := parser.NewParser(parser.Options{})
	for _, g := range groups(t) {
		for _, r := range g.Rules {
			expr, err := promql.ParseExpr(r.Expr)
			if err != nil {
				t.Errorf("%s: %v", r.Alert, err)
				continue
			}
			for _, name := range metricNames(expr) {
				if !documented[name] {
					t.Errorf("%s uses %s, which %s does not list", r.Alert, name, metricsDoc)
				}
			}
		}
	}
}

// metricNames returns the metric name of every vector selector in expr.
func metricNames(expr parser.Expr) []string {
	var names []string
	parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
		if vs, ok := node.(*parser.VectorSelector); ok {
			for _, m := range vs.LabelMatchers {
				if m.Name == model.MetricNameLabel && m.Type == labels.MatchEqual {
					names = append(names, m.Value)
				}
			}
		}
		return nil
	})
	return names
}

// TestOperatorMetricsAreDocumented: every metric name in controllers/internal/opmetrics is in
// docs/metrics.md, and every database_operator_* name there is in the code.
func TestOperatorMetricsAreDocumented(t *testing.T) {
	documented := documentedMetrics(t)
	inCode := map[string]bool{}
	files, err := filepath.Glob(filepath.Join(repoRoot, opmetrics, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var code []byte
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			rel, _ := filepath.Rel(repoRoot, f)
			code = append(code, read(t, rel)...)
		}
	}
	for _, m := range regexp.MustCompile(`(?:Name:\s*|newClusterGauge\()"([a-z0-9_]+)"`).FindAllStringSubmatch(string(code), -1) {
		inCode[m[1]] = true
		if !documented[m[1]] {
			t.Errorf("%s exports %s, which %s does not list", opmetrics, m[1], metricsDoc)
		}
	}
	if len(inCode) == 0 {
		t.Fatalf("no metric names found in %s", opmetrics)
	}
	for name := range documented {
		if strings.HasPrefix(name, "database_operator_") && !inCode[name] {
			t.Errorf("%s lists %s, which %s does not export", metricsDoc, name, opmetrics)
		}
	}
}

// TestChartCopiesAreCurrent: the chart renders its PrometheusRule and its dashboard ConfigMap
// from copies ("make helm-crds").
func TestChartCopiesAreCurrent(t *testing.T) {
	for src, dst := range map[string]string{ruleFile: chartCopy, dashboardFile: chartDashboard} {
		if !bytes.Equal(read(t, src), read(t, dst)) {
			t.Errorf("%s differs from %s; run \"make helm-crds\"", dst, src)
		}
	}
}
