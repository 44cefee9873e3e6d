package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// resultFile is one JSON result as the documents show it.
type resultFile struct {
	// Name is the file as the captions name it (the -results directory joined with the file name).
	Name string
	// Link is the file relative to the document's directory.
	Link string
	Rep  report
}

// renderDocs renders the summary tables of the report doc (summary.go) from the JSON results in
// dir and checks that the report's text quotes only figures those tables hold and that every
// result is named by a table. With check it writes nothing and fails when doc differs from what
// it would write.
func renderDocs(w io.Writer, doc, dir string, check bool) error {
	files, err := loadResults(doc, dir)
	if err != nil {
		return err
	}
	current, err := os.ReadFile(doc)
	if err != nil {
		return err
	}
	rendered, tables, named, err := renderBlocks(string(current), files)
	if err == nil {
		err = checkFigures(rendered, tables)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", doc, err)
	}
	var unnamed []string
	for _, f := range files {
		if !named[filepath.Base(f.Name)] {
			unnamed = append(unnamed, f.Name)
		}
	}
	switch {
	case len(unnamed) > 0:
		return fmt.Errorf("%s: no table names the results %s; name them in a bench:table block or remove them", doc, strings.Join(unnamed, ", "))
	case rendered == string(current):
		_, err = fmt.Fprintf(w, "%s is current with the %d results in %s\n", doc, len(files), dir)
		return err
	case check:
		return fmt.Errorf("%s is out of date with the results in %s (%s); run \"make bench-docs\" and commit it",
			doc, dir, firstDifference(string(current), rendered))
	}
	if err := os.WriteFile(doc, []byte(rendered), 0o644); err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s: tables rendered from the %d results in %s\n", doc, len(files), dir)
	return err
}

// printRunTables writes every table of one result file as markdown to w.
func printRunTables(w io.Writer, file string) error {
	f, err := readResult(file, filepath.Dir(file))
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, renderRun(f))
	return err
}

// loadResults reads every *.json of dir, sorted by name, linked from the directory of doc.
func loadResults(doc, dir string) ([]resultFile, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no JSON results in %s", dir)
	}
	slices.Sort(paths)
	var files []resultFile
	for _, path := range paths {
		f, err := readResult(path, filepath.Dir(doc))
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// readResult reads one JSON result, linked from docDir.
func readResult(path, docDir string) (resultFile, error) {
	f := resultFile{Name: filepath.ToSlash(path)}
	data, err := os.ReadFile(path)
	if err != nil {
		return f, err
	}
	if err := json.Unmarshal(data, &f.Rep); err != nil {
		return f, fmt.Errorf("%s: %w", path, err)
	}
	if f.Rep.Started.IsZero() || (len(f.Rep.Results) == 0 && f.Rep.Leader == nil) {
		return f, fmt.Errorf("%s: not a result of hack/bench (no started, results or leader)", path)
	}
	from, err := filepath.Abs(docDir)
	if err != nil {
		return f, err
	}
	to, err := filepath.Abs(path)
	if err != nil {
		return f, err
	}
	link, err := filepath.Rel(from, to)
	f.Link = filepath.ToSlash(link)
	return f, err
}

// firstDifference names the first line where have and want differ.
func firstDifference(have, want string) string {
	h, w := strings.Split(have, "\n"), strings.Split(want, "\n")
	for i := range max(len(h), len(w)) {
		if i >= len(h) || i >= len(w) || h[i] != w[i] {
			return fmt.Sprintf("line %d is %.120q, rendered %.120q", i+1, line(h, i), line(w, i))
		}
	}
	return "no difference"
}

func line(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return ""
}

// mdTable is a markdown table; right marks the columns aligned right (numbers).
type mdTable struct {
	header []string
	right  []bool
	rows   [][]string
}

// newTable is a table whose first column is aligned left and the others right.
func newTable(header ...string) mdTable {
	t := mdTable{header: header, right: make([]bool, len(header))}
	for i := 1; i < len(header); i++ {
		t.right[i] = true
	}
	return t
}

func (t *mdTable) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t mdTable) write(b *bytes.Buffer) {
	row := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + escapeCell(c) + " |")
		}
		b.WriteString("\n")
	}
	row(t.header)
	b.WriteString("|")
	for _, right := range t.right {
		b.WriteString(map[bool]string{false: "---|", true: "---:|"}[right])
	}
	b.WriteString("\n")
	for _, r := range t.rows {
		row(r)
	}
}

func escapeCell(s string) string {
	if s == "" {
		return "–"
	}
	return strings.ReplaceAll(s, "|", `\|`)
}

// caption writes the line above a table: what it shows and the JSON file it came from.
func caption(b *bytes.Buffer, f resultFile, what string) {
	fmt.Fprintf(b, "\n%s — from [`%s`](%s):\n\n", what, f.Name, f.Link)
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
	return fmt.Sprintf("c=%d q=%g/%d", c.Concurrency, c.QPS, c.Burst)
}

func caseLabel(c benchCase) string {
	if c.Floor {
		return fmt.Sprintf("N=%d floor", c.N)
	}
	return fmt.Sprintf("N=%d %s", c.N, configLabel(c))
}

// runLink is the short name of a result in the tables (its UTC start), linked to it.
func runLink(f resultFile) string {
	stamp, _, _ := strings.Cut(strings.TrimSuffix(filepath.Base(f.Name), ".json"), "-")
	return fmt.Sprintf("[%s](%s)", stamp, f.Link)
}

// renderRun renders every table of one result file: the run, its overhead and growth tables,
// every figure of every case, and the leader case.
func renderRun(f resultFile) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "### `%s`\n", f.Name)
	caption(&b, f, "Run")
	t := runTable(f.Rep)
	t.write(&b)
	one := []resultFile{f}
	for _, s := range []struct {
		what  string
		table mdTable
	}{
		{"Overhead against the floor: the operator's convergence over the floor's, means of the cases", overheadTable(one)},
		{"Growth with N (means of the cases of each N)", growthTable(one)},
		{"Every figure of every case", figuresTable(f.Rep.Results)},
		{leaderCaption(f.Rep.Leader), leaderTable(one)},
		{"Every leader run, seconds from the signal", leaderRunsTable(f.Rep.Leader)},
	} {
		if len(s.table.rows) > 0 {
			caption(&b, f, s.what)
			s.table.write(&b)
		}
	}
	return b.String()
}

// runTable shows where and how a run ran.
func runTable(rep report) mdTable {
	t := newTable("key", "value")
	t.right[1] = false
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
	{"ideal s (op writes at the raw rate)", func(r result) string { return fixed(r.IdealSec, 1) }},
	{"converge ÷ ideal", func(r result) string { return fixed(r.Ratio, 1) }},
	{"all clients' writes/DC", func(r result) string { return fixed(perCluster(r.SystemWrites, r.Case.N), 1) }},
	{"converge ÷ all writes at the raw rate", func(r result) string { return fixed(r.SystemRatio, 2) }},
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
	{"RSS/1k DC MiB", func(r result) string { return mibCell(r.RSSPer1000) }},
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
	{"CPU s", cpuCells},
	{"heap in use MiB", heapCells},
}

func cells[V any](m map[string]V, format func(V) string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = format(v)
	}
	return out
}

// cpuCells are the CPU seconds by process and the share of the machine that was busy.
func cpuCells(r result) map[string]string {
	out := cells(r.CPUByProcess, func(v float64) string { return fixed(v, 1) })
	if a := r.CPUByProcess[machineAvailable]; a > 0 {
		out["(machine busy, %)"] = fixed(100*r.CPUByProcess[machineBusy]/a, 0)
	}
	return out
}

// heapCells are the manager's heap top at the end of the idle window, and all in use.
func heapCells(r result) map[string]string {
	out := map[string]string{}
	for _, e := range r.HeapTop {
		out[e.Function] = mibCell(float64(e.InuseBytes))
	}
	if r.HeapInuse > 0 {
		out["(all in use)"] = mibCell(float64(r.HeapInuse))
	}
	return out
}

// figuresTable has a column per case and a row per figure: caseFigures, then every key of the
// caseMaps (steps keep the order their keys start with, the rest are sorted).
func figuresTable(results []result) mdTable {
	t := newTable("figure")
	for _, r := range results {
		t.header = append(t.header, caseLabel(r.Case))
		t.right = append(t.right, true)
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
	if len(results) == 0 {
		t.rows = nil
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
	t := newTable("stop", "run", "change made s", "Lease moved s", "workers started s", "change applied s", "total s",
		"change made while nobody led")
	t.right[7] = false
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

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// errNoRender is returned when -results or -check is given without -render-docs.
var errNoRender = errors.New("-results and -check go with -render-docs")
