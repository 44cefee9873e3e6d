package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/seed1b407122/database-operator/test/harness/leader"
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
	if err != nil {
		return fmt.Errorf("%s: %w", doc, err)
	}
	if err := checkFigures(rendered, tables); err != nil {
		return fmt.Errorf("%s: %w", doc, err)
	}
	var unnamed []string
	for _, f := range files {
		if !named[filepath.Base(f.Name)] {
			unnamed = append(unnamed, f.Name)
		}
	}
	if len(unnamed) > 0 {
		return fmt.Errorf("%s: no table names the results %s; name them in a bench:table block or remove them", doc, strings.Join(unnamed, ", "))
	}
	if check {
		if rendered != string(current) {
			return fmt.Errorf("%s is out of date with the results in %s (%s); run \"make bench-docs\" and commit it",
				doc, dir, firstDifference(string(current), rendered))
		}
		_, _ = fmt.Fprintf(w, "%s is current with the %d results in %s\n", doc, len(files), dir)
		return nil
	}
	if rendered == string(current) {
		_, _ = fmt.Fprintf(w, "%s is already current with the %d results in %s\n", doc, len(files), dir)
		return nil
	}
	info, err := os.Stat(doc)
	if err != nil {
		return err
	}
	if err := os.WriteFile(doc, []byte(rendered), info.Mode().Perm()); err != nil {
		return err
	}
	_, _ = fmt.Fprintf(w, "%s: tables rendered from the %d results in %s\n", doc, len(files), dir)
	return nil
}

// printRunTables writes every table of one result file (the per-run tables, which no document
// keeps) as markdown to w.
func printRunTables(w io.Writer, file string) error {
	dir := filepath.Dir(file)
	files, err := loadResults(filepath.Join(dir, "run.md"), dir)
	if err != nil {
		return err
	}
	for _, f := range files {
		if filepath.Base(f.Name) != filepath.Base(file) {
			continue
		}
		_, err := io.WriteString(w, strings.TrimSpace(renderTables([]resultFile{f}))+"\n")
		return err
	}
	return fmt.Errorf("%s: not a JSON result", file)
}

// loadResults reads every *.json of dir, sorted by name.
func loadResults(doc, dir string) ([]resultFile, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no JSON results in %s", dir)
	}
	sort.Strings(paths)
	docDir, err := filepath.Abs(filepath.Dir(doc))
	if err != nil {
		return nil, err
	}
	var files []resultFile
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		var rep report
		if err := json.Unmarshal(data, &rep); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if rep.Started.IsZero() || (len(rep.Results) == 0 && rep.Leader == nil) {
			return nil, fmt.Errorf("%s: not a result of hack/bench (no started, results or leader)", path)
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, err
		}
		link, err := filepath.Rel(docDir, abs)
		if err != nil {
			return nil, err
		}
		files = append(files, resultFile{Name: filepath.ToSlash(path), Link: filepath.ToSlash(link), Rep: rep})
	}
	return files, nil
}

// firstDifference names the first line where have and want differ.
func firstDifference(have, want string) string {
	h, w := strings.Split(have, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(h), len(w)); i++ {
		var hl, wl string
		if i < len(h) {
			hl = h[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if hl != wl || i >= len(h) || i >= len(w) {
			return fmt.Sprintf("line %d is %q, rendered %q", i+1, truncate(hl, 120), truncate(wl, 120))
		}
	}
	return "no difference"
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// caseHeader heads the column that names a scale case (see caseLabel).
const caseHeader = "case"

// mdTable is a markdown table; right marks the columns aligned right (numbers).
type mdTable struct {
	header []string
	right  []bool
	rows   [][]string
}

func (t *mdTable) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *mdTable) write(b *bytes.Buffer) {
	row := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + escapeCell(c) + " |")
		}
		b.WriteString("\n")
	}
	row(t.header)
	b.WriteString("|")
	for i := range t.header {
		if i < len(t.right) && t.right[i] {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
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
func caption(b *bytes.Buffer, f resultFile, what, field string) {
	fmt.Fprintf(b, "\n%s — from [`%s`](%s) `%s`:\n\n", what, f.Name, f.Link, field)
}

func fixed(v float64, decimals int) string { return strconv.FormatFloat(v, 'f', decimals, 64) }

// ratePerCluster formats a per-cluster count with 2 decimals; "<0.01" tells a rare request
// (one in 300 clusters) from none.
func ratePerCluster(v float64, n int) string {
	if v = perCluster(v, n); v > 0 && v < 0.005 {
		return "<0.01"
	}
	return fixed(v, 2)
}

func caseLabel(c benchCase) string {
	if c.Floor {
		return fmt.Sprintf("N=%d floor", c.N)
	}
	return fmt.Sprintf("N=%d c=%d q=%g/%d", c.N, c.Concurrency, c.QPS, c.Burst)
}

func perCluster(v float64, n int) float64 {
	if n <= 0 {
		return 0
	}
	return v / float64(n)
}

// renderTables renders the tables of every file.
func renderTables(files []resultFile) string {
	var b bytes.Buffer
	for _, f := range files {
		fmt.Fprintf(&b, "\n### `%s`\n", f.Name)
		writeRunTable(&b, f)
		if len(f.Rep.Results) > 0 {
			writeOverheadTable(&b, f)
			writeGrowth(&b, f)
			writeScaleTable(&b, f)
			writeConvergenceTable(&b, f)
			writeRawTable(&b, f)
			writeStagesTable(&b, f)
			writeHeapTable(&b, f)
			writeCPUTable(&b, f)
			writeOperatorRequests(&b, f)
			writeByKeyTable(&b, f, "Every client's writes per cluster while converging (kube-apiserver's `apiserver_request_total`)",
				"results[].systemWritesByVerbResource", []string{"verb", "resource"},
				func(r result) map[string]float64 { return r.SystemByResource }, true)
			writeByKeyTable(&b, f, "The manager's own `rest_client_requests_total` while converging (cross-check of the counts above)",
				"results[].managerRestClientRequestsByMethodCode", []string{"method", "code"},
				func(r result) map[string]float64 { return r.ManagerRESTByVerb }, false)
		}
		if f.Rep.Leader != nil {
			writeLeaderTables(&b, f)
		}
	}
	return b.String()
}

// writeRunTable shows where and how the file's run ran.
func writeRunTable(b *bytes.Buffer, f resultFile) {
	caption(b, f, "Run", "started, machine, settings")
	t := mdTable{header: []string{"key", "value"}}
	t.add("started", f.Rep.Started.UTC().Format(time.RFC3339))
	if !f.Rep.Finished.IsZero() {
		t.add("finished", f.Rep.Finished.UTC().Format(time.RFC3339))
		t.add("wall time", f.Rep.Finished.Sub(f.Rep.Started).Round(time.Second).String())
	}
	for _, k := range sortedKeys(f.Rep.Machine) {
		if k == "hostname" {
			continue
		}
		t.add("machine."+k, f.Rep.Machine[k])
	}
	for _, k := range sortedKeys(f.Rep.Settings) {
		t.add("settings."+k, f.Rep.Settings[k])
	}
	t.write(b)
}

func writeScaleTable(b *bytes.Buffer, f resultFile) {
	caption(b, f, "Scale cases", "results[]")
	t := mdTable{
		header: []string{"N", "nodes", "conc", "qps/burst", "Available", "all Available s", "p50 s", "p99 s",
			"op writes/DC", "op reads/DC", "idle s", "idle writes", "idle reads", "peak RSS MiB", "RSS/1k DC MiB", "peak heap MiB", "error"},
		right: []bool{true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, false},
	}
	for _, r := range f.Rep.Results {
		n := strconv.Itoa(r.Case.N)
		if r.Case.Floor {
			n += " floor"
		}
		t.add(n, strconv.Itoa(r.Case.Nodes), strconv.Itoa(r.Case.Concurrency),
			fmt.Sprintf("%g/%d", r.Case.QPS, r.Case.Burst), strconv.Itoa(r.Available), fixed(r.ConvergenceSec, 1),
			fixed(r.LatencyP50Sec, 1), fixed(r.LatencyP99Sec, 1), fixed(r.WritesPerCluster, 2), fixed(r.ReadsPerCluster, 2),
			fixed(r.IdleSec, 0), strconv.FormatInt(r.IdleWrites, 10), strconv.FormatInt(r.IdleReads, 10),
			fixed(mib(float64(r.PeakRSS)), 1), fixed(mib(r.RSSPer1000), 1), fixed(mib(r.PeakHeap), 1), r.Error)
	}
	t.write(b)
}

func writeConvergenceTable(b *bytes.Buffer, f resultFile) {
	caption(b, f, "Convergence and the databasecluster controller", "results[]")
	t := mdTable{
		header: []string{caseHeader, "cluster start s", "manager start s", "creates s", "p90 s", "max s", "reconciles/DC",
			"reconcile errors", "mean reconcile ms", "mean queue wait ms", "op watches", "baseline RSS MiB", "end RSS MiB", "end heap MiB",
			"series (operator's)", "manager CPU s", "GCs"},
		right: []bool{false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true},
	}
	for _, r := range f.Rep.Results {
		t.add(caseLabel(r.Case), fixed(r.ClusterStartSec, 1), fixed(r.ManagerStartSec, 1), fixed(r.CreateSpreadSec, 1),
			fixed(r.LatencyP90Sec, 1), fixed(r.LatencyMaxSec, 1), fixed(r.ReconcilesPerDC, 2), fixed(r.ReconcileErrors, 0),
			fixed(r.MeanReconcileSec*1000, 0), fixed(r.MeanQueueWaitSec*1000, 0), strconv.FormatInt(r.OperatorWatches, 10),
			fixed(mib(float64(r.BaselineRSS)), 1), fixed(mib(float64(r.EndRSS)), 1), fixed(mib(r.EndHeap), 1),
			seriesCell(r), measuredCell(r.ManagerCPUSec, 1), measuredCell(r.ManagerGCs, 0))
	}
	t.write(b)
}

// seriesCell is "all (operator's)" of a result, or "—" for results written before the bench
// counted series.
func seriesCell(r result) string {
	if r.ManagerSeries == 0 {
		return "—"
	}
	return fmt.Sprintf("%d (%d)", r.ManagerSeries, r.OperatorSeries)
}

// measuredCell is v with the given decimals, or "—" for a figure the result does not have
// (0: written before the bench measured it, or a floor case, which has no manager).
func measuredCell(v float64, decimals int) string {
	if v == 0 {
		return "—"
	}
	return fixed(v, decimals)
}

func writeRawTable(b *bytes.Buffer, f resultFile) {
	caption(b, f, "Raw API write rate (unthrottled ConfigMap creates) and the ratios to it", "results[]")
	t := mdTable{
		header: []string{caseHeader, "raw creates", "raw s", "raw creates/s", "op writes", "ideal s", "ratio",
			"sys writes", "sys writes/DC", "sys ratio", "idle sys writes"},
		right: []bool{false, true, true, true, true, true, true, true, true, true, true},
	}
	for _, r := range f.Rep.Results {
		t.add(caseLabel(r.Case), strconv.Itoa(r.RawCreates), fixed(r.RawSeconds, 1), fixed(r.RawWritesPerSec, 0),
			strconv.FormatInt(r.OperatorWrites, 10), fixed(r.IdealSec, 1), fixed(r.Ratio, 1), fixed(r.SystemWrites, 0),
			fixed(perCluster(r.SystemWrites, r.Case.N), 1), fixed(r.SystemRatio, 2), fixed(r.IdleSystemWrites, 0))
	}
	t.write(b)
}

func writeStagesTable(b *bytes.Buffer, f resultFile) {
	keys := resultKeys(f, func(r result) map[string][2]float64 { return r.Stages })
	if len(keys) == 0 {
		return
	}
	caption(b, f, "Create→Available by step, p50 / p99 s (API timestamps, 1 s resolution)", "results[].stagesP50P99Seconds")
	t := mdTable{header: []string{caseHeader}, right: []bool{false}}
	for _, k := range keys {
		_, name, _ := strings.Cut(k, " ") // the keys start with their order: "0 cluster created→..."
		t.header = append(t.header, name)
		t.right = append(t.right, true)
	}
	for _, r := range f.Rep.Results {
		cells := []string{caseLabel(r.Case)}
		for _, k := range keys {
			if v, ok := r.Stages[k]; ok {
				cells = append(cells, fixed(v[0], 0)+" / "+fixed(v[1], 0))
			} else {
				cells = append(cells, "")
			}
		}
		t.add(cells...)
	}
	t.write(b)
}

// countedBy says how the file's operator requests were counted (settings.count; the files
// written before it was a setting, and those of "proxy", used a counting proxy since removed).
func countedBy(f resultFile) string {
	switch f.Rep.Settings["count"] {
	case countAudit:
		return "kube-apiserver's audit log of the manager's own user"
	case countNone:
		return "not counted"
	}
	return "counting proxy"
}

// writeOperatorRequests shows the requests the audit log (or, in old results, the proxy) counted by verb and resource: per cluster
// while converging and in total while idle, for every case.
func writeOperatorRequests(b *bytes.Buffer, f resultFile) {
	keys := map[string]bool{}
	for _, r := range f.Rep.Results {
		for k := range r.Converge.ByVerbResource {
			keys[k] = true
		}
		for k := range r.Idle.ByVerbResource {
			keys[k] = true
		}
	}
	if len(keys) == 0 {
		return
	}
	caption(b, f, "Operator requests by verb and resource ("+countedBy(f)+"): per cluster while converging, total while idle",
		"results[].convergeRequests, results[].idleRequests")
	t := mdTable{header: []string{"verb", "resource"}, right: []bool{false, false}}
	for _, r := range f.Rep.Results {
		t.header = append(t.header, caseLabel(r.Case)+" /DC", caseLabel(r.Case)+" idle")
		t.right = append(t.right, true, true)
	}
	for _, k := range sortedKeys(keys) {
		verb, res, _ := strings.Cut(k, " ")
		cells := []string{verb, res}
		for _, r := range f.Rep.Results {
			cells = append(cells, ratePerCluster(float64(r.Converge.ByVerbResource[k]), r.Case.N),
				strconv.FormatInt(r.Idle.ByVerbResource[k], 10))
		}
		t.add(cells...)
	}
	t.write(b)
}

// writeByKeyTable shows a map of every case, one row per key (its space-separated parts in
// the first columns, the rest joined with "/"), per cluster or in total.
func writeByKeyTable(b *bytes.Buffer, f resultFile, what, field string, keyHeader []string,
	values func(result) map[string]float64, perDC bool,
) {
	keys := resultKeys(f, values)
	if len(keys) == 0 {
		return
	}
	caption(b, f, what, field)
	t := mdTable{header: append([]string(nil), keyHeader...), right: make([]bool, len(keyHeader))}
	for _, r := range f.Rep.Results {
		h := caseLabel(r.Case)
		if perDC {
			h += " /DC"
		}
		t.header = append(t.header, h)
		t.right = append(t.right, true)
	}
	for _, k := range keys {
		parts := strings.Fields(k)
		cells := make([]string, len(keyHeader))
		for i := range cells {
			if i == len(cells)-1 && len(parts) > i {
				cells[i] = strings.Join(parts[i:], "/")
			} else if i < len(parts) {
				cells[i] = parts[i]
			}
		}
		for _, r := range f.Rep.Results {
			if v := values(r)[k]; perDC {
				cells = append(cells, ratePerCluster(v, r.Case.N))
			} else {
				cells = append(cells, fixed(v, 0))
			}
		}
		t.add(cells...)
	}
	t.write(b)
}

func writeLeaderTables(b *bytes.Buffer, f resultFile) {
	l := f.Rep.Leader
	what := fmt.Sprintf("Leader hand-off and takeover: %d managers, Lease %gs / %gs / %gs (duration / renew deadline / retry period), "+
		"release on cancel %t; seconds from the signal", l.Managers, l.LeaseDurationSec, l.RenewDeadlineSec, l.RetryPeriodSec, l.ReleaseOnCancel)
	if l.Error != "" {
		what += "; error: " + l.Error
	}
	caption(b, f, what, "leader")
	t := mdTable{
		header: []string{"stop", "signal", "runs", "min s", "median s", "max s", "Lease moved s (min / median / max)",
			"workers started s (min / median / max)"},
		right: []bool{false, false, true, true, true, true, true, true},
	}
	spread := func(s leader.Summary) string {
		return fixed(s.MinSec, 2) + " / " + fixed(s.MedianSec, 2) + " / " + fixed(s.MaxSec, 2)
	}
	modes := []struct {
		name string
		mode leaderMode
	}{{"graceful hand-off", l.HandOff}, {"crash takeover", l.Takeover}}
	for _, m := range modes {
		t.add(m.name, m.mode.Signal, strconv.Itoa(m.mode.Total.Runs), fixed(m.mode.Total.MinSec, 2),
			fixed(m.mode.Total.MedianSec, 2), fixed(m.mode.Total.MaxSec, 2), spread(m.mode.LeaseMoved), spread(m.mode.Workers))
	}
	t.write(b)

	caption(b, f, "Every leader run, seconds from the signal", "leader.handOff.runs, leader.takeover.runs")
	runs := mdTable{
		header: []string{"stop", "run", "change made s", "Lease moved s", "workers started s", "change applied s", "total s", "change made while nobody led"},
		right:  []bool{false, true, true, true, true, true, true, false},
	}
	for _, m := range modes {
		for i, r := range m.mode.Runs {
			runs.add(m.name, strconv.Itoa(i+1), fixed(r.ChangedSec, 2), fixed(r.LeaseMovedSec, 2), fixed(r.WorkersSec, 2),
				fixed(r.AppliedSec, 2), fixed(r.TotalSec, 2), strconv.FormatBool(r.ChangedInGap))
		}
	}
	runs.write(b)
}

// resultKeys are the keys of the map values gives for any result of f, sorted.
func resultKeys[V any](f resultFile, values func(result) map[string]V) []string {
	keys := map[string]bool{}
	for _, r := range f.Rep.Results {
		for k := range values(r) {
			keys[k] = true
		}
	}
	return sortedKeys(keys)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// errNoRender is returned when -results or -check is given without -render-docs.
var errNoRender = errors.New("-results and -check go with -render-docs")
