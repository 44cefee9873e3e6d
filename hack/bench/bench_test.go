package main

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/seed1b407122/database-operator/test/harness/leader"
	"github.com/seed1b407122/database-operator/test/harness/proc"
)

func TestParseMetrics(t *testing.T) {
	text := `# HELP rest_client_requests_total x
rest_client_requests_total{code="200",host="127.0.0.1:1",method="PATCH"} 12
rest_client_requests_total{code="201",host="127.0.0.1:1",method="POST"} 3
go_memstats_heap_alloc_bytes 1.5e+07
apiserver_request_total{verb="POST",resource="a\"b"} 2
# TYPE workqueue_queue_duration_seconds histogram
workqueue_queue_duration_seconds_bucket{name="databasecluster",le="0.1"} 3
workqueue_queue_duration_seconds_bucket{name="databasecluster",le="+Inf"} 4
workqueue_queue_duration_seconds_sum{name="databasecluster"} 1.5
workqueue_queue_duration_seconds_count{name="databasecluster"} 4
# TYPE go_gc_duration_seconds summary
go_gc_duration_seconds{quantile="0.5"} 0.001
go_gc_duration_seconds_sum 0.5
go_gc_duration_seconds_count 260
database_operator_resource_condition{kind="DatabaseCluster"} 1
`
	samples, err := parseMetrics([]byte(text), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := sum(samples, "rest_client_requests_total", nil); got != 15 {
		t.Errorf("sum = %v, want 15", got)
	}
	if got := sum(samples, "rest_client_requests_total", map[string]string{"method": "POST"}); got != 3 {
		t.Errorf("POST = %v, want 3", got)
	}
	if got := sum(samples, "go_memstats_heap_alloc_bytes", nil); got != 1.5e7 {
		t.Errorf("heap = %v", got)
	}
	if got := sum(samples, "apiserver_request_total", map[string]string{"resource": `a"b`}); got != 2 {
		t.Errorf("escaped label = %v, want 2", got)
	}
	if got := systemWrites(samples); got != 2 {
		t.Errorf("systemWrites = %v, want 2", got)
	}
	if got := sum(samples, "go_gc_duration_seconds_count", nil); got != 260 {
		t.Errorf("GCs = %v, want 260 (a summary's _count)", got)
	}
	// One series per line of the text: 4 + 2 buckets, sum, count + quantile, sum, count + 1.
	if all, operator := seriesCounts(samples); all != 12 || operator != 1 {
		t.Errorf("seriesCounts = %d, %d; want 12, 1", all, operator)
	}
	if _, err := parseMetrics([]byte("a{b=\"c\" 1\n"), nil); err == nil {
		t.Error("a malformed line did not fail")
	}
}

func TestPercentile(t *testing.T) {
	v := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if p := percentile(v, 0.5); p != 5 {
		t.Errorf("p50 = %v", p)
	}
	if p := percentile(v, 0.99); p != 10 {
		t.Errorf("p99 = %v", p)
	}
}

func TestLeaderModeAdd(t *testing.T) {
	m := leaderMode{Signal: "SIGKILL"}
	for _, total := range []time.Duration{16 * time.Second, 15 * time.Second, 17500 * time.Millisecond} {
		m.add(leader.Failover{Total: total, LeaseMoved: total - time.Second, Workers: total - 500*time.Millisecond,
			Changed: 10 * time.Millisecond, Applied: total})
	}
	if len(m.Runs) != 3 || m.Runs[2].TotalSec != 17.5 || m.Runs[2].AppliedSec != 17.5 {
		t.Fatalf("runs = %+v", m.Runs)
	}
	if want := (leader.Summary{Runs: 3, MinSec: 15, MedianSec: 16, MaxSec: 17.5}); m.Total != want {
		t.Errorf("total = %+v, want %+v", m.Total, want)
	}
	if want := (leader.Summary{Runs: 3, MinSec: 14, MedianSec: 15, MaxSec: 16.5}); m.LeaseMoved != want {
		t.Errorf("lease moved = %+v, want %+v", m.LeaseMoved, want)
	}
	if m.Workers.MedianSec != 15.5 {
		t.Errorf("workers median = %v, want 15.5", m.Workers.MedianSec)
	}
}

func TestBuildCases(t *testing.T) {
	opts := func(ns, concs, qpss, bursts, manager string, floor bool, repeat int) *options {
		return &options{ns: ns, concs: concs, qpss: qpss, bursts: bursts, floor: floor, repeat: repeat, s: settings{manager: manager}}
	}
	got, err := buildCases(opts("100,300", "16", "50,-1", "100", "bin/manager", true, 2))
	if err != nil {
		t.Fatal(err)
	}
	a, b := benchCase{N: 100, Nodes: 3, Concurrency: 16, QPS: 50, Burst: 100}, benchCase{N: 100, Nodes: 3, Concurrency: 16, QPS: -1, Burst: 100}
	c, d := benchCase{N: 300, Nodes: 3, Concurrency: 16, QPS: 50, Burst: 100}, benchCase{N: 300, Nodes: 3, Concurrency: 16, QPS: -1, Burst: 100}
	f1, f3 := benchCase{Floor: true, N: 100, Nodes: 3, Concurrency: 16}, benchCase{Floor: true, N: 300, Nodes: 3, Concurrency: 16}
	want := []benchCase{f1, a, f1, b, f3, c, f3, d, f1, a, f1, b, f3, c, f3, d}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("buildCases = %v, want %v", got, want)
	}
	if got, _ := buildCases(opts("1000", "4", "50", "100", "bin/manager", false, 1)); len(got) != 1 || got[0].Nodes != 10 {
		t.Fatalf("buildCases without floor = %v, want one case on 10 nodes (1,100 pods at 110 per node)", got)
	}
	for _, bad := range [][4]string{{"0", "16", "50", "100"}, {"100", "x", "50", "100"}, {"100", "16", "50,500", "1,2,3"}} {
		if _, err := buildCases(opts(bad[0], bad[1], bad[2], bad[3], "bin/manager", false, 1)); err == nil {
			t.Errorf("buildCases(%q) did not fail", bad)
		}
	}
	// Two binaries: each case once per binary, each after a floor case of its own.
	two, err := buildCases(opts("1000", "16", "50", "100", "/tmp/a,/tmp/b", true, 1))
	if err != nil || len(two) != 4 || !two[0].Floor || two[1].Manager != "/tmp/a" || !two[2].Floor || two[3].Manager != "/tmp/b" {
		t.Errorf("two managers: %+v, %v", two, err)
	}
	if configLabel(two[3]) != "c=16 q=50/100 b" {
		t.Errorf("label = %q", configLabel(two[3]))
	}
}

func TestOverheads(t *testing.T) {
	op := benchCase{N: 100, Concurrency: 16, QPS: 50, Burst: 100}
	unlimited := op
	unlimited.QPS = -1
	results := []result{
		{Case: benchCase{Floor: true, N: 100}, ConvergenceSec: 10, LatencyP50Sec: 4, LatencyP99Sec: 8, CPUByProcess: busy(100)},
		{Case: op, ConvergenceSec: 12, LatencyP50Sec: 5, LatencyP99Sec: 10, CPUByProcess: busy(150)},
		{Case: benchCase{Floor: true, N: 100}, ConvergenceSec: 30, LatencyP50Sec: 6, LatencyP99Sec: 12, CPUByProcess: busy(140)},
		{Case: op, ConvergenceSec: 28, LatencyP50Sec: 7, LatencyP99Sec: 14, CPUByProcess: busy(174)},
		// another configuration: its own row; written without CPU figures, so no CPU ratio
		{Case: unlimited, ConvergenceSec: 40, LatencyP50Sec: 10, LatencyP99Sec: 20},
		{Case: benchCase{N: 300}, ConvergenceSec: 50},                                  // no floor of N=300: left out
		{Case: benchCase{Floor: true, N: 100}, ConvergenceSec: 99, Error: "timed out"}, // failed: left out
	}
	got := overheads(results)
	if len(got) != 2 || got[0].Config != "c=16 q=-1/100" || got[1].Config != "c=16 q=50/100" ||
		len(got[1].Floor) != 2 || len(got[1].Operator) != 2 || len(got[0].Operator) != 1 {
		t.Fatalf("overheads = %+v, want N=100 twice: q=-1 (1 case) and q=50 (2 cases), each with the 2 floor cases", got)
	}
	p50 := func(r result) float64 { return r.LatencyP50Sec }
	if c, p := got[1].ratio(convergence), got[1].ratio(p50); c != 1 || p != 1.2 {
		t.Fatalf("ratios = %v, %v; want 1 (means 20/20) and 1.2 (6/5)", c, p)
	}
	// busy CPU: operator (150+174)/2 = 162 over floor (100+140)/2 = 120
	if a, b := got[0].busyRatio(), got[1].busyRatio(); a != "—" || b != "1.35" {
		t.Fatalf("busyRatio = %q, %q; want \"—\" (no CPU figure) and 1.35", a, b)
	}
	if g := growth(results); g != nil {
		t.Fatalf("growth of two configurations = %+v, want nil (one curve per configuration)", g)
	}
}

// busy is a CPU split with only the machine's busy seconds.
func busy(seconds float64) map[string]float64 { return map[string]float64{machineBusy: seconds} }

func TestFloorChildren(t *testing.T) {
	children, err := floorChildren("db-00007")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range children {
		if refs := c.GetOwnerReferences(); len(refs) != 0 {
			t.Errorf("%T %s has owner references %v: the garbage collector would delete it", c, c.GetName(), refs)
		}
		if c.GetNamespace() != benchNamespace {
			t.Errorf("%T %s in namespace %q, want %q", c, c.GetName(), c.GetNamespace(), benchNamespace)
		}
		got = append(got, fmt.Sprintf("%T %s", c, c.GetName()))
	}
	// One replica: no PodDisruptionBudget, as the operator decides.
	want := []string{"*v1.Service db-00007-headless", "*v1.Service db-00007", "*v1.StatefulSet db-00007"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("children = %q, want %q", got, want)
	}
}

func TestTopInuse(t *testing.T) {
	fn := func(id uint64, name string) *profile.Location {
		return &profile.Location{ID: id, Line: []profile.Line{{Function: &profile.Function{ID: id, Name: name}}}}
	}
	decode, cache, other := fn(1, "json.Decode"), fn(2, "cache.Add"), fn(3, "other")
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "alloc_space"}, {Type: "inuse_space"}},
		Sample: []*profile.Sample{
			{Location: []*profile.Location{decode, cache}, Value: []int64{999, 300}},
			{Location: []*profile.Location{cache}, Value: []int64{999, 500}},
			{Location: []*profile.Location{decode}, Value: []int64{999, 100}},
			{Location: []*profile.Location{other}, Value: []int64{999, 50}},
		},
	}
	top, total := topInuse(p, 2)
	want := []heapEntry{{Function: "cache.Add", InuseBytes: 500}, {Function: "json.Decode", InuseBytes: 400}}
	if !reflect.DeepEqual(top, want) || total != 950 {
		t.Fatalf("topInuse = %v, %d; want %v, 950 (flat: by the leaf frame)", top, total, want)
	}
}

func TestGrowthTable(t *testing.T) {
	op := func(n int, conv, writes float64, rss float64) result {
		return result{Case: benchCase{N: n, Concurrency: 16, QPS: -1, Burst: 100}, ConvergenceSec: conv,
			WritesPerCluster: writes, RSSPer1000: rss * 1024 * 1024, ManagerCPUSec: float64(n) * 0.02}
	}
	floor := func(n int, conv float64) result {
		return result{Case: benchCase{Floor: true, N: n}, ConvergenceSec: conv}
	}
	results := []result{floor(100, 10), op(100, 12, 8, 40), floor(1000, 80), op(1000, 120, 7.5, 30), op(1000, 100, 7.5, 30)}
	results[4].ManagerCPUSec = 30 // 20 and 30 ms per cluster: a mean of 25
	f := resultFile{Name: "r/20260101T000000Z-x.json", Link: "x.json", Rep: report{Results: results}}
	got := growthTable([]resultFile{f}).rows
	want := [][]string{
		{"[20260101T000000Z](x.json)", "100", "10.0", "12.0", "1.20", "8.00", "40.0", "20"},
		{"[20260101T000000Z](x.json)", "1000", "80.0", "110.0", "1.38", "7.50", "30.0", "25"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("growth rows = %q, want %q", got, want)
	}
	f.Rep.Results = results[:2]
	if rows := growthTable([]resultFile{f}).rows; rows != nil {
		t.Fatalf("growth of one N = %q, want no rows", rows)
	}
}

// Lines as kube-apiserver 1.37 writes them at the Metadata level (fields the counter does not
// read left out).
const (
	auditPatchStatus = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"ResponseComplete",` +
		`"requestURI":"/apis/database.seed1b407122.io/v1alpha1/namespaces/bench/databaseclusters/db-1/status","verb":"patch",` +
		`"user":{"username":"bench-manager"},"objectRef":{"resource":"databaseclusters","namespace":"bench","name":"db-1",` +
		`"apiGroup":"database.seed1b407122.io","apiVersion":"v1alpha1","subresource":"status"},"responseStatus":{"metadata":{},"code":200}}`
	auditCreateService = `{"stage":"ResponseComplete","requestURI":"/api/v1/namespaces/bench/services","verb":"create",` +
		`"objectRef":{"resource":"services","namespace":"bench","apiVersion":"v1"},"responseStatus":{"code":201}}`
	auditWatchStarted = `{"stage":"ResponseStarted","requestURI":"/api/v1/pods?watch=true","verb":"watch",` +
		`"objectRef":{"resource":"pods","apiVersion":"v1"},"responseStatus":{"code":200}}`
	auditWatchEnded = `{"stage":"ResponseComplete","requestURI":"/api/v1/pods?watch=true","verb":"watch",` +
		`"objectRef":{"resource":"pods","apiVersion":"v1"},"responseStatus":{"code":200}}`
	auditDiscovery = `{"stage":"ResponseComplete","requestURI":"/apis/apps/v1","verb":"get","responseStatus":{"code":200}}`
	auditConflict  = `{"stage":"ResponseComplete","requestURI":"/apis/apps/v1/namespaces/bench/statefulsets","verb":"create",` +
		`"objectRef":{"resource":"statefulsets","namespace":"bench","apiGroup":"apps","apiVersion":"v1"},"responseStatus":{"code":409}}`
)

func TestParseAuditEvent(t *testing.T) {
	for _, tc := range []struct {
		line, key string
		counted   bool
	}{
		{auditPatchStatus, "patch databaseclusters.database.seed1b407122.io/status", true},
		{auditCreateService, "create services", true},
		{auditWatchStarted, "watch pods", true},
		{auditWatchEnded, "", false}, // counted when it started
		{auditDiscovery, "get nonresource/apis/apps/v1", true},
		{auditConflict, "create statefulsets.apps", true},
	} {
		key, counted, err := parseAuditEvent([]byte(tc.line))
		if err != nil || key != tc.key || counted != tc.counted {
			t.Errorf("parseAuditEvent(%.60s...) = %q, %v, %v; want %q, %v", tc.line, key, counted, err, tc.key, tc.counted)
		}
	}
	if _, _, err := parseAuditEvent([]byte("{not json")); err == nil {
		t.Error("a line that is not JSON did not fail")
	}
}

// TestReadAudit: a snapshot counts every complete line, and a line cut in the middle once it is
// complete.
func TestReadAudit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	if got, err := readAudit(path); err != nil || len(got.ByVerbResource) != 0 {
		t.Fatalf("before the log exists: %v, %v; want nothing counted and no error", got, err)
	}
	for _, tc := range []struct {
		log  string
		want requestCounts
	}{
		{auditCreateService + "\n" + auditPatchStatus[:40],
			requestCounts{ByVerbResource: map[string]int64{"create services": 1}}},
		{auditCreateService + "\n" + auditPatchStatus + "\n" + auditWatchStarted + "\n" + auditWatchEnded + "\n" + auditCreateService + "\n",
			requestCounts{ByVerbResource: map[string]int64{"create services": 2, "patch databaseclusters.database.seed1b407122.io/status": 1,
				"watch pods": 1}}},
	} {
		writeFile(t, path, tc.log)
		if got, err := readAudit(path); err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Fatalf("readAudit = %v, %v; want %v", got, err, tc.want)
		}
	}
}

func TestParseMachineCPU(t *testing.T) {
	stat := "cpu  100 20 30 400 50 6 7 8 9 10\ncpu0 1 2 3 4 5 6 7 8 9 10\n"
	busy, available, err := parseMachineCPU(stat)
	if err != nil {
		t.Fatal(err)
	}
	// busy: user nice system irq softirq steal = 100+20+30+6+7+8; available adds idle 400, iowait 50.
	if busy != 1.71 || available != 6.21 {
		t.Fatalf("busy, available = %v, %v; want 1.71, 6.21", busy, available)
	}
	if _, _, err := parseMachineCPU("intr 1 2 3\n"); err == nil {
		t.Error("a file without the cpu line did not fail")
	}
}

func TestDescends(t *testing.T) {
	procs := map[int]proc.Stat{
		1: {PPID: 0}, 10: {PPID: 1}, 20: {PPID: 10}, 30: {PPID: 20}, 40: {PPID: 1}, 50: {PPID: 99},
	}
	for pid, want := range map[int]bool{20: true, 30: true, 10: false, 40: false, 50: false, 77: false} {
		if got := descends(procs, pid, 10); got != want {
			t.Errorf("descends(%d, 10) = %v, want %v", pid, got, want)
		}
	}
}

// TestReadCPUSeesItself: this process has its row and the machine its totals.
func TestReadCPUSeesItself(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	r, err := readCPU()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r[selfName]; !ok || r[machineAvailable] <= 0 || r[machineBusy] <= 0 {
		t.Fatalf("readCPU = %+v: no row of this process or no machine totals", r)
	}
	if got := processName(os.Getpid(), "cut"); got != filepath.Base(os.Args[0]) {
		t.Errorf("processName(self) = %q, want the executable's name %q", got, filepath.Base(os.Args[0]))
	}
	if got := processName(-1, "cut"); got != "cut" {
		t.Errorf("processName of no process = %q, want the comm it was given", got)
	}
}

// TestMemoryParts: the anonymous and file-backed RSS of a live process (this test's) and the
// runtime's figures of a /metrics text, each under its name prefixed with when.
func TestMemoryParts(t *testing.T) {
	samples, err := parseMetrics([]byte("go_memstats_heap_sys_bytes 7.3e+07\ngo_memstats_heap_released_bytes 3e+06\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	proc, err := procMemoryParts(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	parts := map[string]float64{}
	memoryParts(parts, "end", snapshot{manager: samples, proc: proc})
	if parts["end go_memstats_heap_sys_bytes"] != 7.3e7 || parts["end go_memstats_heap_released_bytes"] != 3e6 {
		t.Errorf("memstats parts = %v, want heap sys 7.3e7 and released 3e6", parts)
	}
	if parts["end RssAnon"] <= 0 || parts["end RssFile"] <= 0 {
		t.Errorf("RssAnon %v, RssFile %v of a live process, want both above 0", parts["end RssAnon"], parts["end RssFile"])
	}
	if want := len(memstatsParts) + 2; len(parts) != want {
		t.Errorf("%d parts, want %d: %v", len(parts), want, parts)
	}
}

// TestCacheBinaryReadsTheFile: a file that exists is read to its end; one that does not is an
// error that says what failed.
func TestCacheBinaryReadsTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "manager")
	if err := os.WriteFile(path, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := cacheBinary(path); err != nil {
		t.Fatalf("cacheBinary(%s) = %v", path, err)
	}
	if err := cacheBinary(path + "-missing"); err == nil || !strings.Contains(err.Error(), "page cache") {
		t.Fatalf("cacheBinary of a missing file = %v, want an error about the page cache", err)
	}
}
