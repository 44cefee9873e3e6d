package main

import (
	"bytes"
	"cmp"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
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
	"overhead": overheadTable,
	"writes":   writesTable,
	"memory":   memoryTable,
	"growth":   growthTable,
	"leader":   leaderTable,
	"runs":     runsTable,
}

// summaryBlock is one block of the report: the line of its first marker and what it names.
type summaryBlock struct {
	line  int
	kind  string
	files []string
}

// renderBlocks replaces the content of every block of doc with its rendered table. It returns
// the new document, the text of all rendered tables and the JSON files the blocks named.
func renderBlocks(doc string, files []resultFile) (string, string, map[string]bool, error) {
	byBase := map[string]resultFile{}
	for _, f := range files {
		byBase[path.Base(f.Name)] = f
	}
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
		blk, err := parseBlock(i+1, l)
		if err != nil {
			return "", "", nil, err
		}
		end := i + 1
		for end < len(lines) && strings.TrimSpace(lines[end]) != blockEnd {
			if strings.HasPrefix(lines[end], blockPrefix) {
				return "", "", nil, fmt.Errorf("line %d: a block opened on line %d is not closed by %s", end+1, blk.line, blockEnd)
			}
			end++
		}
		if end == len(lines) {
			return "", "", nil, fmt.Errorf("line %d: no %s after the block", blk.line, blockEnd)
		}
		sel, err := blk.selectFiles(files, byBase)
		if err != nil {
			return "", "", nil, err
		}
		for _, f := range sel {
			named[path.Base(f.Name)] = true
		}
		var b bytes.Buffer
		summaryKinds[blk.kind](sel).write(&b)
		table := strings.TrimSpace(b.String())
		tables.WriteString(table + "\n")
		out = append(out, "", table, "", blockEnd)
		i = end
	}
	return strings.Join(out, "\n"), tables.String(), named, nil
}

// selectFiles are the results the block names, in its order ("all": every result with scale
// cases, in name order).
func (blk summaryBlock) selectFiles(files []resultFile, byBase map[string]resultFile) ([]resultFile, error) {
	var sel []resultFile
	for _, name := range blk.files {
		if name == "all" {
			for _, f := range files {
				if len(f.Rep.Results) > 0 {
					sel = append(sel, f)
				}
			}
			continue
		}
		f, ok := byBase[name]
		if !ok {
			return nil, fmt.Errorf("line %d: no result %s in the results directory", blk.line, name)
		}
		sel = append(sel, f)
	}
	return sel, nil
}

func parseBlock(line int, l string) (summaryBlock, error) {
	if !strings.HasSuffix(l, blockSuffix) {
		return summaryBlock{}, fmt.Errorf("line %d: a block marker ends with %q", line, blockSuffix)
	}
	fields := strings.Fields(strings.TrimSuffix(strings.TrimPrefix(l, blockPrefix), blockSuffix))
	if len(fields) < 2 {
		return summaryBlock{}, fmt.Errorf("line %d: a block names a kind and at least one file", line)
	}
	if summaryKinds[fields[0]] == nil {
		return summaryBlock{}, fmt.Errorf("line %d: unknown kind %q (kinds: %s)", line, fields[0], strings.Join(sortedKeys(summaryKinds), ", "))
	}
	return summaryBlock{line: line, kind: fields[0], files: fields[1:]}, nil
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

// operatorCases are the successful operator cases of f.
func operatorCases(f resultFile) []result {
	var out []result
	for _, r := range f.Rep.Results {
		if !r.Case.Floor && r.Error == "" {
			out = append(out, r)
		}
	}
	return out
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

// statusPatches is how many status patches per cluster the operator made while converging.
func statusPatches(r result) string {
	const key = "patch databaseclusters.database.seed1b407122.io/status"
	return fixed(perCluster(float64(r.Converge.ByVerbResource[key]), r.Case.N), 2)
}

// countedBy says how a file's operator requests were counted; results written before the
// setting existed were counted by a proxy since removed.
func countedBy(f resultFile) string {
	return cmp.Or(f.Rep.Settings["count"], "proxy")
}

func overheadTable(files []resultFile) mdTable {
	t := newTable("run", "N", "operator", "floor converge s", "operator converge s", "overhead", "overhead p50 / p99",
		"busy CPU, operator ÷ floor")
	t.right[2] = false
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

func writesTable(files []resultFile) mdTable {
	t := newTable("run", "case", "writes/DC", "status patches/DC", "reads/DC", "reconciles/DC", "reconcile errors",
		"idle s", "idle writes", "idle reads")
	t.right[1] = false
	for _, f := range files {
		for _, r := range operatorCases(f) {
			t.add(runLink(f), caseLabel(r.Case), fixed(r.WritesPerCluster, 2), statusPatches(r), fixed(r.ReadsPerCluster, 2),
				fixed(r.ReconcilesPerDC, 2), fixed(r.ReconcileErrors, 0), fixed(r.IdleSec, 0),
				strconv.FormatInt(r.IdleWrites, 10), strconv.FormatInt(r.IdleReads, 10))
		}
	}
	return t
}

func memoryTable(files []resultFile) mdTable {
	t := newTable("run", "case", "baseline RSS MiB", "peak RSS MiB", "RSS/1k DC MiB", "peak heap MiB", "end heap MiB",
		"manager CPU s", "GCs")
	t.right[1] = false
	for _, f := range files {
		for _, r := range operatorCases(f) {
			t.add(runLink(f), caseLabel(r.Case), mibCell(float64(r.BaselineRSS)), mibCell(float64(r.PeakRSS)),
				mibCell(r.RSSPer1000), mibCell(r.PeakHeap), mibCell(r.EndHeap),
				measuredCell(r.ManagerCPUSec, 1), measuredCell(r.ManagerGCs, 0))
		}
	}
	return t
}

func growthTable(files []resultFile) mdTable {
	t := newTable("run", "N", "floor converge s", "operator converge s", "overhead", "writes/DC", "RSS/1k DC MiB",
		"manager CPU ms/DC")
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
	t := newTable("run", "stop", "runs", "min s", "median s", "max s", "Lease moved, median s", "workers started, median s")
	t.right[1] = false
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

// runsTable is the index of the runs: one row per operator case, the figures the experiments
// compare, in the order of the files' names.
func runsTable(files []resultFile) mdTable {
	t := newTable("run", "case", "counted by", "converge s", "overhead", "writes/DC", "status patches/DC",
		"reconcile errors", "RSS/1k DC MiB", "peak heap MiB", "manager CPU s", "idle writes")
	t.right[1], t.right[2] = false, false
	sorted := slices.SortedStableFunc(slices.Values(files), func(a, b resultFile) int { return cmp.Compare(a.Name, b.Name) })
	for _, f := range sorted {
		for _, r := range operatorCases(f) {
			t.add(runLink(f), caseLabel(r.Case), countedBy(f), fixed(r.ConvergenceSec, 1), overheadOf(f, r),
				fixed(r.WritesPerCluster, 2), statusPatches(r), fixed(r.ReconcileErrors, 0), mibCell(r.RSSPer1000),
				mibCell(r.PeakHeap), measuredCell(r.ManagerCPUSec, 1), strconv.FormatInt(r.IdleWrites, 10))
		}
	}
	return t
}
