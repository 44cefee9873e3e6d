package main

import (
	"bytes"
	"fmt"
	"sort"
)

// growthPoint is one row of the growth table: the means of the cases of one N.
type growthPoint struct {
	N                                        int
	Operator, Floor, Ratio, Writes, RSSPer1k float64
	// CPUPerCluster is the manager's CPU while the clusters converged, in milliseconds per
	// cluster; 0 when the results did not measure it.
	CPUPerCluster float64
}

// growthPoints are the means per N of the file's successful cases, in N order; nil when fewer
// than two N have an operator case, or when its operator cases differ in more than N
// (concurrency, QPS): a curve compares one configuration.
func growthPoints(results []result) []growthPoint {
	type acc struct{ op, floor, writes, rss, cpu []float64 }
	byN := map[int]*acc{}
	var config *benchCase
	for _, r := range results {
		if r.Error != "" {
			continue
		}
		if !r.Case.Floor {
			c := r.Case
			c.N, c.Nodes = 0, 0
			if config != nil && *config != c {
				return nil
			}
			config = &c
		}
		a := byN[r.Case.N]
		if a == nil {
			a = &acc{}
			byN[r.Case.N] = a
		}
		if r.Case.Floor {
			a.floor = append(a.floor, r.ConvergenceSec)
			continue
		}
		a.op = append(a.op, r.ConvergenceSec)
		a.writes = append(a.writes, r.WritesPerCluster)
		a.rss = append(a.rss, mib(r.RSSPer1000))
		a.cpu = append(a.cpu, r.ManagerCPUSec*1000/float64(r.Case.N))
	}
	var points []growthPoint
	for n, a := range byN {
		if len(a.op) == 0 {
			continue
		}
		p := growthPoint{N: n, Operator: meanOf1(a.op), Floor: meanOf1(a.floor), Writes: meanOf1(a.writes),
			RSSPer1k: meanOf1(a.rss), CPUPerCluster: meanOf1(a.cpu)}
		if p.Floor > 0 {
			p.Ratio = p.Operator / p.Floor
		}
		points = append(points, p)
	}
	if len(points) < 2 {
		return nil
	}
	sort.Slice(points, func(i, j int) bool { return points[i].N < points[j].N })
	return points
}

func meanOf1(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// writeGrowth shows the file's growth SVG and its figures, when it has one.
func writeGrowth(b *bytes.Buffer, f resultFile) {
	points := growthPoints(f.Rep.Results)
	if points == nil {
		return
	}
	caption(b, f, "Growth with N (means of the cases of each N)", "results[]")
	t := mdTable{header: []string{"N", "operator converge s", "floor converge s", "overhead", "op writes/DC", "RSS/1k DC MiB"},
		right: []bool{true, true, true, true, true, true}}
	for _, p := range points {
		t.add(fmt.Sprint(p.N), fixed(p.Operator, 1), fixed(p.Floor, 1), fixed(p.Ratio, 2), fixed(p.Writes, 2), fixed(p.RSSPer1k, 1))
	}
	t.write(b)
}
