package promserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strconv"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/seed1b407122/database-operator/test/harness/proc"
)

// TestServerScrapesItselfAndFiresAnAlert runs the real Prometheus ($PROMETHEUS_BIN; "make
// test-rules" sets it) scraping its own /metrics, with one rule that fires at once, and reads the
// target, the alert and a query back through the API.
func TestServerScrapesItselfAndFiresAnAlert(t *testing.T) {
	bin := os.Getenv("PROMETHEUS_BIN")
	if bin == "" {
		t.Skip("$PROMETHEUS_BIN is not set; run \"make test-rules\"")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rules, err := RuleFile(&monitoringv1.PrometheusRule{Spec: monitoringv1.PrometheusRuleSpec{Groups: []monitoringv1.RuleGroup{{
		Name: "self", Rules: []monitoringv1.Rule{{
			Alert: "SelfUp", Expr: intstr.FromString(`up{job="self"} == 1`),
			Labels: map[string]string{"severity": "none"}, Annotations: map[string]string{"summary": "{{ $labels.instance }} is up"},
		}, {
			Alert: "SelfUpLong", Expr: intstr.FromString(`up{job="self"} == 1`), For: ptr.To(monitoringv1.Duration("5m")),
		}},
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	// It scrapes itself: its port is chosen first.
	port, err := proc.FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cfg := NewConfig(time.Second)
	cfg.ScrapeConfigs = []ScrapeConfig{{JobName: "self", StaticConfigs: []StaticConfig{{Targets: []string{addr}, Labels: map[string]string{"team": "db"}}}}}
	s, err := Start(ctx, Options{Binary: bin, WorkDir: t.TempDir(), Config: cfg, Rules: rules, Port: port})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	}()
	waitFor(ctx, t, "the target up", func() bool {
		targets, err := s.Targets(ctx)
		return err == nil && len(targets) == 1 && targets[0].Health == "up" && targets[0].Labels["team"] == "db"
	})
	waitFor(ctx, t, "SelfUp firing and SelfUpLong pending (its for: 5m)", func() bool {
		states := map[string]string{}
		alerts, err := s.Alerts(ctx)
		for _, a := range alerts {
			states[a.Labels["alertname"]] = a.State
			if a.Labels["alertname"] == "SelfUp" && a.Annotations["summary"] != addr+" is up" {
				return false
			}
		}
		return err == nil && len(alerts) == 2 && states["SelfUp"] == "firing" && states["SelfUpLong"] == "pending"
	})
	loaded, err := s.AlertingRules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	durations := map[string]float64{}
	for _, r := range loaded {
		durations[r.Name] = r.Duration
	}
	if want := map[string]float64{"SelfUp": 0, "SelfUpLong": 300}; !reflect.DeepEqual(durations, want) {
		t.Errorf("loaded alerting rules with durations %v, want %v", durations, want)
	}
	samples, err := s.Query(ctx, `up{job="self"}`)
	if err != nil || len(samples) != 1 || samples[0].Value[1] != "1" {
		t.Errorf("up{job=\"self\"} = %+v, %v; want one sample of 1", samples, err)
	}
}

func waitFor(ctx context.Context, t *testing.T, what string, done func() bool) {
	t.Helper()
	for !done() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// TestListsReadTheirKeyOfData: Targets and Alerts read the list under their key of the API's
// "data", whatever else it holds (Prometheus 2.x and 3.x add fields such as droppedTargetCounts,
// an object), and fail on an answer that is not 200.
func TestListsReadTheirKeyOfData(t *testing.T) {
	answers := map[string]string{
		"/api/v1/targets": `{"status":"success","data":{"activeTargets":[{"scrapePool":"self","health":"up","labels":{"team":"db"}}],` +
			`"droppedTargets":[],"droppedTargetCounts":{"self":0}}}`,
		"/api/v1/alerts": `{"status":"success","data":{}}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answer, ok := answers[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(answer))
	}))
	defer srv.Close()
	s := &Server{URL: srv.URL}
	ctx := context.Background()
	targets, err := s.Targets(ctx)
	if err != nil || len(targets) != 1 || targets[0].Health != "up" || targets[0].Labels["team"] != "db" {
		t.Errorf("Targets: %+v, %v", targets, err)
	}
	if alerts, err := s.Alerts(ctx); err != nil || alerts != nil {
		t.Errorf("Alerts of data without alerts: %+v, %v; want none, no error", alerts, err)
	}
	delete(answers, "/api/v1/targets")
	if _, err := s.Targets(ctx); err == nil {
		t.Error("Targets of a 404: no error")
	}
}
