package main

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// The growth curve: for a result file with operator cases at two or more N, five small charts
// against N (means of the cases of each N): convergence of the operator and of the floor,
// the overhead ratio, the operator's writes per cluster, its RSS per 1,000 clusters and the
// manager's CPU per cluster. Drawn
// as SVG by hand (no plotting dependency) so that the same JSON always gives the same bytes.

// growthPoint is what the charts show for one N.
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

// series is one line of a chart.
type series struct {
	name  string
	color string
	value func(growthPoint) float64
}

// chart is one panel.
type chart struct {
	title  string
	series []series
}

const (
	panelW, panelH = 260, 200
	padL, padR     = 44, 12
	padT, padB     = 34, 40
)

// growthSVG draws the five panels of points.
func growthSVG(title string, points []growthPoint) []byte {
	charts := []chart{
		{"convergence, s", []series{{"operator", "#1f77b4", func(p growthPoint) float64 { return p.Operator }},
			{"floor (no operator)", "#7f7f7f", func(p growthPoint) float64 { return p.Floor }}}},
		{"overhead: operator ÷ floor", []series{{"ratio", "#d62728", func(p growthPoint) float64 { return p.Ratio }}}},
		{"operator writes per cluster", []series{{"writes", "#2ca02c", func(p growthPoint) float64 { return p.Writes }}}},
		{"RSS per 1,000 clusters, MiB", []series{{"RSS", "#9467bd", func(p growthPoint) float64 { return p.RSSPer1k }}}},
		{"manager CPU per cluster, ms", []series{{"CPU", "#8c564b", func(p growthPoint) float64 { return p.CPUPerCluster }}}},
	}
	var b bytes.Buffer
	width, height := panelW*len(charts), panelH+30
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n",
		width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="8" y="16" font-size="13">%s</text>`+"\n", html.EscapeString(title))
	for i, c := range charts {
		drawPanel(&b, float64(i*panelW), 24, c, points)
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// drawPanel draws chart c at (x0, y0): axes, N on x (evenly spaced), 0..max on y, a line and
// labelled points per series, the legend under the title.
func drawPanel(b *bytes.Buffer, x0, y0 float64, c chart, points []growthPoint) {
	top := 0.0
	for _, s := range c.series {
		for _, p := range points {
			top = math.Max(top, s.value(p))
		}
	}
	if top <= 0 {
		top = 1
	}
	top *= 1.15
	left, right := x0+padL, x0+panelW-padR
	upper, lower := y0+padT, y0+panelH-padB
	xAt := func(i int) float64 { return left + (right-left)*(float64(i)+0.5)/float64(len(points)) }
	yAt := func(v float64) float64 { return lower - (lower-upper)*v/top }
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-weight="bold">%s</text>`+"\n", left, y0+12, html.EscapeString(c.title))
	var legend []string
	for _, s := range c.series {
		legend = append(legend, fmt.Sprintf(`<tspan fill="%s">%s</tspan>`, s.color, html.EscapeString(s.name)))
	}
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f">%s</text>`+"\n", left, y0+26, strings.Join(legend, "  "))
	fmt.Fprintf(b, `<path d="M%.1f %.1fV%.1fH%.1f" fill="none" stroke="black"/>`+"\n", left, upper, lower, right)
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end">0</text>`+"\n", left-4, lower+4)
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", left-4, upper+4, axisValue(top))
	for i, p := range points {
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">N=%d</text>`+"\n", xAt(i), lower+16, p.N)
	}
	for _, s := range c.series {
		var path []string
		for i, p := range points {
			if v := s.value(p); v > 0 {
				path = append(path, fmt.Sprintf("%.1f %.1f", xAt(i), yAt(v)))
			}
		}
		if len(path) > 1 {
			fmt.Fprintf(b, `<path d="M%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(path, "L"), s.color)
		}
		for i, p := range points {
			if v := s.value(p); v > 0 {
				fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", xAt(i), yAt(v), s.color)
				fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="%s">%s</text>`+"\n", xAt(i), yAt(v)-6, s.color, axisValue(v))
			}
		}
	}
}

// axisValue formats a value for a label: no decimals from 100 up, one below, two below 10.
func axisValue(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// growthFile is the SVG of result file f in the results directory dir: its name with
// "-growth.svg" for ".json".
func growthFile(dir string, f resultFile) string {
	return filepath.Join(dir, strings.TrimSuffix(filepath.Base(f.Name), ".json")+"-growth.svg")
}

// syncGrowth writes (or, with check, compares) the growth SVG of every file that has one, and
// sets each such file's GrowthLink. It returns the SVGs it found out of date.
func syncGrowth(files []resultFile, dir string, check bool) ([]string, error) {
	var stale []string
	for i := range files {
		points := growthPoints(files[i].Rep.Results)
		if points == nil {
			continue
		}
		path := growthFile(dir, files[i])
		files[i].GrowthLink = strings.TrimSuffix(files[i].Link, ".json") + "-growth.svg"
		want := growthSVG("Growth: "+filepath.Base(files[i].Name), points)
		have, err := os.ReadFile(path)
		if err == nil && bytes.Equal(have, want) {
			continue
		}
		if check {
			stale = append(stale, path)
			continue
		}
		if err := os.WriteFile(path, want, 0o644); err != nil {
			return nil, err
		}
	}
	return stale, nil
}

// writeGrowth shows the file's growth SVG and its figures, when it has one.
func writeGrowth(b *bytes.Buffer, f resultFile) {
	points := growthPoints(f.Rep.Results)
	if points == nil || f.GrowthLink == "" {
		return
	}
	caption(b, f, "Growth with N (means of the cases of each N; the chart is rendered from the same figures)", "results[]")
	fmt.Fprintf(b, "![growth of %s](%s)\n\n", filepath.Base(f.Name), f.GrowthLink)
	t := mdTable{header: []string{"N", "operator converge s", "floor converge s", "overhead", "op writes/DC", "RSS/1k DC MiB"},
		right: []bool{true, true, true, true, true, true}}
	for _, p := range points {
		t.add(fmt.Sprint(p.N), fixed(p.Operator, 1), fixed(p.Floor, 1), fixed(p.Ratio, 2), fixed(p.Writes, 2), fixed(p.RSSPer1k, 1))
	}
	t.write(b)
}
