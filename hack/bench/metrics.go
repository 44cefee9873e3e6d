package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// sample is one series of the Prometheus text format: one line of it.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// parseMetrics reads the Prometheus text format into its series; a histogram or a summary
// gives one per bucket or quantile, its _sum and its _count, as in the text.
func parseMetrics(r io.Reader) ([]sample, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, err
	}
	var out []sample
	for name, family := range families {
		for _, m := range family.GetMetric() {
			out = append(out, seriesOf(name, m)...)
		}
	}
	return out, nil
}

func seriesOf(name string, m *dto.Metric) []sample {
	labels := map[string]string{}
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	with := func(k string, v float64) map[string]string {
		l := maps.Clone(labels)
		l[k] = strconv.FormatFloat(v, 'g', -1, 64)
		return l
	}
	switch {
	case m.Histogram != nil:
		h := m.GetHistogram()
		out := []sample{{name + "_sum", labels, h.GetSampleSum()}, {name + "_count", labels, float64(h.GetSampleCount())}}
		for _, b := range h.GetBucket() {
			out = append(out, sample{name + "_bucket", with("le", b.GetUpperBound()), float64(b.GetCumulativeCount())})
		}
		return out
	case m.Summary != nil:
		s := m.GetSummary()
		out := []sample{{name + "_sum", labels, s.GetSampleSum()}, {name + "_count", labels, float64(s.GetSampleCount())}}
		for _, q := range s.GetQuantile() {
			out = append(out, sample{name, with("quantile", q.GetQuantile()), q.GetValue()})
		}
		return out
	case m.Counter != nil:
		return []sample{{name, labels, m.GetCounter().GetValue()}}
	case m.Gauge != nil:
		return []sample{{name, labels, m.GetGauge().GetValue()}}
	}
	return []sample{{name, labels, m.GetUntyped().GetValue()}}
}

// sum adds the values of the samples named name whose labels match every pair of match.
func sum(samples []sample, name string, match map[string]string) float64 {
	total := 0.0
	for _, v := range sumBy(samples, name, match) {
		total += v
	}
	return total
}

// sumBy adds the values of the samples named name whose labels match every pair of match,
// grouped by the values of the labels by, space separated.
func sumBy(samples []sample, name string, match map[string]string, by ...string) map[string]float64 {
	out := map[string]float64{}
	for _, s := range samples {
		if s.name != name || !matches(s.labels, match) {
			continue
		}
		var key []string
		for _, b := range by {
			key = append(key, s.labels[b])
		}
		out[strings.TrimSpace(strings.Join(key, " "))] += s.value
	}
	return out
}

func matches(labels, match map[string]string) bool {
	for k, v := range match {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// minus is a - b by key, without the keys whose difference is 0.
func minus[V int64 | float64](a, b map[string]V) map[string]V {
	out := map[string]V{}
	for k, v := range a {
		if d := v - b[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// apiserverWriteVerbs are the verbs of apiserver_request_total that change state.
var apiserverWriteVerbs = map[string]bool{
	"CREATE": true, "POST": true, "UPDATE": true, "PUT": true, "PATCH": true, "DELETE": true, "DELETECOLLECTION": true, "APPLY": true,
}

// apiserverWrites are the writes kube-apiserver served, from every client, by "VERB resource
// [subresource]".
func apiserverWrites(samples []sample) map[string]float64 {
	all := sumBy(samples, "apiserver_request_total", nil, "verb", "resource", "subresource")
	for k := range all {
		if verb, _, _ := strings.Cut(k, " "); !apiserverWriteVerbs[verb] {
			delete(all, k)
		}
	}
	return all
}

func systemWrites(samples []sample) float64 {
	total := 0.0
	for _, v := range apiserverWrites(samples) {
		total += v
	}
	return total
}

// httpGet reads url with hc.
func httpGet(ctx context.Context, hc *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s: %.512s", url, resp.Status, body)
	}
	return body, err
}

// scrapeHTTP reads the metrics of the manager's plain-HTTP endpoint.
func scrapeHTTP(ctx context.Context, url string) ([]sample, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	body, err := httpGet(ctx, http.DefaultClient, url)
	if err != nil {
		return nil, err
	}
	return parseMetrics(bytes.NewReader(body))
}

// procMemory returns VmRSS and VmHWM (peak RSS) of a process, in bytes.
func procMemory(pid int) (rss, hwm int64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		key, val, _ := strings.Cut(line, ":")
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(val), "kB")), 10, 64)
		switch {
		case err != nil:
		case key == "VmRSS":
			rss = kb * 1024
		case key == "VmHWM":
			hwm = kb * 1024
		}
	}
	return rss, hwm, nil
}

// seriesCounts returns how many series samples hold, and how many of them are the operator's
// own (controllers/internal/opmetrics).
func seriesCounts(samples []sample) (all, operator int) {
	for _, s := range samples {
		if strings.HasPrefix(s.name, "database_operator_") {
			operator++
		}
	}
	return len(samples), operator
}
