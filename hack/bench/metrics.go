package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// sample is one line of the Prometheus text format.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// parseMetrics reads the Prometheus text exposition format (comments skipped).
func parseMetrics(r io.Reader) ([]sample, error) {
	var out []sample
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s, ok := parseLine(line)
		if ok {
			out = append(out, s)
		}
	}
	return out, sc.Err()
}

func parseLine(line string) (sample, bool) {
	s := sample{labels: map[string]string{}}
	var rest string
	if i := strings.IndexAny(line, "{ "); i < 0 {
		return s, false
	} else if line[i] == '{' {
		s.name = line[:i]
		end, ok := parseLabels(line[i+1:], s.labels)
		if !ok {
			return s, false
		}
		rest = line[i+1+end:]
	} else {
		s.name, rest = line[:i], line[i:]
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return s, false
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return s, false
	}
	s.value = v
	return s, true
}

// parseLabels parses `a="x",b="y"}` into labels and returns the index just after '}'.
func parseLabels(s string, labels map[string]string) (int, bool) {
	i := 0
	for i < len(s) {
		if s[i] == '}' {
			return i + 1, true
		}
		if s[i] == ',' || s[i] == ' ' {
			i++
			continue
		}
		eq := strings.IndexByte(s[i:], '=')
		if eq < 0 || i+eq+1 >= len(s) || s[i+eq+1] != '"' {
			return 0, false
		}
		key := s[i : i+eq]
		j := i + eq + 2
		var val strings.Builder
		for j < len(s) && s[j] != '"' {
			if s[j] == '\\' && j+1 < len(s) {
				j++
				switch s[j] {
				case 'n':
					val.WriteByte('\n')
				default:
					val.WriteByte(s[j])
				}
			} else {
				val.WriteByte(s[j])
			}
			j++
		}
		labels[key] = val.String()
		i = j + 1
	}
	return 0, false
}

// sum adds the values of the samples named name whose labels match every pair of match.
func sum(samples []sample, name string, match map[string]string) float64 {
	total := 0.0
	for _, s := range samples {
		if s.name != name {
			continue
		}
		ok := true
		for k, v := range match {
			if s.labels[k] != v {
				ok = false
				break
			}
		}
		if ok {
			total += s.value
		}
	}
	return total
}

// sumBy adds the values of the samples named name, grouped by the given labels.
func sumBy(samples []sample, name string, match map[string]string, by ...string) map[string]float64 {
	out := map[string]float64{}
	for _, s := range samples {
		if s.name != name {
			continue
		}
		ok := true
		for k, v := range match {
			if s.labels[k] != v {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		var key []string
		for _, b := range by {
			key = append(key, s.labels[b])
		}
		out[strings.Join(key, " ")] += s.value
	}
	return out
}

// scrapeHTTP reads the metrics of the manager's plain-HTTP endpoint.
func scrapeHTTP(ctx context.Context, url string) ([]sample, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return parseMetrics(resp.Body)
}

// procMemory returns VmRSS and VmHWM (peak RSS) of a process, in bytes.
func procMemory(pid int) (rss, hwm int64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		fields := strings.Fields(val)
		if len(fields) < 1 {
			continue
		}
		kb, perr := strconv.ParseInt(fields[0], 10, 64)
		if perr != nil {
			continue
		}
		switch key {
		case "VmRSS":
			rss = kb * 1024
		case "VmHWM":
			hwm = kb * 1024
		}
	}
	return rss, hwm, nil
}

// operatorSeriesPrefix names the operator's own series (controllers/internal/opmetrics).
const operatorSeriesPrefix = "database_operator_"

// seriesCounts returns how many series samples hold, and how many of them are the operator's own.
func seriesCounts(samples []sample) (all, operator int) {
	for _, s := range samples {
		if strings.HasPrefix(s.name, operatorSeriesPrefix) {
			operator++
		}
	}
	return len(samples), operator
}
