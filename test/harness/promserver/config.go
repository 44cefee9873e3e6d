// Package promserver runs a real Prometheus server (built from the Prometheus module by "make
// prometheus-env") as a host process for the real-node tier, configured the way the Prometheus
// Operator would configure it from the project's ServiceMonitor, PodMonitor and PrometheusRule
// objects, and reads its targets and alerts through its HTTP API.
//
// The server is built without service discovery plugins (-tags remove_all_sd), so the scrape
// configurations carry static targets: the endpoints of the selected Service (ServiceMonitor)
// or the selected pods (PodMonitor), with the labels the Prometheus Operator's relabelling
// would give them (job, namespace, service, pod, container, endpoint).
package promserver

import (
	"fmt"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"sigs.k8s.io/yaml"
)

// Config is the part of prometheus.yml the harness writes.
type Config struct {
	Global        GlobalConfig   `json:"global"`
	RuleFiles     []string       `json:"rule_files,omitempty"`
	ScrapeConfigs []ScrapeConfig `json:"scrape_configs"`
}

// GlobalConfig holds the scrape and rule evaluation intervals.
type GlobalConfig struct {
	ScrapeInterval     string `json:"scrape_interval"`
	EvaluationInterval string `json:"evaluation_interval"`
}

// ScrapeConfig is one job.
type ScrapeConfig struct {
	JobName       string         `json:"job_name"`
	Scheme        string         `json:"scheme,omitempty"`
	MetricsPath   string         `json:"metrics_path,omitempty"`
	HonorLabels   bool           `json:"honor_labels,omitempty"`
	Authorization *Authorization `json:"authorization,omitempty"`
	TLSConfig     *TLSConfig     `json:"tls_config,omitempty"`
	StaticConfigs []StaticConfig `json:"static_configs"`
}

// Authorization sends the credentials of a file as a bearer token.
type Authorization struct {
	CredentialsFile string `json:"credentials_file"`
}

// TLSConfig is the TLS side of a scrape.
type TLSConfig struct {
	InsecureSkipVerify bool `json:"insecure_skip_verify,omitempty"`
}

// StaticConfig is a group of targets with their labels.
type StaticConfig struct {
	Targets []string          `json:"targets"`
	Labels  map[string]string `json:"labels,omitempty"`
}

// NewConfig returns a configuration that scrapes and evaluates every interval.
func NewConfig(interval time.Duration) Config {
	return Config{Global: GlobalConfig{ScrapeInterval: interval.String(), EvaluationInterval: interval.String()}}
}

// Marshal renders prometheus.yml.
func (c Config) Marshal() ([]byte, error) {
	return yaml.Marshal(c)
}

// RuleFile renders a PrometheusRule as the rule file the Prometheus Operator mounts: its spec,
// the groups, as they are.
func RuleFile(rule *monitoringv1.PrometheusRule) ([]byte, error) {
	if len(rule.Spec.Groups) == 0 {
		return nil, fmt.Errorf("PrometheusRule %s/%s has no groups", rule.Namespace, rule.Name)
	}
	return yaml.Marshal(rule.Spec)
}
