package main

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"sort"
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
var summaryKinds = map[string]func(b *bytes.Buffer, files []resultFile){
	"overhead": writeOverheadSummary,
	"writes":   writeWritesSummary,
	"memory":   writeMemorySummary,
	"growth":   writeGrowthSummary,
	"leader":   writeLeaderSummary,
	"runs":     writeRunsSummary,
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
		summaryKinds[blk.kind](&b, sel)
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

// runLink is the short name of a result in the summary tables (its UTC start), linked to it.
func runLink(f resultFile) string {
	base := path.Base(f.Name)
	stamp, _, _ := strings.Cut(strings.TrimSuffix(base, ".json"), "-")
	return fmt.Sprintf("[%s](%s)", stamp, f.Link)
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

// overheadOf is the convergence overhead of f's operator cases of N with r's configuration, or
// "—" when the file has no floor case of that N.
func overheadOf(f resultFile, r result) string {
	config := fmt.Sprintf("c=%d q=%g/%d", r.Case.Concurrency, r.Case.QPS, r.Case.Burst)
	for _, o := range overheads(f.Rep.Results) {
		if o.N == r.Case.N && o.Config == config {
			return fixed(o.ratio()[0], 2)
		}
	}
	return "—"
}

// Column headers the summary tables share.
const (
	hRun              = "run"
	hRuns             = "runs"
	hOperator         = "operator"
	hOverhead         = "overhead"
	hFloorConverge    = "floor converge s"
	hRSSPer1k         = "RSS/1k DC MiB"
	hManagerCPU       = "manager CPU s"
	hMax              = "max s"
	hReconcileErrors  = "reconcile errors"
	hIdleWrites       = "idle writes"
	hIdleReads        = "idle reads"
	hOperatorConverge = "operator converge s"
	hPeakHeap         = "peak heap MiB"
	hStop             = "stop"
	hWritesPerDC      = "writes/DC"
	hStatusPatches    = "status patches/DC"
	hMedian           = "median s"
	hMin              = "min s"
	hN                = "N"
)

// statusPatchesKey is the request that writes a DatabaseCluster's status.
const statusPatchesKey = "patch databaseclusters.database.seed1b407122.io/status"

func writeOverheadSummary(b *bytes.Buffer, files []resultFile) {
	t := mdTable{header: []string{hRun, hN, hOperator, hFloorConverge, hOperatorConverge, hOverhead, "overhead p50 / p99",
		"busy CPU, operator ÷ floor"}, right: []bool{false, true, false, true, true, true, true, true}}
	for _, f := range files {
		for _, o := range overheads(f.Rep.Results) {
			r := o.ratio()
			t.add(runLink(f), strconv.Itoa(o.N), o.Config, convergences(o.Floor), convergences(o.Operator), fixed(r[0], 2),
				fixed(r[1], 2)+" / "+fixed(r[2], 2), o.busyRatio())
		}
	}
	t.write(b)
}

func writeWritesSummary(b *bytes.Buffer, files []resultFile) {
	t := mdTable{header: []string{hRun, caseHeader, hWritesPerDC, hStatusPatches, "reads/DC", "reconciles/DC", hReconcileErrors,
		"idle s", hIdleWrites, hIdleReads}, right: []bool{false, false, true, true, true, true, true, true, true, true}}
	for _, f := range files {
		for _, r := range operatorCases(f) {
			t.add(runLink(f), caseLabel(r.Case), fixed(r.WritesPerCluster, 2),
				fixed(perCluster(float64(r.Converge.ByVerbResource[statusPatchesKey]), r.Case.N), 2),
				fixed(r.ReadsPerCluster, 2), fixed(r.ReconcilesPerDC, 2), fixed(r.ReconcileErrors, 0), fixed(r.IdleSec, 0),
				strconv.FormatInt(r.IdleWrites, 10), strconv.FormatInt(r.IdleReads, 10))
		}
	}
	t.write(b)
}

func writeMemorySummary(b *bytes.Buffer, files []resultFile) {
	t := mdTable{header: []string{hRun, caseHeader, "baseline RSS MiB", "peak RSS MiB", hRSSPer1k, hPeakHeap, "end heap MiB",
		hManagerCPU, "GCs"}, right: []bool{false, false, true, true, true, true, true, true, true}}
	for _, f := range files {
		for _, r := range operatorCases(f) {
			t.add(runLink(f), caseLabel(r.Case), fixed(mib(float64(r.BaselineRSS)), 1), fixed(mib(float64(r.PeakRSS)), 1),
				fixed(mib(r.RSSPer1000), 1), fixed(mib(r.PeakHeap), 1), fixed(mib(r.EndHeap), 1),
				measuredCell(r.ManagerCPUSec, 1), measuredCell(r.ManagerGCs, 0))
		}
	}
	t.write(b)
}

func writeGrowthSummary(b *bytes.Buffer, files []resultFile) {
	t := mdTable{header: []string{hRun, hN, hFloorConverge, hOperatorConverge, hOverhead, hWritesPerDC, hRSSPer1k,
		"manager CPU ms/DC"}, right: []bool{false, true, true, true, true, true, true, true}}
	for _, f := range files {
		for _, p := range growthPoints(f.Rep.Results) {
			t.add(runLink(f), strconv.Itoa(p.N), fixed(p.Floor, 1), fixed(p.Operator, 1), fixed(p.Ratio, 2), fixed(p.Writes, 2),
				fixed(p.RSSPer1k, 1), measuredCell(p.CPUPerCluster, 0))
		}
	}
	t.write(b)
}

func writeLeaderSummary(b *bytes.Buffer, files []resultFile) {
	t := mdTable{header: []string{hRun, hStop, hRuns, hMin, hMedian, hMax, "Lease moved, median s", "workers started, median s"},
		right: []bool{false, false, true, true, true, true, true, true}}
	for _, f := range files {
		l := f.Rep.Leader
		if l == nil {
			continue
		}
		for _, m := range []struct {
			name string
			mode leaderMode
		}{{"graceful hand-off (" + l.HandOff.Signal + ")", l.HandOff}, {"crash takeover (" + l.Takeover.Signal + ")", l.Takeover}} {
			t.add(runLink(f), m.name, strconv.Itoa(m.mode.Total.Runs), fixed(m.mode.Total.MinSec, 2), fixed(m.mode.Total.MedianSec, 2),
				fixed(m.mode.Total.MaxSec, 2), fixed(m.mode.LeaseMoved.MedianSec, 2), fixed(m.mode.Workers.MedianSec, 2))
		}
	}
	t.write(b)
}

// writeRunsSummary is the index of the runs: one row per operator case, the figures the
// experiments compare.
func writeRunsSummary(b *bytes.Buffer, files []resultFile) {
	t := mdTable{header: []string{hRun, caseHeader, "counted by", "converge s", hOverhead, hWritesPerDC, hStatusPatches,
		hReconcileErrors, hRSSPer1k, hPeakHeap, hManagerCPU, hIdleWrites},
		right: []bool{false, false, false, true, true, true, true, true, true, true, true, true}}
	sorted := append([]resultFile(nil), files...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, f := range sorted {
		by := f.Rep.Settings["count"]
		if by == "" {
			by = "proxy" // results written before -count existed
		}
		for _, r := range operatorCases(f) {
			t.add(runLink(f), caseLabel(r.Case), by, fixed(r.ConvergenceSec, 1), overheadOf(f, r), fixed(r.WritesPerCluster, 2),
				fixed(perCluster(float64(r.Converge.ByVerbResource[statusPatchesKey]), r.Case.N), 2), fixed(r.ReconcileErrors, 0),
				fixed(mib(r.RSSPer1000), 1), fixed(mib(r.PeakHeap), 1), measuredCell(r.ManagerCPUSec, 1),
				strconv.FormatInt(r.IdleWrites, 10))
		}
	}
	t.write(b)
}
