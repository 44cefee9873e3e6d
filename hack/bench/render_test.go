package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const fixtureName = "20260101T000000Z-fixture.json"

// TestRenderTablesFixture renders testdata/ and compares the tables line by line: first the
// lines worked out by hand from the fixture, then the whole output with the golden file.
func TestRenderTablesFixture(t *testing.T) {
	files, err := loadResults("testdata/benchmarks.md", "testdata")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].Name != "testdata/"+fixtureName || files[0].Link != fixtureName {
		t.Fatalf("files = %+v", files)
	}
	got := renderTables(files)
	lines := strings.Split(got, "\n")
	for _, want := range []string{
		// Captions name the JSON file and link it relative to the document.
		"### `testdata/" + fixtureName + "`",
		"Scale cases — from [`testdata/" + fixtureName + "`](" + fixtureName + ") `results[]`:",
		// Run: the machine without its hostname, the settings.
		"| wall time | 2m4s |",
		"| machine.cpus | 2 |",
		"| machine.loadavgAtStart | 1.00 2.00 3.00 1/100 42 |",
		"| settings.idle | 20s |",
		"| settings.managerArgs | – |",
		// Scale case: 60 MiB peak RSS, (60-50) MiB × 1000 / 10 = 1000 MiB per 1,000 clusters.
		"| N | nodes | conc | qps/burst | Available | all Available s | p50 s | p99 s | op writes/DC | op reads/DC | idle s | " +
			"idle writes | idle reads | peak RSS MiB | RSS/1k DC MiB | peak heap MiB | error |",
		"|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
		"| 10 | 3 | 16 | 50/100 | 10 | 3.0 | 2.3 | 3.0 | 9.00 | 0.00 | 20 | 0 | 0 | 60.0 | 1000.0 | 15.0 | – |",
		"| N=10 c=16 q=50/100 | 7.2 | 0.5 | 0.4 | 2.9 | 3.0 | 4.50 | 0 | 123 | 46 | 1 | 50.0 | 58.0 | 10.0 | 812 (40) | 12.3 | 56 |",
		// Raw write rate: 375 system writes / 10 clusters.
		"| N=10 c=16 q=50/100 | 2000 | 4.0 | 500 | 90 | 0.2 | 16.9 | 375 | 37.5 | 4.05 | 12 |",
		// Steps: the order prefix of the keys is dropped; missing steps are no columns.
		"| case | cluster created→StatefulSet created | pod created→scheduled |",
		"| N=10 c=16 q=50/100 | 0 / 1 | 1 / 2 |",
		// Operator requests: per cluster while converging, total while idle.
		"| verb | resource | N=10 c=16 q=50/100 /DC | N=10 c=16 q=50/100 idle |",
		"| create | services | 2.00 | 0 |",
		"| patch | databaseclusters.database.seed1b407122.io/status | 3.00 | 0 |",
		"| watch | pods | 0.10 | 2 |",
		// System writes per cluster; the manager's own counters in total.
		"| PATCH | databaseclusters/status | 3.00 |",
		"| POST | 201 | 20 |",
		// Leader.
		"Leader hand-off and takeover: 2 managers, Lease 15s / 10s / 2s (duration / renew deadline / retry period), " +
			"release on cancel true; seconds from the signal — from [`testdata/" + fixtureName + "`](" + fixtureName + ") `leader`:",
		// CPU by process, the machine's rows first, and the busy share 15/20.
		"| process | N=10 c=16 q=50/100 |",
		"| (machine available) | 20.0 |",
		"| bench (clients, proxy, CSI) | 0.2 |",
		"| manager | 12.3 |",
		"| (machine busy, %) | 75 |",
		"| graceful hand-off | SIGTERM | 1 | 2.50 | 2.50 | 2.50 | 2.25 / 2.25 / 2.25 | 2.40 / 2.40 / 2.40 |",
		"| crash takeover | SIGKILL | 1 | 17.50 | 17.50 | 17.50 | 17.25 / 17.25 / 17.25 | 17.40 / 17.40 / 17.40 |",
		"| graceful hand-off | 1 | 0.05 | 2.25 | 2.40 | 2.50 | 2.50 | true |",
		"| crash takeover | 1 | 0.02 | 17.25 | 17.40 | 17.50 | 17.50 | true |",
	} {
		if !contains(lines, want) {
			t.Errorf("no line\n%s\nin\n%s", want, got)
		}
	}
	if strings.Contains(got, "not-rendered") {
		t.Error("the hostname is rendered")
	}
	if os.Getenv("UPDATE_GOLDEN") == "1" { // UPDATE_GOLDEN=1 go test ./hack/bench/ -run TestRenderTablesFixture
		if err := os.WriteFile("testdata/fixture.golden.md", []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	golden, err := os.ReadFile("testdata/fixture.golden.md")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(got) != strings.TrimSpace(string(golden)) {
		t.Errorf("rendered tables differ from testdata/fixture.golden.md (%s)", firstDifference(string(golden), got))
	}
}

func contains(lines []string, want string) bool {
	for _, l := range lines {
		if l == want {
			return true
		}
	}
	return false
}

// TestRenderDocsCheck renders into a document, then checks it: current after rendering, drift
// after a result or the document changes, and -check never writes.
func TestRenderDocsCheck(t *testing.T) {
	dir := t.TempDir()
	results := filepath.Join(dir, "bench")
	if err := os.Mkdir(results, 0o755); err != nil {
		t.Fatal(err)
	}
	fixture, err := os.ReadFile(filepath.Join("testdata", fixtureName))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(results, fixtureName), string(fixture))
	doc := filepath.Join(dir, "benchmarks.md")
	stale := "# Title\n\ntext before\n\n" + beginMarker + "\n| old | table |\n" + endMarker + "\n\ntext after\n"
	writeFile(t, doc, stale)
	var out strings.Builder

	err = renderDocs(&out, doc, results, true)
	if err == nil || !strings.Contains(err.Error(), "out of date") || !strings.Contains(err.Error(), "make bench-docs") {
		t.Fatalf("check of a stale document: err = %v", err)
	}
	if readFile(t, doc) != stale {
		t.Fatal("-check wrote the document")
	}

	if err := renderDocs(&out, doc, results, false); err != nil {
		t.Fatal(err)
	}
	rendered := readFile(t, doc)
	if !strings.HasPrefix(rendered, "# Title\n\ntext before\n\n"+beginMarker+"\n\n### `") ||
		!strings.HasSuffix(rendered, "|\n\n"+endMarker+"\n\ntext after\n") || strings.Contains(rendered, "| old | table |") {
		t.Fatalf("rendered document:\n%s", rendered)
	}
	wantLine := "| 10 | 3 | 16 | 50/100 | 10 | 3.0 | 2.3 | 3.0 | 9.00 | 0.00 | 20 | 0 | 0 | 60.0 | 1000.0 | 15.0 | – |"
	if !contains(strings.Split(rendered, "\n"), wantLine) {
		t.Errorf("rendered document lacks %q", wantLine)
	}
	if err := renderDocs(&out, doc, results, true); err != nil {
		t.Fatalf("check right after rendering: %v", err)
	}

	// A new result changes the tables: drift.
	writeFile(t, filepath.Join(results, "20260102T000000Z-fixture.json"),
		strings.Replace(string(fixture), `"convergenceSeconds": 3.04`, `"convergenceSeconds": 4.04`, 1))
	if err := renderDocs(&out, doc, results, true); err == nil || !strings.Contains(err.Error(), "out of date") {
		t.Fatalf("check after a new result: err = %v", err)
	}
	if err := renderDocs(&out, doc, results, false); err != nil {
		t.Fatal(err)
	}
	rendered = readFile(t, doc)
	first, second := strings.Index(rendered, "20260101T000000Z"), strings.Index(rendered, "20260102T000000Z")
	if first < 0 || second < first {
		t.Errorf("results not in name order:\n%s", rendered)
	}

	// A hand edit inside the markers is drift too; outside them it is not.
	writeFile(t, doc, strings.Replace(rendered, "| 4.0 |", "| 4.1 |", 1))
	if err := renderDocs(&out, doc, results, true); err == nil || !strings.Contains(err.Error(), "line ") {
		t.Fatalf("check after a hand edit of a table: err = %v", err)
	}
	writeFile(t, doc, strings.Replace(rendered, "text after", "other text", 1))
	if err := renderDocs(&out, doc, results, true); err != nil {
		t.Fatalf("check after an edit outside the markers: %v", err)
	}
}

func TestRenderDocsErrors(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(dir, "doc.md")
	writeFile(t, doc, "no markers\n")
	var out strings.Builder
	if err := renderDocs(&out, doc, dir, false); err == nil || !strings.Contains(err.Error(), "no JSON results") {
		t.Errorf("empty results: err = %v", err)
	}
	writeFile(t, filepath.Join(dir, "other.json"), `{"a": 1}`)
	if err := renderDocs(&out, doc, dir, false); err == nil || !strings.Contains(err.Error(), "not a result") {
		t.Errorf("foreign JSON: err = %v", err)
	}
	if err := os.Remove(filepath.Join(dir, "other.json")); err != nil {
		t.Fatal(err)
	}
	fixture, err := os.ReadFile(filepath.Join("testdata", fixtureName))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, fixtureName), string(fixture))
	if err := renderDocs(&out, doc, dir, false); err == nil || !strings.Contains(err.Error(), "needs exactly one") {
		t.Errorf("no markers: err = %v", err)
	}
	if _, err := replaceTables(endMarker+"\n"+beginMarker+"\n", "x"); err == nil {
		t.Error("markers in the wrong order: no error")
	}
	if _, err := replaceTables(beginMarker+beginMarker+endMarker, "x"); err == nil {
		t.Error("two begin markers: no error")
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestRatePerCluster(t *testing.T) {
	for _, tc := range []struct {
		count float64
		n     int
		want  string
	}{{0, 300, "0.00"}, {1, 300, "<0.01"}, {2, 300, "0.01"}, {914, 100, "9.14"}, {5, 0, "0.00"}} {
		if got := ratePerCluster(tc.count, tc.n); got != tc.want {
			t.Errorf("ratePerCluster(%v, %d) = %q, want %q", tc.count, tc.n, got, tc.want)
		}
	}
}
