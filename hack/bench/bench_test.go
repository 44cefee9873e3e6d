package main

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/seed1b407122/database-operator/test/harness/leader"
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
	samples, err := parseMetrics(strings.NewReader(text))
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
	base := []sample{{"workqueue_queue_duration_seconds_sum", map[string]string{"name": "databasecluster"}, 0.5},
		{"workqueue_queue_duration_seconds_count", map[string]string{"name": "databasecluster"}, 2}}
	if got := histogramMean(base, samples, "workqueue_queue_duration_seconds", map[string]string{"name": "databasecluster"}); got != 0.5 {
		t.Errorf("mean queue wait = %v, want 0.5 ((1.5-0.5)/(4-2))", got)
	}
	// One series per line of the text: 4 + 2 buckets, sum, count + quantile, sum, count + 1.
	if all, operator := seriesCounts(samples); all != 12 || operator != 1 {
		t.Errorf("seriesCounts = %d, %d; want 12, 1", all, operator)
	}
	if _, err := parseMetrics(strings.NewReader("a{b=\"c\" 1\n")); err == nil {
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

func TestWithFloor(t *testing.T) {
	a, b := benchCase{N: 100, Nodes: 3, Concurrency: 16}, benchCase{N: 300, Nodes: 4, Concurrency: 16}
	got := withFloor([]benchCase{a, b}, true, 2)
	fa, fb := benchCase{Floor: true, N: 100, Nodes: 3, Concurrency: 16}, benchCase{Floor: true, N: 300, Nodes: 4, Concurrency: 16}
	want := []benchCase{fa, a, fb, b, fa, a, fb, b}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("withFloor = %v, want %v", got, want)
	}
	if got := withFloor([]benchCase{a}, false, 1); !reflect.DeepEqual(got, []benchCase{a}) {
		t.Fatalf("withFloor without floor = %v, want the cases as they are", got)
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
