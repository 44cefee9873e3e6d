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
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The manifests "make test-rules" renders, one file per install path (kustomize build of
// config/default and config/prometheus; the chart with testdata/chart-values.yaml), and the directory of the Prometheus Operator's CRDs
// (example/prometheus-operator-crd of its module, fetched through the module proxy).
const (
	manifestsEnv = "PROMETHEUS_TEST_MANIFESTS"
	crdsEnv      = "PROMETHEUS_OPERATOR_CRDS"
	monitoring   = "monitoring.coreos.com/v1"
	// alertsJob is the job every alert selects (prometheusrule.yaml).
	alertsJob = "database-operator"
)

type object = map[string]any

// manifests reads every document of the files named by PROMETHEUS_TEST_MANIFESTS: one list of
// objects per file (per install path).
func manifests(t *testing.T) [][]object {
	t.Helper()
	files := strings.Fields(os.Getenv(manifestsEnv))
	if len(files) == 0 {
		t.Fatalf("%s is not set: run \"make test-rules\"", manifestsEnv)
	}
	var installs [][]object
	for _, f := range files {
		var objs []object
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range bytes.Split(data, []byte("\n---")) {
			var o object
			if err := yaml.Unmarshal(doc, &o); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if o != nil {
				objs = append(objs, o)
			}
		}
		installs = append(installs, objs)
	}
	return installs
}

// str is the string at path in o, or "".
func str(o object, path ...string) string {
	s, _ := field(o, path...).(string)
	return s
}

// field is the value at path in o, or nil.
func field(o object, path ...string) any {
	var cur any = o
	for _, p := range path {
		m, ok := cur.(object)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

func name(o object) string {
	return fmt.Sprintf("%s %s/%s", o["kind"], str(o, "metadata", "namespace"), str(o, "metadata", "name"))
}

// TestMonitoringObjectsMatchTheCRDs checks every monitoring.coreos.com object that kustomize and
// the chart render against the openAPIV3Schema of the Prometheus Operator's CRD: a misspelt or
// misplaced field (which the API server would reject or prune) fails, so does a wrong type or a
// value outside an enum.
func TestMonitoringObjectsMatchTheCRDs(t *testing.T) {
	dir := os.Getenv(crdsEnv)
	if dir == "" {
		t.Fatalf("%s is not set: run \"make test-rules\"", crdsEnv)
	}
	schemas := map[string]object{} // kind -> schema of version v1
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in %s (%v)", dir, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd object
		if err := yaml.Unmarshal(data, &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		versions, _ := field(crd, "spec", "versions").([]any)
		for _, v := range versions {
			if vm, ok := v.(object); ok && vm["name"] == "v1" {
				schemas[str(crd, "spec", "names", "kind")], _ = field(vm, "schema", "openAPIV3Schema").(object)
			}
		}
	}
	checked := map[string]int{}
	for _, o := range slices.Concat(manifests(t)...) {
		if o["apiVersion"] != monitoring {
			continue
		}
		kind, _ := o["kind"].(string)
		schema := schemas[kind]
		if schema == nil {
			t.Errorf("%s: no v1 CRD for the kind in %s", name(o), dir)
			continue
		}
		for _, err := range validate("", o, schema) {
			t.Errorf("%s: %v", name(o), err)
		}
		checked[kind]++
	}
	// kustomize and the chart each render one ServiceMonitor and one PrometheusRule.
	if checked["ServiceMonitor"] != 2 || checked["PrometheusRule"] != 2 {
		t.Errorf("checked %v, want 2 ServiceMonitors and 2 PrometheusRules (kustomize and the chart)", checked)
	}
}

// validate returns where v departs from the structural schema s: unknown fields (unless the
// schema preserves them), wrong types, missing required fields, values outside an enum.
func validate(path string, v any, s object) []error {
	if s["x-kubernetes-int-or-string"] == true {
		switch v.(type) {
		case string, float64:
			return nil
		}
		return []error{fmt.Errorf("%s: %v is neither an integer nor a string", path, v)}
	}
	var errs []error
	if enum, ok := s["enum"].([]any); ok && !slices.Contains(enum, v) {
		errs = append(errs, fmt.Errorf("%s: %v is not one of %v", path, v, enum))
	}
	switch s["type"] {
	case "object":
		m, ok := v.(object)
		if !ok {
			return append(errs, fmt.Errorf("%s: want an object, got %T", path, v))
		}
		errs = append(errs, validateObject(path, m, s)...)
	case "array":
		a, ok := v.([]any)
		if !ok {
			return append(errs, fmt.Errorf("%s: want an array, got %T", path, v))
		}
		items, _ := s["items"].(object)
		for i, e := range a {
			errs = append(errs, validate(fmt.Sprintf("%s[%d]", path, i), e, items)...)
		}
	case "string":
		if _, ok := v.(string); !ok {
			errs = append(errs, fmt.Errorf("%s: want a string, got %T", path, v))
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			errs = append(errs, fmt.Errorf("%s: want a boolean, got %T", path, v))
		}
	case "integer", "number":
		if _, ok := v.(float64); !ok {
			errs = append(errs, fmt.Errorf("%s: want a number, got %T", path, v))
		}
	}
	return errs
}

func validateObject(path string, m object, s object) []error {
	var errs []error
	props, _ := s["properties"].(object)
	for _, r := range asStrings(s["required"]) {
		if _, ok := m[r]; !ok {
			errs = append(errs, fmt.Errorf("%s: required field %s missing", path, r))
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		sub, known := props[k].(object)
		switch {
		case known:
			errs = append(errs, validate(path+"."+k, m[k], sub)...)
		case s["additionalProperties"] != nil:
			if ap, ok := s["additionalProperties"].(object); ok {
				errs = append(errs, validate(path+"."+k, m[k], ap)...)
			}
		case s["x-kubernetes-preserve-unknown-fields"] == true || (path == "" && (k == "apiVersion" || k == "kind")):
		case path == ".metadata" || len(props) == 0:
			// metadata is ObjectMeta (checked by the API server, not the CRD); an object without
			// properties is free-form.
		default:
			errs = append(errs, fmt.Errorf("%s: unknown field %q", path, k))
		}
	}
	return errs
}

func asStrings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, e := range l {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// TestChartRendersTheSameRulesAndDashboard: the chart's PrometheusRule (its copy through
// .Files.Get, fromYaml and toYaml) has the same spec as kustomize's, and its ConfigMap holds the
// dashboard as config/grafana has it.
func TestChartRendersTheSameRulesAndDashboard(t *testing.T) {
	installs := manifests(t)
	if len(installs) != 2 {
		t.Fatalf("%s names %d files, want kustomize's and the chart's", manifestsEnv, len(installs))
	}
	find := func(objs []object, apiVersion, kind, suffix string) object {
		for _, o := range objs {
			if o["apiVersion"] == apiVersion && o["kind"] == kind && strings.HasSuffix(str(o, "metadata", "name"), suffix) {
				return o
			}
		}
		t.Fatalf("no %s %s *%s rendered", apiVersion, kind, suffix)
		return nil
	}
	kustomize, chart := installs[0], installs[1]
	want := find(kustomize, monitoring, "PrometheusRule", "")["spec"]
	if got := find(chart, monitoring, "PrometheusRule", "")["spec"]; !reflect.DeepEqual(got, want) {
		t.Errorf("the chart's PrometheusRule spec differs from config/prometheus's")
	}
	cm := find(chart, "v1", "ConfigMap", "-grafana-dashboard")
	if str(cm, "metadata", "labels", "grafana_dashboard") != "1" {
		t.Errorf("%s is not labelled grafana_dashboard=1", name(cm))
	}
	var got, wantDashboard any
	if err := json.Unmarshal([]byte(str(cm, "data", "database-operator.json")), &got); err != nil {
		t.Fatalf("%s: %v", name(cm), err)
	}
	if err := json.Unmarshal(read(t, dashboardFile), &wantDashboard); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, wantDashboard) {
		t.Errorf("%s holds another dashboard than %s", name(cm), dashboardFile)
	}
}

// TestServiceMonitorsGiveTheAlertsJob joins each ServiceMonitor to the metrics Service it selects
// (same install path, same namespace): the Service exists, carries the jobLabel with the value the
// alerts select, names the endpoint's port; the endpoint scrapes HTTPS with the token and keeps
// the series' namespace (honorLabels).
func TestServiceMonitorsGiveTheAlertsJob(t *testing.T) {
	found := 0
	for _, objs := range manifests(t) {
		for _, sm := range objs {
			if sm["apiVersion"] != monitoring || sm["kind"] != "ServiceMonitor" {
				continue
			}
			found++
			if err := checkServiceMonitor(sm, objs); err != nil {
				t.Errorf("%s: %v", name(sm), err)
			}
		}
	}
	if found != 2 {
		t.Errorf("%d ServiceMonitors rendered, want 2 (kustomize and the chart)", found)
	}
}

func checkServiceMonitor(sm object, objs []object) error {
	jobLabel := str(sm, "spec", "jobLabel")
	selector, _ := field(sm, "spec", "selector", "matchLabels").(object)
	endpoints, _ := field(sm, "spec", "endpoints").([]any)
	if len(endpoints) != 1 {
		return fmt.Errorf("%d endpoints, want 1", len(endpoints))
	}
	ep, _ := endpoints[0].(object)
	var errs []error
	if ep["honorLabels"] != true {
		errs = append(errs, errors.New("honorLabels is not true: the series' namespace label would become exported_namespace"))
	}
	if ep["scheme"] != "https" || ep["bearerTokenFile"] != "/var/run/secrets/kubernetes.io/serviceaccount/token" {
		errs = append(errs, fmt.Errorf("scheme %v, bearerTokenFile %v: the metrics endpoint wants HTTPS and a token", ep["scheme"], ep["bearerTokenFile"]))
	}
	var services []object
	for _, o := range objs {
		if o["apiVersion"] == "v1" && o["kind"] == "Service" &&
			str(o, "metadata", "namespace") == str(sm, "metadata", "namespace") && selects(selector, o) {
			services = append(services, o)
		}
	}
	if len(services) != 1 {
		return errors.Join(append(errs, fmt.Errorf("selects %d Services in its namespace, want the metrics Service", len(services)))...)
	}
	svc := services[0]
	if job := str(svc, "metadata", "labels", jobLabel); jobLabel == "" || job != alertsJob {
		errs = append(errs, fmt.Errorf("jobLabel %q gives job %q from %s, the alerts select job %q", jobLabel, job, name(svc), alertsJob))
	}
	ports, _ := field(svc, "spec", "ports").([]any)
	if !slices.ContainsFunc(ports, func(p any) bool { pm, _ := p.(object); return pm["name"] == ep["port"] }) {
		errs = append(errs, fmt.Errorf("port %v is not a port of %s", ep["port"], name(svc)))
	}
	return errors.Join(errs...)
}

// selects says whether every label of selector is on o (a non-empty selector).
func selects(selector object, o object) bool {
	labels, _ := field(o, "metadata", "labels").(object)
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return len(selector) > 0
}
