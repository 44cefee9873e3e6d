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

// Package prometheus carries the operator's ServiceMonitor and PrometheusRule (the YAML files
// beside this one) into the manager binary: in an OLM install the manager creates them itself
// (controllers/monitoringobjects). One source for kustomize, the chart's copy and the manager.
package prometheus

import _ "embed"

// ServiceMonitor is servicemonitor.yaml.
//
//go:embed servicemonitor.yaml
var ServiceMonitor []byte

// PrometheusRule is prometheusrule.yaml.
//
//go:embed prometheusrule.yaml
var PrometheusRule []byte
