package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const fixtureName = "20260101T000000Z-fixture.json"

// TestRenderRunFixture renders the tables of testdata/'s result and compares them with lines
// worked out by hand, then with the golden file.
func TestRenderRunFixture(t *testing.T) {
	f, err := readResult("testdata/"+fixtureName, "testdata")
	if err != nil {
		t.Fatal(err)
	}
	if f.Name != "testdata/"+fixtureName || f.Link != fixtureName {
		t.Fatalf("file = %+v", f)
	}
	got := renderRun(f)
	lines := strings.Split(got, "\n")
	for _, want := range []string{ // lines worked out by hand from the fixture
		"Every figure of every case — from [`testdata/" + fixtureName + "`](" + fixtureName + "):",
		"| settings.managerArgs | – |",
		"| leader.handOff.runs.0.changedInGap | true |",
		// (60-50) MiB peak over baseline RSS × 1000 / 10 clusters, in the memory table.
		"| [20260101T000000Z](" + fixtureName + ") | N=10 c=16 q=50/100 | 50.0 | 60.0 | 1000.0 | 15.0 | 10.0 | 8.0 | 12.3 | 56 |",
		// Every figure of the case's JSON, by its path.
		"| stagesP50P99Seconds.0 cluster created→StatefulSet created.1 | 1 |",
		"| convergeRequests.byVerbResource.watch pods | 1 |",
		"| cpuSecondsByProcess.(machine busy) | 15 |",
		"| rssPer1000ClustersBytes | 1048576000 |",
	} {
		if !contains(lines, want) {
			t.Errorf("no line\n%s\nin\n%s", want, got)
		}
	}
	if os.Getenv("UPDATE_GOLDEN") == "1" { // UPDATE_GOLDEN=1 go test ./hack/bench/ -run TestRenderRunFixture
		if err := os.WriteFile("testdata/fixture.golden.md", []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	golden, err := os.ReadFile("testdata/fixture.golden.md")
	if err != nil {
		t.Fatal(err)
	}
	if got != string(golden) {
		t.Errorf("rendered tables differ from testdata/fixture.golden.md (%s)", firstDifference(string(golden), got))
	}
}

func contains(lines []string, want string) bool { return slices.Contains(lines, want) }

// TestRenderDocsCheck renders a report's summary tables, then checks it: current after
// rendering, drift after a result or a table changes, and -check never writes.
func TestRenderDocsCheck(t *testing.T) {
	dir, results, fixture := fixtureResults(t)
	doc := filepath.Join(dir, "benchmarks.md")
	open := blockPrefix + "writes " + fixtureName + blockSuffix
	stale := "# Title\n\nWrites per cluster: 9.00.\n\n" + open + "\n| old | table |\n" + blockEnd + "\n\ntext after\n"
	writeFile(t, doc, stale)
	var out strings.Builder

	err := renderDocs(&out, doc, results, true)
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
	wantLine := "| [20260101T000000Z](bench/" + fixtureName + ") | N=10 c=16 q=50/100 | 9.00 | 3.00 | 0.00 | 4.50 | 0 | 20 | 0 | 0 |"
	if !strings.HasPrefix(rendered, "# Title\n\nWrites per cluster: 9.00.\n\n"+open+"\n\n| run |") ||
		!strings.HasSuffix(rendered, "|\n\n"+blockEnd+"\n\ntext after\n") || strings.Contains(rendered, "| old | table |") ||
		!contains(strings.Split(rendered, "\n"), wantLine) {
		t.Fatalf("rendered document:\n%s", rendered)
	}
	if err := renderDocs(&out, doc, results, true); err != nil {
		t.Fatalf("check right after rendering: %v", err)
	}

	// The JSON changes: the text's figure and the table no longer match it.
	writeFile(t, filepath.Join(results, fixtureName), strings.Replace(string(fixture), `"writesPerCluster": 9`, `"writesPerCluster": 9.5`, 1))
	if err := renderDocs(&out, doc, results, true); err == nil || !strings.Contains(err.Error(), "line 3: 9.00") {
		t.Fatalf("check after the JSON changed: err = %v", err)
	}
	writeFile(t, doc, strings.Replace(rendered, "9.00.", "nine.", 1))
	if err := renderDocs(&out, doc, results, true); err == nil || !strings.Contains(err.Error(), "out of date") {
		t.Fatalf("check of the table after the JSON changed: err = %v", err)
	}
	writeFile(t, filepath.Join(results, fixtureName), string(fixture))

	// A hand edit of a figure in a table is drift; an edit of the text outside is not.
	writeFile(t, doc, strings.Replace(rendered, "| 9.00 |", "| 9.10 |", 1))
	if err := renderDocs(&out, doc, results, true); err == nil || !strings.Contains(err.Error(), "line ") {
		t.Fatalf("check after a hand edit of a table: err = %v", err)
	}
	writeFile(t, doc, strings.Replace(rendered, "text after", "other text", 1))
	if err := renderDocs(&out, doc, results, true); err != nil {
		t.Fatalf("check after an edit outside the tables: %v", err)
	}

	// A new result that no table names fails the check.
	writeFile(t, filepath.Join(results, "20260102T000000Z-fixture.json"), string(fixture))
	if err := renderDocs(&out, doc, results, true); err == nil || !strings.Contains(err.Error(), "no table names") {
		t.Fatalf("check with an unnamed result: err = %v", err)
	}
}

// TestCheckFigures: a figure the text quotes must be one a rendered table holds, so a figure
// that does not match its JSON fails the check; versions, goals and code are not figures.
func TestCheckFigures(t *testing.T) {
	dir := t.TempDir()
	fixture, err := os.ReadFile(filepath.Join("testdata", fixtureName))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, fixtureName), string(fixture))
	doc := filepath.Join(dir, "benchmarks.md")
	table := blockPrefix + "memory " + fixtureName + blockSuffix + "\n" + blockEnd + "\n"
	var out strings.Builder
	for _, tc := range []struct {
		name, text string
		bad        string // the figure the check names; "" for none
	}{
		{"figures the table holds", "RSS per 1,000 clusters 1000.0 MiB, peak 60.0 MiB, CPU 12.3 s.", ""},
		{"a figure that does not match its JSON", "RSS per 1,000 clusters 1000.0 MiB, peak 61.0 MiB.", "61.0"},
		{"a rounded figure is not the table's", "CPU 12 s, heap 15.00 MiB.", "15.00"},
		{"versions, goals, code and links", "HTTP/1.1, v1.37.1, goal ≤ 1.15, `7.5`, [x](a/3.5.md), <!-- 8.5 -->", ""},
		{"fenced code", "```\n4.5\n```", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			writeFile(t, doc, "# Report\n\n"+tc.text+"\n\n"+table)
			err := renderDocs(&out, doc, dir, false)
			if tc.bad == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "line 3: "+tc.bad) {
				t.Fatalf("err = %v, want one naming line 3: %s", err, tc.bad)
			}
		})
	}
}

func TestRenderDocsErrors(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(dir, "doc.md")
	writeFile(t, doc, "no tables\n")
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
	for _, tc := range []struct{ doc, want string }{
		{"no tables\n", "no table names"},
		{blockPrefix + "writes other.json" + blockSuffix + "\n" + blockEnd + "\n", "no result other.json"},
		{blockPrefix + "speed " + fixtureName + blockSuffix + "\n" + blockEnd + "\n", "unknown kind"},
		{blockPrefix + "writes" + blockSuffix + "\n" + blockEnd + "\n", "at least one file"},
		{blockPrefix + "writes " + fixtureName + blockSuffix + "\n", "needs a " + blockEnd},
		{blockEnd + "\n", "needs a"},
		{blockPrefix + "writes all" + blockSuffix + "\n" + blockPrefix + "writes all" + blockSuffix + "\n" + blockEnd + "\n", "needs a"},
		{blockPrefix + "writes all\n" + blockEnd + "\n", "needs a"},
	} {
		writeFile(t, doc, tc.doc)
		if err := renderDocs(&out, doc, dir, false); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("document %q: err = %v, want %q", tc.doc, err, tc.want)
		}
	}
}

// TestSummaryKinds renders every kind from the fixture: each names its file and holds the
// fixture's figures.
func TestSummaryKinds(t *testing.T) {
	files, err := loadResults("testdata/report.md", "testdata")
	if err != nil {
		t.Fatal(err)
	}
	for kind, want := range map[string]string{
		"writes":   "| N=10 c=16 q=50/100 | 9.00 | 3.00 | 0.00 | 4.50 | 0 | 20 | 0 | 0 |",
		"memory":   "| N=10 c=16 q=50/100 | 50.0 | 60.0 | 1000.0 | 15.0 | 10.0 | 8.0 | 12.3 | 56 |",
		"leader":   "| graceful hand-off (SIGTERM) | 1 | 2.50 | 2.50 | 2.50 | 2.25 | 2.40 |",
		"runs":     "| N=10 c=16 q=50/100 | proxy | — | 3.0 | — | 9.00 | 3.00 | 0 | 1000.0 | 15.0 | 12.3 | 0 |",
		"overhead": "| run | N | operator |",
		"growth":   "| run | N | floor converge s |",
	} {
		got := summaryKinds[kind](files).String()
		if !strings.Contains(got, want) || !strings.Contains(got, "[20260101T000000Z]("+fixtureName+")") && kind != "overhead" && kind != "growth" {
			t.Errorf("%s:\n%s\nlacks %q", kind, got, want)
		}
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

// TestRenderDocsTwoDocuments: a result named by either document counts as named, and the text
// of one may quote a figure of the other's tables, but not a figure neither holds.
func TestRenderDocsTwoDocuments(t *testing.T) {
	dir, results, _ := fixtureResults(t)
	report, index := filepath.Join(dir, "report.md"), filepath.Join(results, "README.md")
	writeFile(t, report, "# Report\n\nWrites per cluster: 9.00.\n")
	writeFile(t, index, "# Index\n\n"+blockPrefix+"writes "+fixtureName+blockSuffix+"\n"+blockEnd+"\n")
	var out strings.Builder
	if err := renderDocs(&out, report+","+index, results, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(readFile(t, index), "| [20260101T000000Z]("+fixtureName+") |") {
		t.Errorf("the index links its results from its own directory:\n%s", readFile(t, index))
	}
	if err := renderDocs(&out, report, results, true); err == nil || !strings.Contains(err.Error(), "no table names") {
		t.Errorf("the report alone names no result: err = %v", err)
	}
	writeFile(t, report, "# Report\n\nWrites per cluster: 9.50.\n")
	if err := renderDocs(&out, report+","+index, results, true); err == nil || !strings.Contains(err.Error(), "9.50") {
		t.Errorf("a figure no table holds: err = %v", err)
	}
}

// fixtureResults returns a temporary directory, its results directory bench/ holding the
// fixture result, and the fixture's JSON.
func fixtureResults(t *testing.T) (dir, results string, fixture []byte) {
	t.Helper()
	dir = t.TempDir()
	results = filepath.Join(dir, "bench")
	if err := os.Mkdir(results, 0o755); err != nil {
		t.Fatal(err)
	}
	fixture, err := os.ReadFile(filepath.Join("testdata", fixtureName))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(results, fixtureName), string(fixture))
	return dir, results, fixture
}
