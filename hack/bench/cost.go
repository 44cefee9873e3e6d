package main

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The cost questions (issue 36) compare each operator case with the floor case that ran just
// before it, of the same N: an invocation with -floor alternates them (floor, operator, floor,
// operator, ...), so a drift of the machine touches both sides of a pair alike.
//
//   - Added CPU: (the CPU of every process of the operator case − the floor case's) ÷ the floor
//     case's. Every process is the control plane's, the simulated nodes', the benchmark's own
//     clients and CSI simulator, and the manager; the machine's rows are not (other work on the
//     machine does not count). Reported as the mean of the pairs with its spread.
//   - First pass: a cluster's create → its StatefulSet seen, operator ÷ floor, of the p50 and of
//     the p99 (means over the pairs).

// costPair is an operator case and the floor case that ran just before it.
type costPair struct{ Floor, Operator result }

// costGroup is the pairs of one N and one operator configuration.
type costGroup struct {
	N      int
	Config string
	Pairs  []costPair
}

// costGroups pairs every successful operator case of results with the successful floor case of
// its N that ran last before it (each floor case once), grouped by N and configuration.
func costGroups(results []result) []costGroup {
	lastFloor := map[int]*result{}
	byKey := map[string]*costGroup{}
	var keys []string
	for i, r := range results {
		switch {
		case r.Error != "":
		case r.Case.Floor:
			lastFloor[r.Case.N] = &results[i]
		case lastFloor[r.Case.N] != nil:
			key := caseLabel(r.Case)
			if byKey[key] == nil {
				byKey[key] = &costGroup{N: r.Case.N, Config: configLabel(r.Case)}
				keys = append(keys, key)
			}
			byKey[key].Pairs = append(byKey[key].Pairs, costPair{Floor: *lastFloor[r.Case.N], Operator: r})
			lastFloor[r.Case.N] = nil
		}
	}
	var out []costGroup
	for _, k := range keys {
		out = append(out, *byKey[k])
	}
	slices.SortFunc(out, func(a, b costGroup) int { return cmp.Or(cmp.Compare(a.N, b.N), cmp.Compare(a.Config, b.Config)) })
	return out
}

// processCPU is the CPU seconds of r's processes, the machine's rows ("(machine busy)") aside.
func processCPU(r result) float64 {
	total := 0.0
	for name, sec := range r.CPUByProcess {
		if !strings.HasPrefix(name, "(") {
			total += sec
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

// spread is the mean of xs, its minimum and maximum, and the half-width of its 95% interval
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
func (g costGroup) pairFigures(figure func(costPair) float64) []float64 {
	var out []float64
	for _, p := range g.Pairs {
		if v := figure(p); !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	return out
}

// firstPassRatio is the mean over g's pairs of the operator's first-pass percentile ÷ the
// floor's, or NaN when the results predate the figure.
func (g costGroup) firstPassRatio(pct func(result) float64) float64 {
	ratios := g.pairFigures(func(p costPair) float64 {
		if pct(p.Floor) == 0 || pct(p.Operator) == 0 {
			return math.NaN()
		}
		return pct(p.Operator) / pct(p.Floor)
	})
	if len(ratios) == 0 {
		return math.NaN()
	}
	return meanOf(ratios)
}

func p50First(r result) float64 { return r.FirstPassP50Sec }
func p99First(r result) float64 { return r.FirstPassP99Sec }

// costTable answers goals 1 and 2: a row per N and operator configuration.
func costTable(files []resultFile) mdTable {
	t := mdTable{header: []string{colRun, "N", colOperator, "pairs", "added CPU (mean)", "min – max", "95% interval",
		"first pass p50 s, floor → operator", "p99 s, floor → operator", "first pass ÷ floor, p50 / p99"}}
	for _, f := range files {
		for _, g := range costGroups(f.Rep.Results) {
			s := spreadOf(g.pairFigures(costPair.addedCPU))
			t.add(runLink(f), strconv.Itoa(g.N), g.Config, strconv.Itoa(len(g.Pairs)), fixed(s.Mean, 2),
				fixed(s.Min, 2)+" – "+fixed(s.Max, 2), "± "+fixed(s.Half, 2),
				meanCells(g, p50First), meanCells(g, p99First),
				ratioCell(g.firstPassRatio(p50First))+" / "+ratioCell(g.firstPassRatio(p99First)))
		}
	}
	return t
}

// meanCells is the floor's and the operator's mean of figure over g's pairs.
func meanCells(g costGroup, figure func(result) float64) string {
	floor := g.pairFigures(func(p costPair) float64 { return figure(p.Floor) })
	operator := g.pairFigures(func(p costPair) float64 { return figure(p.Operator) })
	if meanOf(floor) == 0 || meanOf(operator) == 0 {
		return "—" // results from before the figure
	}
	return fixed(meanOf(floor), 2) + " → " + fixed(meanOf(operator), 2)
}

func ratioCell(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fixed(v, 2)
}

// costByProcessTable says where the added CPU goes: for each process, the floor's CPU per
// cluster and what the operator case adds to it, in ms, means over the pairs.
func costByProcessTable(files []resultFile) mdTable {
	t := mdTable{header: []string{colRun, "N", colOperator, colProcess, "floor ms/DC", "added ms/DC", "share of the added"}}
	for _, f := range files {
		for _, g := range costGroups(f.Rep.Results) {
			perDC := func(r result, name string) float64 { return r.CPUByProcess[name] * 1000 / float64(g.N) }
			added := func(name string) float64 {
				return meanOf(g.pairFigures(func(p costPair) float64 { return perDC(p.Operator, name) - perDC(p.Floor, name) }))
			}
			total := meanOf(g.pairFigures(func(p costPair) float64 {
				return (processCPU(p.Operator) - processCPU(p.Floor)) * 1000 / float64(g.N)
			}))
			for _, name := range processNames(g) {
				floor := meanOf(g.pairFigures(func(p costPair) float64 { return perDC(p.Floor, name) }))
				more := added(name)
				t.add(runLink(f), strconv.Itoa(g.N), g.Config, name, fixed(floor, 1), fixed(more, 1),
					fixed(100*more/total, 0)+" %")
			}
			t.add(runLink(f), strconv.Itoa(g.N), g.Config, "all", fixed(meanOf(g.pairFigures(func(p costPair) float64 {
				return processCPU(p.Floor) * 1000 / float64(g.N)
			})), 1), fixed(total, 1), "100 %")
		}
	}
	return t
}

// processNames are the processes of g's cases, the machine's rows aside, sorted.
func processNames(g costGroup) []string {
	seen := map[string]bool{}
	for _, p := range g.Pairs {
		for _, r := range []result{p.Floor, p.Operator} {
			for name := range r.CPUByProcess {
				if !strings.HasPrefix(name, "(") {
					seen[name] = true
				}
			}
		}
	}
	return sortedKeys(seen)
}
