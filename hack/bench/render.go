package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The reports (docs/benchmarks.md, docs/bench/README.md) hold summary tables, each rendered from
// the JSON results it names, between two lines:
//
//	<!-- bench:table KIND FILE... -->
//	<!-- bench:end -->
//
// KIND is one of summaryKinds; FILE is a file of -results (its base name), or "all" for every
// result that has scale cases. The text outside these blocks may quote only figures that a
// rendered table holds (checkFigures), so every number of the reports comes from a JSON file.
const (
	blockPrefix = "<!-- bench:table "
	blockSuffix = " -->"
	blockEnd    = "<!-- bench:end -->"
)

// Names of columns that several tables have.
const (
	colRun      = "run"
	colOperator = "operator"
	colCase     = "case"
	colOverhead = "overhead"
	colWrites   = "writes/DC"
	colRSS1k    = "RSS/1k DC MiB"
	// colLiveHeap is the heap in use at the end of the idle window, after a GC (heapInuseBytes:
	// the heap profile's in-use bytes): what the caches and the rest hold, without garbage.
	colLiveHeap = "live heap MiB"
)

var (
	blockRE  = regexp.MustCompile(`(?ms)^<!-- bench:table ([^\n]*) -->$.*?^<!-- bench:end -->$`)
	markerRE = regexp.MustCompile(`(?m)^(<!-- bench:table |<!-- bench:end -->)`)
	fenceRE  = regexp.MustCompile("(?ms)^[ \t]*```.*?^[ \t]*```")
	// figureRE is a number with a decimal point; isFigure tells a figure from a version or a goal.
	figureRE = regexp.MustCompile(`\d+(\.\d+)+`)
	// quotedRE is what the figure check skips: code spans, link targets and HTML comments.
	quotedRE = regexp.MustCompile("`[^`]*`|\\]\\([^)]*\\)|<!--.*?-->")
	// cellSplitRE splits a rendered table into the figures it holds.
	cellSplitRE = regexp.MustCompile(`[^0-9.]+`)
)

// summaryKinds render one table each from the named files.
var summaryKinds = map[string]func(files []resultFile) mdTable{
	colOverhead: overheadTable,
	"writes": caseTable(colRun, colCase, colWrites, "status patches/DC", "reads/DC", "reconciles/DC", "reconcile errors",
		"idle s", "idle writes", "idle reads"),
	"memory": caseTable(colRun, colCase, "baseline RSS MiB", "peak RSS MiB", colRSS1k, "peak heap MiB", "end heap MiB",
		colLiveHeap, "manager CPU s", "GCs"),
	"growth":        growthTable,
	"cost":          costTable,
	"costByProcess": costByProcessTable,
	"leader":        leaderTable,
	"polling":       pollingTable,
	// runs is the index of the runs: the figures the experiments compare.
	"runs": caseTable(colRun, colCase, "counted by", "floor creates", "converge s", colOverhead, colWrites, "status patches/DC",
		"reconcile errors", colRSS1k, "peak heap MiB", "manager CPU s", "idle writes"),
}

// resultFile is one JSON result: Name as the tables' captions name it (the -results directory
// joined with the file name), Link relative to the document's directory, and JSON as the file
// holds it, older fields included.
type resultFile struct {
	Name, Link string
	Rep        report
	JSON       map[string]any
}

// renderDocs renders the tables of the documents docs (comma separated) from the JSON results
// in dir, and checks that their text quotes only figures those tables hold and that some table
// names every result. With check it writes nothing and fails when a document is out of date.
func renderDocs(w io.Writer, docs, dir string, check bool) error {
	type rendered struct{ doc, current, text string }
	var all []rendered
	var files []resultFile
	var tables strings.Builder
	named := map[string]bool{}
	for _, doc := range strings.Split(docs, ",") {
		var err error
		if files, err = loadResults(doc, dir); err != nil {
			return err
		}
		current, err := os.ReadFile(doc)
		if err != nil {
			return err
		}
		text, t, err := renderBlocks(string(current), files, named)
		if err != nil {
			return fmt.Errorf("%s: %w", doc, err)
		}
		tables.WriteString(t)
		all = append(all, rendered{doc, string(current), text})
	}
	var unnamed []string
	for _, f := range files {
		if !named[path.Base(f.Name)] {
			unnamed = append(unnamed, f.Name)
		}
	}
	if len(unnamed) > 0 {
		return fmt.Errorf("%s: no table names the results %s; name them in a bench:table block or remove them", docs, strings.Join(unnamed, ", "))
	}
	for _, r := range all {
		// The text of each document may quote a figure of any of their tables.
		if err := checkFigures(r.text, tables.String()); err != nil {
			return fmt.Errorf("%s: %w", r.doc, err)
		}
		status := "%s is current with the %d results in %s\n"
		if r.text != r.current {
			if check {
				return fmt.Errorf("%s is out of date with the results in %s (%s); run \"make bench-docs\" and commit it",
					r.doc, dir, firstDifference(r.current, r.text))
			}
			if err := os.WriteFile(r.doc, []byte(r.text), 0o644); err != nil {
				return err
			}
			status = "%s: tables rendered from the %d results in %s\n"
		}
		if _, err := fmt.Fprintf(w, status, r.doc, len(files), dir); err != nil {
			return err
		}
	}
	return nil
}

// loadResults reads every *.json of dir, in name order (Glob sorts), linked from the directory of doc.
func loadResults(doc, dir string) ([]resultFile, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(paths) == 0 {
		return nil, cmp.Or(err, fmt.Errorf("no JSON results in %s", dir))
	}
	var files []resultFile
	for _, p := range paths {
		f, err := readResult(p, filepath.Dir(doc))
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// readResult reads one JSON result, linked from docDir.
func readResult(file, docDir string) (resultFile, error) {
	f := resultFile{Name: filepath.ToSlash(file)}
	data, err := os.ReadFile(file)
	if err != nil {
		return f, err
	}
	if err := errors.Join(json.Unmarshal(data, &f.Rep), json.Unmarshal(data, &f.JSON)); err != nil {
		return f, fmt.Errorf("%s: %w", file, err)
	}
	if f.Rep.Started.IsZero() || (len(f.Rep.Results) == 0 && f.Rep.Leader == nil && f.Rep.Polling == nil) {
		return f, fmt.Errorf("%s: not a result of hack/bench (no started, results, leader or polling)", file)
	}
	from, err1 := filepath.Abs(docDir)
	to, err2 := filepath.Abs(file)
	link, err3 := filepath.Rel(from, to)
	f.Link = filepath.ToSlash(link)
	return f, cmp.Or(err1, err2, err3)
}

// firstDifference names the first line where have and want differ.
func firstDifference(have, want string) string {
	h, w := strings.Split(have+"\n", "\n"), strings.Split(want+"\n", "\n")
	i := 0
	for i < min(len(h), len(w))-1 && h[i] == w[i] {
		i++
	}
	return fmt.Sprintf("line %d is %.120q, rendered %.120q", i+1, h[i], w[i])
}

// renderBlocks replaces the content of every block of doc with its rendered table and marks
// the files the blocks name in named. It returns the new document and the text of its tables.
func renderBlocks(doc string, files []resultFile, named map[string]bool) (string, string, error) {
	blocks := blockRE.FindAllStringSubmatchIndex(doc, -1)
	if len(markerRE.FindAllStringIndex(doc, -1)) != 2*len(blocks) {
		return "", "", fmt.Errorf("every %sKIND FILE...%s line needs a %s line after it, before the next", blockPrefix, blockSuffix, blockEnd)
	}
	var out, tables strings.Builder
	last := 0
	for _, m := range blocks {
		kind, sel, err := parseBlock(doc[m[2]:m[3]], files)
		if err != nil {
			return "", "", fmt.Errorf("%s: %w", doc[m[0]:m[3]]+blockSuffix, err)
		}
		for _, f := range sel {
			named[path.Base(f.Name)] = true
		}
		table := strings.TrimSpace(kind(sel).String())
		tables.WriteString(table + "\n")
		out.WriteString(doc[last:m[3]] + blockSuffix + "\n\n" + table + "\n\n" + blockEnd)
		last = m[1]
	}
	out.WriteString(doc[last:])
	return out.String(), tables.String(), nil
}

// parseBlock reads a block's "KIND FILE...": its kind, and the results it names in its order
// ("all": every result with scale cases, in name order).
func parseBlock(spec string, files []resultFile) (func([]resultFile) mdTable, []resultFile, error) {
	fields := strings.Fields(spec)
	if len(fields) < 2 {
		return nil, nil, fmt.Errorf("a block names a kind and at least one file")
	}
	kind := summaryKinds[fields[0]]
	if kind == nil {
		return nil, nil, fmt.Errorf("unknown kind %q (kinds: %s)", fields[0], strings.Join(slices.Sorted(maps.Keys(summaryKinds)), ", "))
	}
	var sel []resultFile
	for _, name := range fields[1:] {
		i := slices.IndexFunc(files, func(f resultFile) bool { return path.Base(f.Name) == name })
		switch {
		case name == "all":
			sel = append(sel, slices.DeleteFunc(slices.Clone(files), func(f resultFile) bool { return len(f.Rep.Results) == 0 })...)
		case i < 0:
			return nil, nil, fmt.Errorf("no result %s in the results directory", name)
		default:
			sel = append(sel, files[i])
		}
	}
	return kind, sel, nil
}

// checkFigures fails when the text of doc outside the blocks and code fences quotes a figure (a
// number with a decimal point) that no rendered table holds.
func checkFigures(doc, tables string) error {
	held := map[string]bool{}
	for _, f := range cellSplitRE.Split(tables, -1) {
		held[strings.Trim(f, ".")] = true
	}
	blank := func(s string) string { return strings.Repeat("\n", strings.Count(s, "\n")) } // keeps the line numbers
	text := fenceRE.ReplaceAllStringFunc(blockRE.ReplaceAllStringFunc(doc, blank), blank)
	var missing []string
	for i, l := range strings.Split(text, "\n") {
		l = quotedRE.ReplaceAllString(l, " ")
		for _, m := range figureRE.FindAllStringIndex(l, -1) {
			if fig := l[m[0]:m[1]]; isFigure(l[:m[0]], fig) && !held[fig] {
				missing = append(missing, fmt.Sprintf("line %d: %s", i+1, fig))
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("figures in the text that no rendered table holds (quote them from a table, or add the run's table): %s",
			strings.Join(missing, "; "))
	}
	return nil
}

// isFigure tells whether the number fig, which follows before in a line of text, is a measured
// figure: not part of a version (HTTP/1.1, v1.37.1: a letter, "/" or "." before it, or a second
// point in it) and not a goal ("≤ 1.15").
func isFigure(before, fig string) bool {
	if strings.Count(fig, ".") > 1 {
		return false
	}
	if r, _ := utf8.DecodeLastRuneInString(before); r == '/' || r == '.' || r == '-' || unicode.IsLetter(r) {
		return false
	}
	return !strings.HasSuffix(strings.TrimRight(before, " "), "≤")
}

// mdTable is a markdown table. Its first column, and those whose header leftColumns holds, are
// aligned left; the others, numbers, right.
type mdTable struct {
	header []string
	rows   [][]string
}

var leftColumns = map[string]bool{colCase: true, "process": true, "counted by": true, "floor creates": true, colOperator: true,
	"stop": true, "value": true}

func (t *mdTable) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t mdTable) String() string {
	var b strings.Builder
	row := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + cmp.Or(strings.ReplaceAll(c, "|", `\|`), "–") + " |")
		}
		b.WriteString("\n")
	}
	row(t.header)
	b.WriteString("|")
	for i, h := range t.header {
		b.WriteString(map[bool]string{false: "---:|", true: "---|"}[i == 0 || leftColumns[h]])
	}
	b.WriteString("\n")
	for _, r := range t.rows {
		row(r)
	}
	return b.String()
}

func fixed(v float64, decimals int) string { return strconv.FormatFloat(v, 'f', decimals, 64) }

func mib(b float64) float64 { return b / (1 << 20) }

func mibCell[V int64 | float64](b V) string { return fixed(mib(float64(b)), 1) }

// measuredCell is v with the given decimals, or "—" for a figure the result does not have
// (0: written before the bench measured it, or a floor case, which has no manager).
func measuredCell(v float64, decimals int) string {
	if v == 0 {
		return "—"
	}
	return fixed(v, decimals)
}

func configLabel(c benchCase) string {
	label := fmt.Sprintf("c=%d q=%g/%d", c.Concurrency, c.QPS, c.Burst)
	if c.Manager != "" {
		label += " " + path.Base(c.Manager)
	}
	return label
}

func caseLabel(c benchCase) string {
	if c.Floor {
		return fmt.Sprintf("N=%d floor", c.N)
	}
	return fmt.Sprintf("N=%d %s", c.N, configLabel(c))
}

// runLink is the short name of a result in the tables (its UTC start), linked to it.
func runLink(f resultFile) string {
	stamp, _, _ := strings.Cut(strings.TrimSuffix(path.Base(f.Name), ".json"), "-")
	return fmt.Sprintf("[%s](%s)", stamp, f.Link)
}

// caseColumns are the columns, by header, of the summary tables with a row per operator case.
var caseColumns = map[string]func(f resultFile, r result) string{
	colRun:  func(f resultFile, _ result) string { return runLink(f) },
	colCase: func(_ resultFile, r result) string { return caseLabel(r.Case) },
	// Results written before the setting existed were counted by a proxy since removed.
	"counted by":    func(f resultFile, _ result) string { return cmp.Or(f.Rep.Settings["count"], "proxy") },
	"floor creates": floorCreates,
	"converge s":    func(_ resultFile, r result) string { return fixed(r.ConvergenceSec, 1) },
	colOverhead:     overheadOf,
	colWrites:       func(_ resultFile, r result) string { return fixed(r.WritesPerCluster, 2) },
	"status patches/DC": func(_ resultFile, r result) string {
		patches := r.Converge.ByVerbResource["patch databaseclusters.database.seed1b407122.io/status"]
		return fixed(float64(patches)/float64(r.Case.N), 2)
	},
	"reads/DC":         func(_ resultFile, r result) string { return fixed(r.ReadsPerCluster, 2) },
	"reconciles/DC":    func(_ resultFile, r result) string { return fixed(r.ReconcilesPerDC, 2) },
	"reconcile errors": func(_ resultFile, r result) string { return fixed(r.ReconcileErrors, 0) },
	"idle s":           func(_ resultFile, r result) string { return fixed(r.IdleSec, 0) },
	"idle writes":      func(_ resultFile, r result) string { return strconv.FormatInt(r.IdleWrites, 10) },
	"idle reads":       func(_ resultFile, r result) string { return strconv.FormatInt(r.IdleReads, 10) },
	"baseline RSS MiB": func(_ resultFile, r result) string { return mibCell(r.BaselineRSS) },
	"peak RSS MiB":     func(_ resultFile, r result) string { return mibCell(r.PeakRSS) },
	colRSS1k:           func(_ resultFile, r result) string { return mibCell(r.RSSPer1000) },
	"peak heap MiB":    func(_ resultFile, r result) string { return mibCell(r.PeakHeap) },
	"end heap MiB":     func(_ resultFile, r result) string { return mibCell(r.EndHeap) },
	colLiveHeap:        func(_ resultFile, r result) string { return measuredCell(mib(float64(r.HeapInuse)), 1) },
	"manager CPU s":    func(_ resultFile, r result) string { return measuredCell(r.ManagerCPUSec, 1) },
	"GCs":              func(_ resultFile, r result) string { return measuredCell(r.ManagerGCs, 0) },
}

// caseTable is a summary kind with a row per successful operator case of the files, in their
// order, and the caseColumns of headers.
func caseTable(headers ...string) func([]resultFile) mdTable {
	return func(files []resultFile) mdTable {
		t := mdTable{header: headers}
		for _, f := range files {
			for _, r := range f.Rep.Results {
				if r.Case.Floor || r.Error != "" {
					continue
				}
				var row []string
				for _, h := range headers {
					row = append(row, caseColumns[h](f, r))
				}
				t.add(row...)
			}
		}
		return t
	}
}

// floorCreates is what the floor cases of f created: the DatabaseClusters and their children
// since the floor measures the first pass (2026-11-29), only the children before; "—" without a
// floor case.
func floorCreates(f resultFile, _ result) string {
	what := "—"
	for _, r := range f.Rep.Results {
		if r.Case.Floor && r.Error == "" {
			if r.FirstPassP50Sec > 0 {
				return "clusters, children"
			}
			what = "children"
		}
	}
	return what
}

// group is the successful operator cases of a run of one N and one configuration, with the
// successful floor cases of that N, and the pairs of each operator case with the floor case
// that ran just before it (cost.go); in the order they ran.
type group struct {
	N               int
	Config          string
	Floor, Operator []result
	Pairs           []costPair
}

// groups groups the operator cases of results, ordered by N and configuration.
func groups(results []result) []group {
	floors, lastFloor := map[int][]result{}, map[int]*result{}
	byKey := map[string]*group{}
	for i, r := range results {
		switch {
		case r.Error != "":
		case r.Case.Floor:
			floors[r.Case.N] = append(floors[r.Case.N], r)
			lastFloor[r.Case.N] = &results[i]
		default:
			g := byKey[caseLabel(r.Case)]
			if g == nil {
				g = &group{N: r.Case.N, Config: configLabel(r.Case)}
				byKey[caseLabel(r.Case)] = g
			}
			g.Operator = append(g.Operator, r)
			if f := lastFloor[r.Case.N]; f != nil { // each floor case pairs once
				g.Pairs = append(g.Pairs, costPair{Floor: *f, Operator: r})
				lastFloor[r.Case.N] = nil
			}
		}
	}
	var out []group
	for _, g := range byKey {
		g.Floor = floors[g.N]
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b group) int { return cmp.Or(cmp.Compare(a.N, b.N), cmp.Compare(a.Config, b.Config)) })
	return out
}

// overheads are the groups of results that have a floor case of their N.
func overheads(results []result) []group {
	return slices.DeleteFunc(groups(results), func(g group) bool { return len(g.Floor) == 0 })
}

// growth is the overheads of a run of one operator configuration at two or more N, or nil:
// a growth curve compares one configuration.
func growth(results []result) []group {
	all := overheads(results)
	if len(all) < 2 || slices.ContainsFunc(all, func(g group) bool { return g.Config != all[0].Config }) {
		return nil
	}
	return all
}

// ratio is the operator cases' mean of figure over the floor cases': the overhead of having
// the operator in the loop.
func (g group) ratio(figure func(result) float64) float64 {
	if f := meanBy(g.Floor, figure); f > 0 {
		return meanBy(g.Operator, figure) / f
	}
	return 0
}

// busyRatio is the ratio of the machine's busy CPU, or "—" when a case has no CPU figure. On a
// machine whose cores are all busy in both, it is what the overhead should be if the
// operator's cost were only the CPU it (and the work it asks of the others) takes.
func (g group) busyRatio() string {
	noCPU := func(r result) bool { return r.CPUByProcess[machineBusy] == 0 }
	if slices.ContainsFunc(g.Floor, noCPU) || slices.ContainsFunc(g.Operator, noCPU) {
		return "—"
	}
	return fixed(g.ratio(func(r result) float64 { return r.CPUByProcess[machineBusy] }), 2)
}

func meanBy(rs []result, figure func(result) float64) float64 {
	values := make([]float64, len(rs))
	for i, r := range rs {
		values[i] = figure(r)
	}
	return meanOf(values)
}

func convergence(r result) float64 { return r.ConvergenceSec }

// overheadOf is the convergence overhead of f's operator cases of r's N and configuration, or
// "—" when the file has no floor case of that N.
func overheadOf(f resultFile, r result) string {
	for _, g := range overheads(f.Rep.Results) {
		if g.N == r.Case.N && g.Config == configLabel(r.Case) {
			return fixed(g.ratio(convergence), 2)
		}
	}
	return "—"
}

func overheadTable(files []resultFile) mdTable {
	t := mdTable{header: []string{colRun, "N", colOperator, "floor converge s", "operator converge s", colOverhead,
		"overhead p50 / p99", "busy CPU, operator ÷ floor"}}
	p50 := func(r result) float64 { return r.LatencyP50Sec }
	p99 := func(r result) float64 { return r.LatencyP99Sec }
	convergences := func(rs []result) string {
		var parts []string
		for _, r := range rs {
			parts = append(parts, fixed(r.ConvergenceSec, 1))
		}
		return strings.Join(parts, ", ")
	}
	for _, f := range files {
		for _, g := range overheads(f.Rep.Results) {
			t.add(runLink(f), strconv.Itoa(g.N), g.Config, convergences(g.Floor), convergences(g.Operator),
				fixed(g.ratio(convergence), 2), fixed(g.ratio(p50), 2)+" / "+fixed(g.ratio(p99), 2), g.busyRatio())
		}
	}
	return t
}

func growthTable(files []resultFile) mdTable {
	t := mdTable{header: []string{colRun, "N", "floor converge s", "operator converge s", colOverhead, colWrites,
		colRSS1k, "manager CPU ms/DC"}}
	for _, f := range files {
		for _, g := range growth(f.Rep.Results) {
			t.add(runLink(f), strconv.Itoa(g.N), fixed(meanBy(g.Floor, convergence), 1), fixed(meanBy(g.Operator, convergence), 1),
				fixed(g.ratio(convergence), 2), fixed(meanBy(g.Operator, func(r result) float64 { return r.WritesPerCluster }), 2),
				fixed(meanBy(g.Operator, func(r result) float64 { return mib(r.RSSPer1000) }), 1),
				measuredCell(meanBy(g.Operator, func(r result) float64 { return r.ManagerCPUSec * 1000 / float64(r.Case.N) }), 0))
		}
	}
	return t
}

func leaderTable(files []resultFile) mdTable {
	t := mdTable{header: []string{colRun, "stop", "runs", "min s", "median s", "max s", "Lease moved, median s",
		"workers started, median s"}}
	for _, f := range files {
		if l := f.Rep.Leader; l != nil {
			for _, m := range []struct {
				name string
				leaderMode
			}{{"graceful hand-off", l.HandOff}, {"crash takeover", l.Takeover}} {
				t.add(runLink(f), m.name+" ("+m.Signal+")", strconv.Itoa(m.Total.Runs), fixed(m.Total.MinSec, 2),
					fixed(m.Total.MedianSec, 2), fixed(m.Total.MaxSec, 2), fixed(m.LeaseMoved.MedianSec, 2),
					fixed(m.Workers.MedianSec, 2))
			}
		}
	}
	return t
}

// renderRun renders the tables of one result file (-tables, and after a run): the summary
// tables of the file, then every figure of its JSON, of the run and of each case.
func renderRun(f resultFile) string {
	if f.JSON == nil { // a run just made
		data, _ := json.Marshal(f.Rep) // a report always marshals
		_ = json.Unmarshal(data, &f.JSON)
	}
	run := maps.Clone(f.JSON)
	cases, _ := run["results"].([]any)
	delete(run, "results")
	var b strings.Builder
	fmt.Fprintf(&b, "### `%s`\n", f.Name)
	one := []resultFile{f}
	for _, s := range []struct {
		what  string
		table mdTable
	}{
		{"The run", figuresTable([]any{run}, func(int) string { return "value" })},
		{"The operator cases", summaryKinds["runs"](one)},
		{"Requests", summaryKinds["writes"](one)},
		{"Memory", summaryKinds["memory"](one)},
		{"Overhead against the floor", overheadTable(one)},
		{"Growth with N", growthTable(one)},
		{"Cost against the floor", costTable(one)},
		{"Where the added CPU goes", costByProcessTable(one)},
		{"Leader hand-off and takeover", leaderTable(one)},
		{"Member-agent polling", pollingTable(one)},
		{"Every figure of every case", figuresTable(cases, func(i int) string { return caseLabel(f.Rep.Results[i].Case) })},
	} {
		if len(s.table.rows) > 0 {
			fmt.Fprintf(&b, "\n%s — from [`%s`](%s):\n\n%s", s.what, f.Name, f.Link, s.table)
		}
	}
	return b.String()
}

// figuresTable has a column per JSON tree, headed by label, and a row per number, string or
// boolean of the trees, named by its path ("convergeRequests.byVerbResource.create services").
func figuresTable(trees []any, label func(i int) string) mdTable {
	t := mdTable{header: []string{"figure"}}
	columns := make([]map[string]string, len(trees))
	keys := map[string]bool{}
	for i, tree := range trees {
		columns[i] = map[string]string{}
		flatten("", tree, columns[i])
		for k := range columns[i] {
			keys[k] = true
		}
		t.header = append(t.header, label(i))
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		row := []string{k}
		for _, c := range columns {
			row = append(row, c[k])
		}
		t.add(row...)
	}
	return t
}

// flatten adds every number, string and boolean of the JSON tree to cells, named by its path.
func flatten(key string, tree any, cells map[string]string) {
	join := func(k string) string { return strings.TrimPrefix(key+"."+k, ".") }
	switch v := tree.(type) {
	case map[string]any:
		for k, x := range v {
			flatten(join(k), x, cells)
		}
	case []any:
		for i, x := range v {
			flatten(join(strconv.Itoa(i)), x, cells)
		}
	case float64:
		cells[key] = strconv.FormatFloat(v, 'f', -1, 64)
	case nil:
	default:
		cells[key] = fmt.Sprint(v)
	}
}
