package main

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

func costCase(floor bool, n int, qps float64, cpu map[string]float64, p50, p99 float64, failed bool) result {
	r := result{Case: benchCase{Floor: floor, N: n, Concurrency: 16, QPS: qps, Burst: 100}, CPUByProcess: cpu,
		FirstPassP50Sec: p50, FirstPassP99Sec: p99}
	if failed {
		r.Error = "did not converge"
	}
	return r
}

// TestCostGroups pairs each operator case with the floor case of its N that ran last before it,
// once, and leaves out failed cases and operator cases without a floor.
func TestCostGroups(t *testing.T) {
	cpu := func(apiserver, manager float64) map[string]float64 {
		m := map[string]float64{"kube-apiserver": apiserver, "(machine busy)": 1000}
		if manager > 0 {
			m["manager"] = manager
		}
		return m
	}
	results := []result{
		costCase(false, 100, 50, cpu(1, 1), 1, 1, false), // no floor before it: left out
		costCase(true, 1000, 0, cpu(100, 0), 0.1, 0.2, false),
		costCase(false, 1000, 50, cpu(120, 10), 0.2, 0.6, false),  // pairs with the floor above: +30 %
		costCase(false, 1000, 200, cpu(150, 10), 0.2, 0.6, false), // that floor is used: left out
		costCase(true, 1000, 0, cpu(200, 0), 0.2, 0.4, false),
		costCase(true, 1000, 0, cpu(100, 0), 0.1, 0.1, true),     // failed: the floor above stays
		costCase(false, 1000, 50, cpu(200, 40), 0.3, 0.4, false), // +20 %
	}
	all := groups(results)
	var got []string
	for _, g := range all {
		got = append(got, fmt.Sprintf("N=%d %s: %d pairs", g.N, g.Config, len(g.Pairs)))
	}
	want := []string{"N=100 c=16 q=50/100: 0 pairs", "N=1000 c=16 q=200/100: 0 pairs", "N=1000 c=16 q=50/100: 2 pairs"}
	if !slices.Equal(got, want) {
		t.Fatalf("groups = %q, want %q", got, want)
	}
	g := all[2]
	if g.Pairs[1].Floor.CPUByProcess["kube-apiserver"] != 200 {
		t.Errorf("second pair's floor = %+v, want the one of 200 s", g.Pairs[1].Floor)
	}
	added := g.pairFigures(costPair.addedCPU)
	if len(added) != 2 || math.Abs(added[0]-0.3) > 1e-9 || math.Abs(added[1]-0.2) > 1e-9 {
		t.Errorf("added CPU = %v, want [0.3 0.2] (the machine's rows left out)", added)
	}
	// p50: 0.2/0.1 = 2 and 0.3/0.2 = 1.5; p99: 3 and 1.
	if got := g.firstPassRatio(p50First); math.Abs(got-1.75) > 1e-9 {
		t.Errorf("first pass p50 ratio = %v, want 1.75", got)
	}
	if got := g.firstPassRatio(p99First); math.Abs(got-2) > 1e-9 {
		t.Errorf("first pass p99 ratio = %v, want 2", got)
	}
}

func TestSpreadOf(t *testing.T) {
	s := spreadOf([]float64{0.1, 0.2, 0.3, 0.4})
	// mean 0.25; sample sd = sqrt(((0.15²+0.05²)×2)/3) = 0.1291; half = 3.182 × 0.1291 / 2 = 0.2054.
	if math.Abs(s.Mean-0.25) > 1e-9 || s.Min != 0.1 || s.Max != 0.4 || math.Abs(s.Half-0.2054) > 1e-3 {
		t.Errorf("spread = %+v, want mean 0.25, 0.1–0.4, ± 0.205", s)
	}
	if one := spreadOf([]float64{0.3}); one.Half != 0 || one.Mean != 0.3 {
		t.Errorf("one value: %+v", one)
	}
	if none := spreadOf(nil); none != (spread{}) {
		t.Errorf("no value: %+v", none)
	}
}
