package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/pprof/profile"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/seed1b407122/database-operator/test/harness/proc"
)

// sample is one series of the Prometheus text format: one line of it (a histogram or a
// summary gives one per bucket or quantile, its _sum and its _count).
type sample = *model.Sample

// parseMetrics parses body, the Prometheus text format, unless err.
func parseMetrics(body []byte, err error) ([]sample, error) {
	if err != nil {
		return nil, err
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	return expfmt.ExtractSamples(&expfmt.DecodeOptions{Timestamp: model.Now()}, slices.Collect(maps.Values(families))...)
}

// scrape reads the metrics of the manager's plain-HTTP endpoint.
func scrape(ctx context.Context, url string) ([]sample, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return parseMetrics(httpGet(ctx, http.DefaultClient, url))
}

// scrapeAPIServer reads kube-apiserver's /metrics with the admin client.
func scrapeAPIServer(ctx context.Context, admin *rest.Config) ([]sample, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(admin)
	if err != nil {
		return nil, err
	}
	return parseMetrics(dc.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx))
}

// sumBy adds the values of the samples named name whose labels match every pair of match,
// grouped by the values of the labels by, space separated ("" without by).
func sumBy(samples []sample, name string, match map[string]string, by ...string) map[string]float64 {
	out := map[string]float64{}
	for _, s := range samples {
		matches := string(s.Metric[model.MetricNameLabel]) == name
		for k, v := range match {
			matches = matches && string(s.Metric[model.LabelName(k)]) == v
		}
		if !matches {
			continue
		}
		var key []string
		for _, b := range by {
			key = append(key, string(s.Metric[model.LabelName(b)]))
		}
		out[strings.TrimSpace(strings.Join(key, " "))] += float64(s.Value)
	}
	return out
}

func sum(samples []sample, name string, match map[string]string) float64 {
	return sumBy(samples, name, match)[""]
}

// delta is how much sum grew from base to now.
func delta(base, now []sample, name string, match map[string]string) float64 {
	return sum(now, name, match) - sum(base, name, match)
}

// deltaBy is how much sumBy grew from base to now, by key.
func deltaBy(base, now []sample, name string, match map[string]string, by ...string) map[string]float64 {
	return minus(sumBy(now, name, match, by...), sumBy(base, name, match, by...))
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

// apiserverWrites are the writes kube-apiserver served, from every client, by "VERB resource
// [subresource]" (the verbs of apiserver_request_total that change state).
func apiserverWrites(samples []sample) map[string]float64 {
	all := sumBy(samples, "apiserver_request_total", nil, "verb", "resource", "subresource")
	maps.DeleteFunc(all, func(k string, _ float64) bool {
		verb, _, _ := strings.Cut(k, " ")
		return !slices.Contains([]string{"CREATE", "POST", "UPDATE", "PUT", "PATCH", "DELETE", "DELETECOLLECTION", "APPLY"}, verb)
	})
	return all
}

func systemWrites(samples []sample) float64 {
	total := 0.0
	for _, v := range apiserverWrites(samples) {
		total += v
	}
	return total
}

// seriesCounts returns how many series samples hold, and how many of them are the operator's
// own (controllers/internal/opmetrics).
func seriesCounts(samples []sample) (all, operator int) {
	for _, s := range samples {
		if strings.HasPrefix(string(s.Metric[model.MetricNameLabel]), "database_operator_") {
			operator++
		}
	}
	return len(samples), operator
}

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

// procMemory returns VmRSS and VmHWM (peak RSS) of a process, in bytes.
func procMemory(pid int) (rss, hwm int64, err error) {
	m, err := procMemoryParts(pid)
	return m["VmRSS"], m["VmHWM"], err
}

// procMemoryParts returns the memory figures of /proc/PID/status, in bytes, by name: VmRSS,
// VmHWM, RssAnon (the heap, stacks and the runtime's own), RssFile (the pages of the binary).
func procMemoryParts(pid int) (map[string]int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	parts := map[string]int64{}
	for line := range strings.SplitSeq(string(data), "\n") {
		key, val, _ := strings.Cut(line, ":")
		switch key {
		case "VmRSS", "VmHWM", "RssAnon", "RssFile":
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(val), "kB")), 10, 64)
			parts[key] = kb * 1024
		}
	}
	return parts, err
}

// Every process of a case is this benchmark's descendant (the control plane, kwok, the manager)
// or the benchmark itself (its clients, the CSI simulator): reading /proc at both ends of a
// window splits its CPU by process, and /proc/stat says how busy the machine was.

// selfName is the row of the benchmark's own process: its clients and the CSI simulator.
const selfName = "bench (clients, CSI)"

// Rows of the machine's totals in the CPU split; the parentheses sort them first.
const (
	machineBusy      = "(machine busy)"
	machineAvailable = "(machine available)"
)

// readCPU reads the CPU seconds used so far by this process and its descendants, summed by
// name, and the machine's busy and available seconds. A process that exited within a window
// loses its time; the components of a case live through it.
func readCPU() (map[string]float64, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	procs := map[int]proc.Stat{}
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			if st, err := proc.ReadStat(pid); err == nil { // an error: it exited meanwhile
				procs[pid] = st
			}
		}
	}
	out := map[string]float64{}
	self := os.Getpid()
	for pid, p := range procs {
		if pid == self {
			out[selfName] += p.CPUSeconds
		} else if descends(procs, pid, self) {
			out[processName(pid, p.Name)] += p.CPUSeconds
		}
	}
	stat, err := os.ReadFile("/proc/stat")
	if err == nil {
		out[machineBusy], out[machineAvailable], err = parseMachineCPU(string(stat))
	}
	return out, err
}

// processName is the base name of pid's executable (kube-controller-manager), or comm, which the
// kernel cuts to 15 characters (kube-controller), when the link cannot be read.
func processName(pid int, comm string) string {
	if exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe")); err == nil {
		return filepath.Base(strings.TrimSuffix(exe, " (deleted)"))
	}
	return comm
}

// descends tells whether pid is a descendant of root.
func descends(procs map[int]proc.Stat, pid, root int) bool {
	for range len(procs) { // bounded: a torn read must not loop
		p, ok := procs[pid]
		if !ok || p.PPID == 0 {
			return false
		}
		if p.PPID == root {
			return true
		}
		pid = p.PPID
	}
	return false
}

// parseMachineCPU reads the machine's busy and available CPU seconds from /proc/stat's "cpu"
// line (user nice system idle iowait irq softirq steal ...): available is all of them, busy all
// but idle and iowait; guest times are already in user and nice.
func parseMachineCPU(stat string) (busy, available float64, err error) {
	var v [8]float64
	if _, err := fmt.Sscanf(stat, "cpu %g %g %g %g %g %g %g %g", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]); err != nil {
		return 0, 0, fmt.Errorf("unexpected first line of /proc/stat: %w", err)
	}
	for i, x := range v {
		available += x
		if i != 3 && i != 4 {
			busy += x
		}
	}
	return busy / proc.UserHZ, available / proc.UserHZ, nil
}

// cpuSince is the CPU used since base (by readCPU), or nil when either reading failed. A
// process absent from base started in between.
func cpuSince(base map[string]float64, baseErr error) map[string]float64 {
	now, err := readCPU()
	if err = errors.Join(baseErr, err); err != nil {
		logf("no CPU split by process: %v", err)
		return nil
	}
	for name := range now {
		now[name] -= base[name]
	}
	return now
}

// startCPUProfiles starts reading the CPU profiles of kube-apiserver and, in an operator case
// (m not nil), of the manager when s asks for them; wait returns once they are written (a
// failure is logged). They are named cpu-<process>-<UTC>-n<N>[-floor]-c<c>-q<qps>.pb.gz.
func startCPUProfiles(ctx context.Context, admin *rest.Config, m *benchManager, bc benchCase, s settings) (wait func()) {
	var wg sync.WaitGroup
	if s.cpuProfileDir == "" {
		return wg.Wait
	}
	kind := map[bool]string{true: "-floor"}[bc.Floor]
	name := fmt.Sprintf("%s-n%d%s-c%d-q%g.pb.gz", time.Now().UTC().Format(stampLayout), bc.N, kind, bc.Concurrency, bc.QPS)
	profile := func(who string, hc *http.Client, base string) {
		wg.Go(func() {
			raw, err := httpGet(ctx, hc, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, int(s.cpuProfileDuration.Seconds())))
			if err == nil {
				err = os.WriteFile(filepath.Join(s.cpuProfileDir, "cpu-"+who+"-"+name), raw, 0o644)
			}
			if err != nil {
				logf("no CPU profile of %s: %v", who, err)
			}
		})
	}
	if hc, err := rest.HTTPClientFor(admin); err != nil {
		logf("no CPU profile of kube-apiserver: %v", err)
	} else {
		profile("kube-apiserver", hc, strings.TrimSuffix(admin.Host, "/"))
	}
	if m != nil {
		profile("manager", http.DefaultClient, m.pprofURL)
	}
	return wg.Wait
}

// heapEntry is one line of a heap profile's top: a function and the bytes in use that it
// allocated itself (flat inuse_space), as "go tool pprof -top -sample_index=inuse_space" shows.
type heapEntry struct {
	Function   string `json:"function"`
	InuseBytes int64  `json:"inuseBytes"`
}

// heapTop reads the manager's heap profile (after a GC) from its pprof endpoint at base and
// returns the top 10 functions by flat inuse_space, and the total in use. When keep is not
// empty the profile, as the manager served it, is also written to that file.
func heapTop(ctx context.Context, base, keep string) ([]heapEntry, int64, error) {
	raw, err := httpGet(ctx, http.DefaultClient, base+"/debug/pprof/heap?gc=1")
	if err == nil && keep != "" {
		err = os.WriteFile(keep, raw, 0o644)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("reading the heap profile: %w", err)
	}
	p, err := profile.Parse(bytes.NewReader(raw))
	if err != nil {
		return nil, 0, fmt.Errorf("parsing the heap profile: %w", err)
	}
	top, total := topInuse(p, 10)
	return top, total, nil
}

// topInuse sums each sample's inuse_space to the function of its leaf frame and returns the n
// largest, and the total.
func topInuse(p *profile.Profile, n int) ([]heapEntry, int64) {
	index := slices.IndexFunc(p.SampleType, func(t *profile.ValueType) bool { return t.Type == "inuse_space" })
	if index < 0 {
		return nil, 0
	}
	flat := map[string]int64{}
	var total int64
	for _, s := range p.Sample {
		name := "?"
		if len(s.Location) > 0 && len(s.Location[0].Line) > 0 && s.Location[0].Line[0].Function != nil {
			name = s.Location[0].Line[0].Function.Name
		}
		flat[name] += s.Value[index]
		total += s.Value[index]
	}
	var top []heapEntry
	for f, v := range flat {
		top = append(top, heapEntry{Function: f, InuseBytes: v})
	}
	slices.SortFunc(top, func(a, b heapEntry) int {
		return cmp.Or(cmp.Compare(b.InuseBytes, a.InuseBytes), cmp.Compare(a.Function, b.Function))
	})
	return top[:min(n, len(top))], total
}
