package main

import (
	"cmp"
	"slices"
	"strings"
)

// overhead compares, for one N and one operator configuration, the operator cases of a run
// with its floor cases of that N (the successful ones, in the order they ran).
type overhead struct {
	N               int
	Config          string
	Floor, Operator []result
}

// overheads pairs, for each N, every operator configuration's cases with the floor cases of
// that N, ordered by N and configuration; an N without both is left out.
func overheads(results []result) []overhead {
	floors := map[int][]result{}
	byKey := map[string]*overhead{}
	for _, r := range results {
		switch {
		case r.Error != "":
		case r.Case.Floor:
			floors[r.Case.N] = append(floors[r.Case.N], r)
		default:
			key := caseLabel(r.Case)
			if byKey[key] == nil {
				byKey[key] = &overhead{N: r.Case.N, Config: configLabel(r.Case)}
			}
			byKey[key].Operator = append(byKey[key].Operator, r)
		}
	}
	var out []overhead
	for _, o := range byKey {
		if o.Floor = floors[o.N]; len(o.Floor) > 0 {
			out = append(out, *o)
		}
	}
	slices.SortFunc(out, func(a, b overhead) int { return cmp.Or(cmp.Compare(a.N, b.N), cmp.Compare(a.Config, b.Config)) })
	return out
}

// growth is the overheads of a run of one operator configuration at two or more N, or nil:
// a growth curve compares one configuration.
func growth(results []result) []overhead {
	os := overheads(results)
	if len(os) < 2 || slices.ContainsFunc(os, func(o overhead) bool { return o.Config != os[0].Config }) {
		return nil
	}
	return os
}

// ratio is the operator cases' mean of figure over the floor cases': the overhead of having
// the operator in the loop.
func (o overhead) ratio(figure func(result) float64) float64 {
	if f := meanBy(o.Floor, figure); f > 0 {
		return meanBy(o.Operator, figure) / f
	}
	return 0
}

// busyRatio is the ratio of the machine's busy CPU, or "—" when a case has no CPU figure. On a
// machine whose cores are all busy in both, it is what the overhead should be if the
// operator's cost were only the CPU it (and the work it asks of the others) takes.
func (o overhead) busyRatio() string {
	noCPU := func(r result) bool { return r.CPUByProcess[machineBusy] == 0 }
	if slices.ContainsFunc(o.Floor, noCPU) || slices.ContainsFunc(o.Operator, noCPU) {
		return "—"
	}
	return fixed(o.ratio(func(r result) float64 { return r.CPUByProcess[machineBusy] }), 2)
}

// meanBy is the mean of figure over rs.
func meanBy(rs []result, figure func(result) float64) float64 {
	if len(rs) == 0 {
		return 0
	}
	total := 0.0
	for _, r := range rs {
		total += figure(r)
	}
	return total / float64(len(rs))
}

// convergences lists the convergence seconds of rs, comma separated.
func convergences(rs []result) string {
	var parts []string
	for _, r := range rs {
		parts = append(parts, fixed(r.ConvergenceSec, 1))
	}
	return strings.Join(parts, ", ")
}

func convergence(r result) float64 { return r.ConvergenceSec }
