package main

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The cost (issue 36, docs/benchmarks.md's *Cost*) compares each operator case with the floor
// case of its N that ran just before it (group.Pairs): -floor alternates them, so a drift of the
// machine touches both sides of a pair alike.

// costPair is an operator case and the floor case that ran just before it.
type costPair struct{ Floor, Operator result }

// processCPU is the CPU seconds of r's processes, the machine's rows ("(machine busy)") aside,
// summed in the order of their names so that the last digit does not depend on a map's order.
func processCPU(r result) float64 {
	total := 0.0
	for _, name := range slices.Sorted(maps.Keys(r.CPUByProcess)) {
		if !strings.HasPrefix(name, "(") {
			total += r.CPUByProcess[name]
		}
	}
	return total
}

// addedCPU is the pair's added CPU ratio, or NaN when a side has no CPU figure.
func (p costPair) addedCPU() float64 {
	floor := processCPU(p.Floor)
	if floor == 0 || processCPU(p.Operator) == 0 {
		return math.NaN()
	}
	return (processCPU(p.Operator) - floor) / floor
}

// spread is the mean of values, its minimum and maximum, and the half-width of its 95% interval
// (Student's t; 0 with fewer than two values).
type spread struct{ Mean, Min, Max, Half float64 }

// tQuantile975 is Student's t at 0.975 by degrees of freedom (1 to 10; 1.96 beyond 30).
var tQuantile975 = []float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228}

func spreadOf(xs []float64) spread {
	if len(xs) == 0 {
		return spread{}
	}
	s := spread{Mean: meanOf(xs), Min: slices.Min(xs), Max: slices.Max(xs)}
	if n := len(xs); n > 1 {
		ss := 0.0
		for _, x := range xs {
			ss += (x - s.Mean) * (x - s.Mean)
		}
		t := 1.96
		switch df := n - 1; {
		case df <= len(tQuantile975):
			t = tQuantile975[df-1]
		case df <= 30:
			t = 2.1
		}
		s.Half = t * math.Sqrt(ss/float64(n-1)) / math.Sqrt(float64(n))
	}
	return s
}

func meanOf(xs []float64) float64 {
	total := 0.0
	for _, x := range xs {
		total += x
	}
	return total / float64(max(len(xs), 1))
}

// pairFigures is figure of every pair of g, NaNs left out.
func (g group) pairFigures(figure func(costPair) float64) []float64 {
	var out []float64
	for _, p := range g.Pairs {
		if v := figure(p); !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	return out
}

// firstPassRatio is the mean over g's pairs of the operator's first-pass percentile ÷ the
// floor's, or 0 when the results predate the figure.
func (g group) firstPassRatio(pct func(result) float64) float64 {
	return meanOf(g.pairFigures(func(p costPair) float64 {
		if pct(p.Floor) == 0 || pct(p.Operator) == 0 {
			return math.NaN()
		}
		return pct(p.Operator) / pct(p.Floor)
	}))
}

func p50First(r result) float64 { return r.FirstPassP50Sec }
func p99First(r result) float64 { return r.FirstPassP99Sec }

// costTable answers goals 1 and 2: a row per N and operator configuration.
func costTable(files []resultFile) mdTable {
	t := mdTable{header: []string{colRun, "N", colOperator, "pairs", "added CPU (mean)", "min – max", "95% interval",
		"first pass p50 s, floor → operator", "p99 s, floor → operator", "first pass ÷ floor, p50 / p99"}}
	for _, f := range files {
		for _, g := range groups(f.Rep.Results) {
			if len(g.Pairs) == 0 {
				continue
			}
			s := spreadOf(g.pairFigures(costPair.addedCPU))
			t.add(runLink(f), strconv.Itoa(g.N), g.Config, strconv.Itoa(len(g.Pairs)), fixed(s.Mean, 2),
				fixed(s.Min, 2)+" – "+fixed(s.Max, 2), "± "+fixed(s.Half, 2),
				meanCells(g, p50First), meanCells(g, p99First),
				measuredCell(g.firstPassRatio(p50First), 2)+" / "+measuredCell(g.firstPassRatio(p99First), 2))
		}
	}
	return t
}

// meanCells is the floor's and the operator's mean of figure over g's pairs.
func meanCells(g group, figure func(result) float64) string {
	floor := meanOf(g.pairFigures(func(p costPair) float64 { return figure(p.Floor) }))
	operator := meanOf(g.pairFigures(func(p costPair) float64 { return figure(p.Operator) }))
	if floor == 0 || operator == 0 {
		return "—" // results from before the figure
	}
	return fixed(floor, 2) + " → " + fixed(operator, 2)
}

// costByProcessTable says where the added CPU goes: for each process, the floor's CPU per
// cluster and what the operator case adds to it, in ms, means over the pairs.
func costByProcessTable(files []resultFile) mdTable {
	t := mdTable{header: []string{colRun, "N", colOperator, "process", "floor ms/DC", "added ms/DC", "share of the added"}}
	for _, f := range files {
		for _, g := range groups(f.Rep.Results) {
			if len(g.Pairs) == 0 {
				continue
			}
			mean := func(figure func(costPair) float64) float64 { return meanOf(g.pairFigures(figure)) }
			perDC := func(r result, name string) float64 { return r.CPUByProcess[name] * 1000 / float64(g.N) }
			total := mean(func(p costPair) float64 { return (processCPU(p.Operator) - processCPU(p.Floor)) * 1000 / float64(g.N) })
			names := map[string]bool{}
			for _, p := range g.Pairs {
				for _, r := range []result{p.Floor, p.Operator} {
					for name := range r.CPUByProcess {
						if !strings.HasPrefix(name, "(") { // the machine's rows aside
							names[name] = true
						}
					}
				}
			}
			for _, name := range slices.Sorted(maps.Keys(names)) {
				floor := mean(func(p costPair) float64 { return perDC(p.Floor, name) })
				added := mean(func(p costPair) float64 { return perDC(p.Operator, name) - perDC(p.Floor, name) })
				t.add(runLink(f), strconv.Itoa(g.N), g.Config, name, fixed(floor, 1), fixed(added, 1), fixed(100*added/total, 0)+" %")
			}
			floor := mean(func(p costPair) float64 { return processCPU(p.Floor) * 1000 / float64(g.N) })
			t.add(runLink(f), strconv.Itoa(g.N), g.Config, "all", fixed(floor, 1), fixed(total, 1), "100 %")
		}
	}
	return t
}
