package main

import (
	"cmp"
	"encoding/json"
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
	"time"
	"unicode"
	"unicode/utf8"
)

// Column and table names used in several tables.
const (
	colRun      = "run"
	colStop     = "stop"
	colValue    = "value"
	colOverhead = "overhead"
	colRSS1k    = "RSS/1k DC MiB"
	colOperator = "operator"
	colProcess  = "process"
	// colFloorCreates says what the floor cases of a run created (floorCreates).
	colFloorCreates = "floor creates"
)

// The report (docs/benchmarks.md) holds summary tables, each rendered from the JSON results it
// names, between two lines:
//
//	<!-- bench:table KIND FILE... -->
//	<!-- bench:end -->
//
// KIND is one of the summaryKinds; FILE is a file of -results (its base name), or "all" for
// every result that has scale cases. The text outside these blocks may quote only figures that
// a rendered table holds (checkFigures), so every number of the report comes from a JSON file.
const (
	blockPrefix = "<!-- bench:table "
	blockSuffix = " -->"
	blockEnd    = "<!-- bench:end -->"
)

// summaryKinds render one table each from the named files.
var summaryKinds = map[string]func(files []resultFile) mdTable{
	colOverhead: overheadTable,
	"writes": caseTable(colRun, "case", "writes/DC", "status patches/DC", "reads/DC", "reconciles/DC", "reconcile errors",
		"idle s", "idle writes", "idle reads"),
	"memory": caseTable(colRun, "case", "baseline RSS MiB", "peak RSS MiB", colRSS1k, "peak heap MiB", "end heap MiB",
		"manager CPU s", "GCs"),
	"growth": growthTable,
	"cost":   costTable,
	// costByProcess says where the added CPU of the cost table goes.
	"costByProcess": costByProcessTable,
	"leader":        leaderTable,
	// runs is the index of the runs: the figures the experiments compare.
	"runs": caseTable(colRun, "case", "counted by", colFloorCreates, "converge s", colOverhead, "writes/DC", "status patches/DC",
		"reconcile errors", colRSS1k, "peak heap MiB", "manager CPU s", "idle writes"),
}

// resultFile is one JSON result as the documents show it.
type resultFile struct {
	// Name is the file as the captions name it (the -results directory joined with the file name).
	Name string
	// Link is the file relative to the document's directory.
	Link string
	Rep  report
}

// renderDocs renders the summary tables of the report doc from the JSON results in dir and
// checks that the report's text quotes only figures those tables hold and that every result is
// named by a table. With check it writes nothing and fails when doc differs from what it would
// write.
func renderDocs(w io.Writer, docs, dir string, check bool) error {
	named := map[string]bool{}
	var all []renderedDoc
	var tables strings.Builder
	for _, doc := range strings.Split(docs, ",") {
		r, err := renderDoc(doc, dir)
		if err != nil {
			return err
		}
		maps.Copy(named, r.named)
		tables.WriteString(r.tables)
		all = append(all, r)
	}
	var unnamed []string
	for _, f := range all[len(all)-1].files {
		if !named[path.Base(f.Name)] {
			unnamed = append(unnamed, f.Name)
		}
	}
	if len(unnamed) > 0 {
		return fmt.Errorf("%s: no table names the results %s; name them in a bench:table block or remove them", docs, strings.Join(unnamed, ", "))
	}
	for _, r := range all {
		// The text of each document may quote a figure of any of their tables.
		if err := checkFigures(r.rendered, tables.String()); err != nil {
			return fmt.Errorf("%s: %w", r.doc, err)
		}
		if err := r.write(w, dir, check); err != nil {
			return err
		}
	}
	return nil
}

// renderedDoc is one document with its tables rendered from the results of dir.
type renderedDoc struct {
	doc, current, rendered, tables string
	named                          map[string]bool
	files                          []resultFile
}

// renderDoc renders the tables of doc from the results of dir (linked as doc links them).
func renderDoc(doc, dir string) (renderedDoc, error) {
	r := renderedDoc{doc: doc}
	var err error
	if r.files, err = loadResults(doc, dir); err != nil {
		return r, err
	}
	current, err := os.ReadFile(doc)
	if err != nil {
		return r, err
	}
	r.current = string(current)
	if r.rendered, r.tables, r.named, err = renderBlocks(r.current, r.files); err != nil {
		return r, fmt.Errorf("%s: %w", doc, err)
	}
	return r, nil
}

// write writes the rendered document, or with check fails when it differs from the file.
func (r renderedDoc) write(w io.Writer, dir string, check bool) error {
	switch {
	case r.rendered == r.current:
		_, err := fmt.Fprintf(w, "%s is current with the %d results in %s\n", r.doc, len(r.files), dir)
		return err
	case check:
		return fmt.Errorf("%s is out of date with the results in %s (%s); run \"make bench-docs\" and commit it",
			r.doc, dir, firstDifference(r.current, r.rendered))
	}
	if err := os.WriteFile(r.doc, []byte(r.rendered), 0o644); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%s: tables rendered from the %d results in %s\n", r.doc, len(r.files), dir)
	return err
}

// loadResults reads every *.json of dir, sorted by name, linked from the directory of doc.
func loadResults(doc, dir string) ([]resultFile, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(paths) == 0 {
		return nil, cmp.Or(err, fmt.Errorf("no JSON results in %s", dir))
	}
	slices.Sort(paths)
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
	if err := json.Unmarshal(data, &f.Rep); err != nil {
		return f, fmt.Errorf("%s: %w", file, err)
	}
	if f.Rep.Started.IsZero() || (len(f.Rep.Results) == 0 && f.Rep.Leader == nil) {
		return f, fmt.Errorf("%s: not a result of hack/bench (no started, results or leader)", file)
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

// renderBlocks replaces the content of every block of doc with its rendered table. It returns
// the new document, the text of all rendered tables and the JSON files the blocks named.
func renderBlocks(doc string, files []resultFile) (string, string, map[string]bool, error) {
	lines := strings.Split(doc, "\n")
	var out []string
	var tables strings.Builder
	named := map[string]bool{}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		out = append(out, l)
		if strings.TrimSpace(l) == blockEnd {
			return "", "", nil, fmt.Errorf("line %d: %s without %s", i+1, blockEnd, blockPrefix)
		}
		if !strings.HasPrefix(l, blockPrefix) {
			continue
		}
		end := i + 1
		for end < len(lines) && strings.TrimSpace(lines[end]) != blockEnd {
			if strings.HasPrefix(lines[end], blockPrefix) {
				return "", "", nil, fmt.Errorf("line %d: a block opened on line %d is not closed by %s", end+1, i+1, blockEnd)
			}
			end++
		}
		if end == len(lines) {
			return "", "", nil, fmt.Errorf("line %d: no %s after the block", i+1, blockEnd)
		}
		kind, sel, err := parseBlock(i+1, l, files)
		if err != nil {
			return "", "", nil, err
		}
		for _, f := range sel {
			named[path.Base(f.Name)] = true
		}
		table := strings.TrimSpace(kind(sel).String())
		tables.WriteString(table + "\n")
		out = append(out, "", table, "", blockEnd)
		i = end
	}
	return strings.Join(out, "\n"), tables.String(), named, nil
}

// parseBlock reads the block marker l on line n: its kind, and the results it names in its
// order ("all": every result with scale cases, in name order).
func parseBlock(n int, l string, files []resultFile) (func([]resultFile) mdTable, []resultFile, error) {
	if !strings.HasSuffix(l, blockSuffix) {
		return nil, nil, fmt.Errorf("line %d: a block marker ends with %q", n, blockSuffix)
	}
	fields := strings.Fields(strings.TrimSuffix(strings.TrimPrefix(l, blockPrefix), blockSuffix))
	if len(fields) < 2 {
		return nil, nil, fmt.Errorf("line %d: a block names a kind and at least one file", n)
	}
	kind := summaryKinds[fields[0]]
	if kind == nil {
		return nil, nil, fmt.Errorf("line %d: unknown kind %q (kinds: %s)", n, fields[0], strings.Join(sortedKeys(summaryKinds), ", "))
	}
	var sel []resultFile
	for _, name := range fields[1:] {
		i := slices.IndexFunc(files, func(f resultFile) bool { return path.Base(f.Name) == name })
		switch {
		case name == "all":
			for _, f := range files {
				if len(f.Rep.Results) > 0 {
					sel = append(sel, f)
				}
			}
		case i < 0:
			return nil, nil, fmt.Errorf("line %d: no result %s in the results directory", n, name)
		default:
			sel = append(sel, files[i])
		}
	}
	return kind, sel, nil
}

var (
	// figureRE is a number with a decimal point; isFigure tells a figure from a version or a goal.
	figureRE = regexp.MustCompile(`\d+(\.\d+)+`)
	// quotedRE is what the figure check skips: code spans, link targets and HTML comments.
	quotedRE = regexp.MustCompile("`[^`]*`|\\]\\([^)]*\\)|<!--.*?-->")
	// cellSplitRE splits a rendered table into the figures it holds.
	cellSplitRE = regexp.MustCompile(`[^0-9.]+`)
)

// checkFigures fails when the text of doc outside the blocks quotes a figure (a number with a
// decimal point) that no rendered table of the document holds.
func checkFigures(doc, tables string) error {
	held := map[string]bool{}
	for _, f := range cellSplitRE.Split(tables, -1) {
		held[strings.Trim(f, ".")] = true
	}
	var missing []string
	inBlock, inFence := false, false
	for i, l := range strings.Split(doc, "\n") {
		switch {
		case strings.HasPrefix(l, blockPrefix):
			inBlock = true
		case strings.TrimSpace(l) == blockEnd:
			inBlock = false
			continue
		case strings.HasPrefix(strings.TrimSpace(l), "```"):
			inFence = !inFence
			continue
		}
		if inBlock || inFence {
			continue
		}
		text := quotedRE.ReplaceAllString(l, " ")
		for _, m := range figureRE.FindAllStringIndex(text, -1) {
			if fig := text[m[0]:m[1]]; isFigure(text[:m[0]], fig) && !held[fig] {
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

var leftColumns = map[string]bool{"case": true, colProcess: true, "counted by": true, colFloorCreates: true, colOperator: true, colStop: true, colValue: true,
	"change made while nobody led": true}

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

func mibCell(b float64) string { return fixed(mib(b), 1) }

// measuredCell is v with the given decimals, or "—" for a figure the result does not have
// (0: written before the bench measured it, or a floor case, which has no manager).
func measuredCell(v float64, decimals int) string {
	if v == 0 {
		return "—"
	}
	return fixed(v, decimals)
}

func perCluster(v float64, n int) float64 {
	if n <= 0 {
		return 0
	}
	return v / float64(n)
}

// ratePerCluster formats a per-cluster count with 2 decimals; "<0.01" tells a rare request
// (one in 300 clusters) from none.
func ratePerCluster(v float64, n int) string {
	if v = perCluster(v, n); v > 0 && v < 0.005 {
		return "<0.01"
	}
	return fixed(v, 2)
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

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// caseColumns are the cells, by header, of the summary tables with a row per successful
// operator case.
var caseColumns = map[string]func(f resultFile, r result) string{
	colRun: func(f resultFile, _ result) string { return runLink(f) },
	"case": func(_ resultFile, r result) string { return caseLabel(r.Case) },
	// Results written before the setting existed were counted by a proxy since removed.
	"counted by":    func(f resultFile, _ result) string { return cmp.Or(f.Rep.Settings["count"], "proxy") },
	colFloorCreates: floorCreates,
	"converge s":    func(_ resultFile, r result) string { return fixed(r.ConvergenceSec, 1) },
	colOverhead:     overheadOf,
	"writes/DC":     func(_ resultFile, r result) string { return fixed(r.WritesPerCluster, 2) },
	"status patches/DC": func(_ resultFile, r result) string {
		const key = "patch databaseclusters.database.seed1b407122.io/status"
		return fixed(perCluster(float64(r.Converge.ByVerbResource[key]), r.Case.N), 2)
	},
	"reads/DC":         func(_ resultFile, r result) string { return fixed(r.ReadsPerCluster, 2) },
	"reconciles/DC":    func(_ resultFile, r result) string { return fixed(r.ReconcilesPerDC, 2) },
	"reconcile errors": func(_ resultFile, r result) string { return fixed(r.ReconcileErrors, 0) },
	"idle s":           func(_ resultFile, r result) string { return fixed(r.IdleSec, 0) },
	"idle writes":      func(_ resultFile, r result) string { return strconv.FormatInt(r.IdleWrites, 10) },
	"idle reads":       func(_ resultFile, r result) string { return strconv.FormatInt(r.IdleReads, 10) },
	"baseline RSS MiB": func(_ resultFile, r result) string { return mibCell(float64(r.BaselineRSS)) },
	"peak RSS MiB":     func(_ resultFile, r result) string { return mibCell(float64(r.PeakRSS)) },
	colRSS1k:           func(_ resultFile, r result) string { return mibCell(r.RSSPer1000) },
	"peak heap MiB":    func(_ resultFile, r result) string { return mibCell(r.PeakHeap) },
	"end heap MiB":     func(_ resultFile, r result) string { return mibCell(r.EndHeap) },
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

// overheadOf is the convergence overhead of f's operator cases of r's N and configuration, or
// "—" when the file has no floor case of that N.
func overheadOf(f resultFile, r result) string {
	for _, o := range overheads(f.Rep.Results) {
		if o.N == r.Case.N && o.Config == configLabel(r.Case) {
			return fixed(o.ratio(convergence), 2)
		}
	}
	return "—"
}

func overheadTable(files []resultFile) mdTable {
	t := mdTable{header: []string{colRun, "N", colOperator, "floor converge s", "operator converge s", colOverhead,
		"overhead p50 / p99", "busy CPU, operator ÷ floor"}}
	p50 := func(r result) float64 { return r.LatencyP50Sec }
	p99 := func(r result) float64 { return r.LatencyP99Sec }
	for _, f := range files {
		for _, o := range overheads(f.Rep.Results) {
			t.add(runLink(f), strconv.Itoa(o.N), o.Config, convergences(o.Floor), convergences(o.Operator),
				fixed(o.ratio(convergence), 2), fixed(o.ratio(p50), 2)+" / "+fixed(o.ratio(p99), 2), o.busyRatio())
		}
	}
	return t
}

func growthTable(files []resultFile) mdTable {
	t := mdTable{header: []string{colRun, "N", "floor converge s", "operator converge s", colOverhead, "writes/DC",
		colRSS1k, "manager CPU ms/DC"}}
	for _, f := range files {
		for _, o := range growth(f.Rep.Results) {
			t.add(runLink(f), strconv.Itoa(o.N), fixed(meanBy(o.Floor, convergence), 1), fixed(meanBy(o.Operator, convergence), 1),
				fixed(o.ratio(convergence), 2), fixed(meanBy(o.Operator, func(r result) float64 { return r.WritesPerCluster }), 2),
				fixed(meanBy(o.Operator, func(r result) float64 { return mib(r.RSSPer1000) }), 1),
				measuredCell(meanBy(o.Operator, func(r result) float64 { return r.ManagerCPUSec * 1000 / float64(r.Case.N) }), 0))
		}
	}
	return t
}

func leaderTable(files []resultFile) mdTable {
	t := mdTable{header: []string{colRun, colStop, "runs", "min s", "median s", "max s", "Lease moved, median s",
		"workers started, median s"}}
	for _, f := range files {
		if l := f.Rep.Leader; l != nil {
			for _, m := range l.modes() {
				t.add(runLink(f), m.name+" ("+m.Signal+")", strconv.Itoa(m.Total.Runs), fixed(m.Total.MinSec, 2),
					fixed(m.Total.MedianSec, 2), fixed(m.Total.MaxSec, 2), fixed(m.LeaseMoved.MedianSec, 2),
					fixed(m.Workers.MedianSec, 2))
			}
		}
	}
	return t
}

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
		switch key := caseLabel(r.Case); {
		case r.Error != "":
		case r.Case.Floor:
			floors[r.Case.N] = append(floors[r.Case.N], r)
		case byKey[key] == nil:
			byKey[key] = &overhead{N: r.Case.N, Config: configLabel(r.Case), Operator: []result{r}}
		default:
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
	all := overheads(results)
	if len(all) < 2 || slices.ContainsFunc(all, func(o overhead) bool { return o.Config != all[0].Config }) {
		return nil
	}
	return all
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
	values := make([]float64, len(rs))
	for i, r := range rs {
		values[i] = figure(r)
	}
	return meanOf(values)
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

// renderRun renders every table of one result file: the run, its overhead and growth tables,
// every figure of every case, and the leader case.
func renderRun(f resultFile) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### `%s`\n", f.Name)
	one := []resultFile{f}
	for _, s := range []struct {
		what  string
		table mdTable
	}{
		{"Run", runTable(f.Rep)},
		{"Overhead against the floor: the operator's convergence over the floor's, means of the cases", overheadTable(one)},
		{"Growth with N (means of the cases of each N)", growthTable(one)},
		{"Every figure of every case", figuresTable(f.Rep.Results)},
		{leaderCaption(f.Rep.Leader), leaderTable(one)},
		{"Every leader run, seconds from the signal", leaderRunsTable(f.Rep.Leader)},
	} {
		if len(s.table.rows) > 0 {
			fmt.Fprintf(&b, "\n%s — from [`%s`](%s):\n\n%s", s.what, f.Name, f.Link, s.table)
		}
	}
	return b.String()
}

// runTable shows where and how a run ran.
func runTable(rep report) mdTable {
	t := mdTable{header: []string{"key", colValue}}
	t.add("started", rep.Started.UTC().Format(time.RFC3339))
	if !rep.Finished.IsZero() {
		t.add("finished", rep.Finished.UTC().Format(time.RFC3339))
		t.add("wall time", rep.Finished.Sub(rep.Started).Round(time.Second).String())
	}
	for _, k := range sortedKeys(rep.Machine) {
		if k != "hostname" {
			t.add("machine."+k, rep.Machine[k])
		}
	}
	for _, k := range sortedKeys(rep.Settings) {
		t.add("settings."+k, rep.Settings[k])
	}
	return t
}

// caseFigures are the rows of the figures table, one figure of every case each.
var caseFigures = []struct {
	name string
	cell func(r result) string
}{
	{"nodes", func(r result) string { return strconv.Itoa(r.Case.Nodes) }},
	{"cluster start s", func(r result) string { return fixed(r.ClusterStartSec, 1) }},
	{"manager start s", func(r result) string { return fixed(r.ManagerStartSec, 1) }},
	{"raw creates/s (unthrottled ConfigMaps)", func(r result) string { return fixed(r.RawWritesPerSec, 0) }},
	{"creates s", func(r result) string { return fixed(r.CreateSpreadSec, 1) }},
	{"Available", func(r result) string { return strconv.Itoa(r.Available) }},
	{"converge s", func(r result) string { return fixed(r.ConvergenceSec, 1) }},
	{"p50 / p90 / p99 / max s", func(r result) string {
		return strings.Join([]string{fixed(r.LatencyP50Sec, 1), fixed(r.LatencyP90Sec, 1), fixed(r.LatencyP99Sec, 1),
			fixed(r.LatencyMaxSec, 1)}, " / ")
	}},
	{"op writes/DC", func(r result) string { return fixed(r.WritesPerCluster, 2) }},
	{"op reads/DC", func(r result) string { return fixed(r.ReadsPerCluster, 2) }},
	{"op watches", func(r result) string { return strconv.FormatInt(r.OperatorWatches, 10) }},
	{"all clients' writes/DC", func(r result) string { return fixed(perCluster(r.SystemWrites, r.Case.N), 1) }},
	{"reconciles/DC", func(r result) string { return fixed(r.ReconcilesPerDC, 2) }},
	{"reconcile errors", func(r result) string { return fixed(r.ReconcileErrors, 0) }},
	{"mean reconcile ms", func(r result) string { return fixed(r.MeanReconcileSec*1000, 0) }},
	{"mean queue wait ms", func(r result) string { return fixed(r.MeanQueueWaitSec*1000, 0) }},
	{"idle s", func(r result) string { return fixed(r.IdleSec, 0) }},
	{"idle writes / reads", func(r result) string { return fmt.Sprintf("%d / %d", r.IdleWrites, r.IdleReads) }},
	{"idle writes, all clients", func(r result) string { return fixed(r.IdleSystemWrites, 0) }},
	{"baseline / peak / end RSS MiB", func(r result) string {
		return mibCell(float64(r.BaselineRSS)) + " / " + mibCell(float64(r.PeakRSS)) + " / " + mibCell(float64(r.EndRSS))
	}},
	{colRSS1k, func(r result) string { return mibCell(r.RSSPer1000) }},
	{"peak / end heap MiB", func(r result) string { return mibCell(r.PeakHeap) + " / " + mibCell(r.EndHeap) }},
	{"series (operator's)", func(r result) string { return fmt.Sprintf("%d (%d)", r.ManagerSeries, r.OperatorSeries) }},
	{"manager CPU s", func(r result) string { return measuredCell(r.ManagerCPUSec, 1) }},
	{"GCs", func(r result) string { return measuredCell(r.ManagerGCs, 0) }},
	{"error", func(r result) string { return r.Error }},
}

// caseMaps are the groups of rows of the figures table that a map of each case gives, one
// row per key.
var caseMaps = []struct {
	name  string
	cells func(r result) map[string]string
}{
	{"step p50 / p99 s", func(r result) map[string]string {
		return cells(r.Stages, func(v [2]float64) string { return fixed(v[0], 0) + " / " + fixed(v[1], 0) })
	}},
	{"op requests/DC", func(r result) map[string]string {
		return cells(r.Converge.ByVerbResource, func(v int64) string { return ratePerCluster(float64(v), r.Case.N) })
	}},
	{"op requests idle", func(r result) map[string]string {
		return cells(r.Idle.ByVerbResource, func(v int64) string { return strconv.FormatInt(v, 10) })
	}},
	{"all clients' writes/DC", func(r result) map[string]string {
		return cells(r.SystemByResource, func(v float64) string { return fixed(perCluster(v, r.Case.N), 2) })
	}},
	{"manager rest_client_requests_total", func(r result) map[string]string {
		return cells(r.ManagerRESTByVerb, func(v float64) string { return fixed(v, 0) })
	}},
	{"CPU s", func(r result) map[string]string { // by process, and the share of the machine that was busy
		out := cells(r.CPUByProcess, func(v float64) string { return fixed(v, 1) })
		if a := r.CPUByProcess[machineAvailable]; a > 0 {
			out["(machine busy, %)"] = fixed(100*r.CPUByProcess[machineBusy]/a, 0)
		}
		return out
	}},
	{"heap in use MiB", func(r result) map[string]string { // the heap top at the end of the idle window
		out := map[string]string{}
		for _, e := range r.HeapTop {
			out[e.Function] = mibCell(float64(e.InuseBytes))
		}
		if r.HeapInuse > 0 {
			out["(all in use)"] = mibCell(float64(r.HeapInuse))
		}
		return out
	}},
}

func cells[V any](m map[string]V, format func(V) string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = format(v)
	}
	return out
}

// figuresTable has a column per case and a row per figure: caseFigures, then every key of the
// caseMaps (steps keep the order their keys start with, the rest are sorted).
func figuresTable(results []result) mdTable {
	t := mdTable{header: []string{"figure"}}
	if len(results) == 0 {
		return t
	}
	for _, r := range results {
		t.header = append(t.header, caseLabel(r.Case))
	}
	for _, f := range caseFigures {
		row := []string{f.name}
		for _, r := range results {
			row = append(row, f.cell(r))
		}
		t.add(row...)
	}
	for _, m := range caseMaps {
		byCase := make([]map[string]string, len(results))
		keys := map[string]bool{}
		for i, r := range results {
			byCase[i] = m.cells(r)
			for k := range byCase[i] {
				keys[k] = true
			}
		}
		for _, k := range sortedKeys(keys) {
			_, name, numbered := strings.Cut(k, " ")
			if m.name != "step p50 / p99 s" || !numbered {
				name = k
			}
			row := []string{m.name + ": " + name}
			for i := range results {
				row = append(row, byCase[i][k])
			}
			t.add(row...)
		}
	}
	return t
}

func leaderCaption(l *leaderResult) string {
	if l == nil {
		return ""
	}
	what := fmt.Sprintf("Leader hand-off and takeover: %d managers, Lease %gs / %gs / %gs (duration / renew deadline / retry period), "+
		"release on cancel %t; seconds from the signal", l.Managers, l.LeaseDurationSec, l.RenewDeadlineSec, l.RetryPeriodSec, l.ReleaseOnCancel)
	if l.Error != "" {
		what += "; error: " + l.Error
	}
	return what
}

func leaderRunsTable(l *leaderResult) mdTable {
	t := mdTable{header: []string{colStop, colRun, "change made s", "Lease moved s", "workers started s", "change applied s",
		"total s", "change made while nobody led"}}
	if l == nil {
		return t
	}
	for _, m := range l.modes() {
		for i, r := range m.Runs {
			t.add(m.name, strconv.Itoa(i+1), fixed(r.ChangedSec, 2), fixed(r.LeaseMovedSec, 2), fixed(r.WorkersSec, 2),
				fixed(r.AppliedSec, 2), fixed(r.TotalSec, 2), strconv.FormatBool(r.ChangedInGap))
		}
	}
	return t
}

// floorCreates is what the floor cases of f created: the DatabaseClusters and their children
// since the floor measures the first pass (2026-11-29), only the children before; "—" without a
// floor case.
func floorCreates(f resultFile, _ result) string {
	floor := false
	for _, r := range f.Rep.Results {
		if r.Case.Floor && r.Error == "" {
			if r.FirstPassP50Sec > 0 {
				return "clusters, children"
			}
			floor = true
		}
	}
	if floor {
		return "children"
	}
	return "—"
}
