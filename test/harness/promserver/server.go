package promserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/seed1b407122/database-operator/test/harness/proc"
)

// Options says how to run the server.
type Options struct {
	// Binary is the prometheus binary (PROMETHEUS_BIN, built by "make prometheus-env").
	Binary string
	// WorkDir receives prometheus.yml, rules.yml, the TSDB (prometheus-data/) and prometheus.log.
	WorkDir string
	// Config is prometheus.yml; its rule_files are set to the rule file below.
	Config Config
	// Rules is the rule file (RuleFile), if any.
	Rules []byte
	// ReadyTimeout bounds the wait for /-/ready (default a minute).
	ReadyTimeout time.Duration
	// Port on 127.0.0.1; 0 picks a free one.
	Port int
}

// Server is a running Prometheus listening on 127.0.0.1.
type Server struct {
	*proc.Process
	// URL is http://127.0.0.1:PORT.
	URL string
}

// Start writes the configuration, starts Prometheus on a free port of 127.0.0.1 and waits until
// it is ready.
func Start(ctx context.Context, o Options) (*Server, error) {
	dir, err := filepath.Abs(o.WorkDir)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", o.WorkDir, err)
	}
	if len(o.Rules) > 0 {
		rules := filepath.Join(dir, "rules.yml")
		if err := os.WriteFile(rules, o.Rules, 0o644); err != nil {
			return nil, fmt.Errorf("writing the rule file: %w", err)
		}
		o.Config.RuleFiles = []string{rules}
	}
	config, err := o.Config.Marshal()
	if err != nil {
		return nil, fmt.Errorf("rendering prometheus.yml: %w", err)
	}
	configPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(configPath, config, 0o644); err != nil {
		return nil, fmt.Errorf("writing prometheus.yml: %w", err)
	}
	port := o.Port
	if port == 0 {
		if port, err = proc.FreePort("127.0.0.1"); err != nil {
			return nil, err
		}
	}
	p, err := proc.Start("prometheus", o.Binary, []string{
		"--config.file=" + configPath, "--storage.tsdb.path=" + filepath.Join(dir, "prometheus-data"),
		"--web.listen-address=127.0.0.1:" + strconv.Itoa(port),
	}, proc.Options{LogPath: filepath.Join(dir, "prometheus.log"), Dir: dir})
	if err != nil {
		return nil, err
	}
	s := &Server{Process: p, URL: "http://127.0.0.1:" + strconv.Itoa(port)}
	timeout := o.ReadyTimeout
	if timeout == 0 {
		timeout = time.Minute
	}
	if err := s.waitReady(ctx, timeout); err != nil {
		_ = p.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Server) waitReady(ctx context.Context, timeout time.Duration) error {
	return proc.PollWhileRunning(ctx, "prometheus /-/ready", []*proc.Process{s.Process}, 100*time.Millisecond, timeout,
		func(ctx context.Context) (bool, error) {
			return s.get(ctx, "/-/ready", nil) == nil, nil
		})
}

// Target is one active target of /api/v1/targets.
type Target struct {
	ScrapePool string            `json:"scrapePool"`
	ScrapeURL  string            `json:"scrapeUrl"`
	Labels     map[string]string `json:"labels"`
	Health     string            `json:"health"`
	LastError  string            `json:"lastError"`
}

// Targets returns the active targets.
func (s *Server) Targets(ctx context.Context) ([]Target, error) {
	return apiList[Target](ctx, s, "/api/v1/targets?state=active", "activeTargets")
}

// Alert is one active (pending or firing) alert of /api/v1/alerts.
type Alert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	State       string            `json:"state"`
	ActiveAt    time.Time         `json:"activeAt"`
}

// Alerts returns the active alerts: pending or firing (resolved ones are not listed).
func (s *Server) Alerts(ctx context.Context) ([]Alert, error) {
	return apiList[Alert](ctx, s, "/api/v1/alerts", "alerts")
}

// Rule is one alerting rule of /api/v1/rules, as the server loaded it.
type Rule struct {
	Name  string `json:"name"`
	Query string `json:"query"`
	// Duration is the rule's "for", in seconds.
	Duration    float64           `json:"duration"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	Health      string            `json:"health"`
}

// AlertingRules returns the alerting rules of every loaded group.
func (s *Server) AlertingRules(ctx context.Context) ([]Rule, error) {
	data, err := apiData[struct {
		Groups []struct {
			Rules []Rule `json:"rules"`
		} `json:"groups"`
	}](ctx, s, "/api/v1/rules?type=alert")
	var rules []Rule
	for _, g := range data.Groups {
		rules = append(rules, g.Rules...)
	}
	return rules, err
}

// Sample is one element of an instant query's vector.
type Sample struct {
	Metric map[string]string `json:"metric"`
	// Value is [unix time, "value"].
	Value [2]any `json:"value"`
}

// Query evaluates an instant PromQL query and returns its vector.
func (s *Server) Query(ctx context.Context, expr string) ([]Sample, error) {
	data, err := apiData[struct {
		ResultType string   `json:"resultType"`
		Result     []Sample `json:"result"`
	}](ctx, s, "/api/v1/query?query="+url.QueryEscape(expr))
	if err != nil {
		return nil, err
	}
	if data.ResultType != "vector" {
		return nil, fmt.Errorf("query %q: a %s, not a vector", expr, data.ResultType)
	}
	return data.Result, nil
}

// apiData is the "data" of the HTTP API's JSON answer to path.
func apiData[T any](ctx context.Context, s *Server, path string) (T, error) {
	var resp struct {
		Data T `json:"data"`
	}
	err := s.get(ctx, path, &resp)
	return resp.Data, err
}

// apiList is the list under key in the "data" of the HTTP API's JSON answer to path (nil when
// the answer has none).
func apiList[T any](ctx context.Context, s *Server, path, key string) ([]T, error) {
	data, err := apiData[map[string]json.RawMessage](ctx, s, path)
	if err != nil || data[key] == nil {
		return nil, err
	}
	var list []T
	if err := json.Unmarshal(data[key], &list); err != nil {
		return nil, fmt.Errorf("GET %s: decoding %s: %w", path, key, err)
	}
	return list, nil
}

// get decodes the JSON answer of path into out; with out nil it only checks for 200 (the
// plain-text /-/ready).
func (s *Server) get(ctx context.Context, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("GET %s: decoding: %w", path, err)
	}
	return nil
}
