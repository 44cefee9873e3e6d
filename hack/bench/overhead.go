package main

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// overhead compares, for one N and one operator configuration, the operator cases of a run
// with its floor cases of that N.
type overhead struct {
	N int
	// Config is the operator cases' concurrency and QPS/burst, as the tables write them.
	Config string
	// Floor and Operator are the cases' convergence (all converged), p50 and p99 latency in
	// seconds, in the order they ran; failed cases are left out.
	Floor, Operator []triple
	// FloorBusy and OperatorBusy are the machine's busy CPU seconds of the same cases while they
	// converged (cpuSecondsByProcess); 0 in results written before the bench measured it.
	FloorBusy, OperatorBusy []float64
}

// triple is convergence, p50 and p99 of one case, in seconds.
type triple [3]float64

// mean is the mean of each component of ts.
func mean(ts []triple) triple {
	var m triple
	for _, t := range ts {
		for i := range m {
			m[i] += t[i] / float64(len(ts))
		}
	}
	return m
}

// ratio is the operator's mean over the floor's mean, per component: the overhead of having the
// operator in the loop.
func (o overhead) ratio() triple {
	f, op := mean(o.Floor), mean(o.Operator)
	var r triple
	for i := range r {
		if f[i] > 0 {
			r[i] = op[i] / f[i]
		}
	}
	return r
}

// overheads pairs, for each N, every operator configuration's cases with the floor cases of
// that N; an N without both is left out.
func overheads(results []result) []overhead {
	floors := map[int][]triple{}
	floorBusy := map[int][]float64{}
	byKey := map[string]*overhead{}
	for _, r := range results {
		if r.Error != "" {
			continue
		}
		t := triple{r.ConvergenceSec, r.LatencyP50Sec, r.LatencyP99Sec}
		busy := r.CPUByProcess[machineBusy]
		if r.Case.Floor {
			floors[r.Case.N] = append(floors[r.Case.N], t)
			floorBusy[r.Case.N] = append(floorBusy[r.Case.N], busy)
			continue
		}
		config := fmt.Sprintf("c=%d q=%g/%d", r.Case.Concurrency, r.Case.QPS, r.Case.Burst)
		key := fmt.Sprintf("%d %s", r.Case.N, config)
		if byKey[key] == nil {
			byKey[key] = &overhead{N: r.Case.N, Config: config}
		}
		byKey[key].Operator = append(byKey[key].Operator, t)
		byKey[key].OperatorBusy = append(byKey[key].OperatorBusy, busy)
	}
	var out []overhead
	for _, o := range byKey {
		if f := floors[o.N]; len(f) > 0 {
			o.Floor, o.FloorBusy = f, floorBusy[o.N]
			out = append(out, *o)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].N != out[j].N {
			return out[i].N < out[j].N
		}
		return out[i].Config < out[j].Config
	})
	return out
}

// busyRatio is the operator cases' mean busy CPU over the floor cases', or "—" when a case
// has no CPU figure. On a machine whose cores are all busy in both, it is what the overhead
// should be if the operator's cost were only the CPU it (and the work it asks of the others)
// takes.
func (o overhead) busyRatio() string {
	f, op := meanOf1(o.FloorBusy), meanOf1(o.OperatorBusy)
	if f <= 0 || op <= 0 || slices.Contains(o.FloorBusy, 0) || slices.Contains(o.OperatorBusy, 0) {
		return "—"
	}
	return fixed(op/f, 2)
}

// convergences lists the convergence seconds of ts, comma separated.
func convergences(ts []triple) string {
	var parts []string
	for _, t := range ts {
		parts = append(parts, fixed(t[0], 1))
	}
	return strings.Join(parts, ", ")
}

// overheadRows are the rows of the overhead table, one per N.
func overheadRows(os []overhead) [][]string {
	var rows [][]string
	for _, o := range os {
		f, op, r := mean(o.Floor), mean(o.Operator), o.ratio()
		rows = append(rows, []string{strconv.Itoa(o.N), o.Config, convergences(o.Floor), convergences(o.Operator),
			fixed(f[1], 1) + " / " + fixed(f[2], 1), fixed(op[1], 1) + " / " + fixed(op[2], 1),
			fixed(r[0], 2), fixed(r[1], 2) + " / " + fixed(r[2], 2), o.busyRatio()})
	}
	return rows
}

var overheadHeader = []string{"N", "operator", "floor converge s", "operator converge s", "floor p50 / p99 s", "operator p50 / p99 s",
	"overhead (converge)", "overhead p50 / p99", "busy CPU, operator ÷ floor"}

// printOverhead prints the overhead table of results, if any N has both kinds of case.
func printOverhead(w io.Writer, results []result) {
	rows := overheadRows(overheads(results))
	if len(rows) == 0 {
		return
	}
	_, _ = fmt.Fprintln(w, "\nOverhead against the floor (means of the cases; operator ÷ floor):")
	_, _ = fmt.Fprintln(w, strings.Join(overheadHeader, " | "))
	for _, row := range rows {
		_, _ = fmt.Fprintln(w, strings.Join(row, " | "))
	}
}

// writeOverheadTable renders the overhead table of the file, if any N has both kinds of case.
func writeOverheadTable(b *bytes.Buffer, f resultFile) {
	rows := overheadRows(overheads(f.Rep.Results))
	if len(rows) == 0 {
		return
	}
	caption(b, f, "Overhead against the floor: the operator's convergence over the floor's (no operator, the same children), means of the cases in the order they ran", "results[] with case.floor")
	t := mdTable{header: overheadHeader, right: []bool{true, false, true, true, true, true, true, true, true}}
	for _, row := range rows {
		t.add(row...)
	}
	t.write(b)
}
