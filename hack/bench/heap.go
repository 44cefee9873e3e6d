package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"time"

	"github.com/google/pprof/profile"
)

// heapEntry is one line of a heap profile's top: a function and the bytes in use that it
// allocated itself (flat inuse_space), as "go tool pprof -top -sample_index=inuse_space" shows.
type heapEntry struct {
	Function   string `json:"function"`
	InuseBytes int64  `json:"inuseBytes"`
}

// heapTopN is how many functions a result keeps.
const heapTopN = 10

// heapTop reads the manager's heap profile (after a GC) from its pprof endpoint at base and
// returns the top n functions by flat inuse_space, and the total in use. When keep is not empty
// the profile, as the manager served it, is also written to that file (for "go tool pprof").
func heapTop(ctx context.Context, base string, n int, keep string) ([]heapEntry, int64, error) {
	raw, err := fetchProfile(ctx, http.DefaultClient, base+"/debug/pprof/heap?gc=1", "the heap profile")
	if err != nil {
		return nil, 0, err
	}
	if keep != "" {
		if err := os.WriteFile(keep, raw, 0o644); err != nil {
			return nil, 0, fmt.Errorf("keeping the heap profile: %w", err)
		}
	}
	p, err := profile.Parse(bytes.NewReader(raw))
	if err != nil {
		return nil, 0, fmt.Errorf("parsing the heap profile: %w", err)
	}
	top, total := topInuse(p, n)
	return top, total, nil
}

// fetchProfile reads a pprof profile from url with hc; what names it in errors.
func fetchProfile(ctx context.Context, hc *http.Client, url, what string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", what, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("reading %s: %s: %s", what, resp.Status, body)
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", what, err)
	}
	return raw, nil
}

// heapProfileName names the kept heap profile of case bc whose idle window began at start.
func heapProfileName(bc benchCase, start time.Time) string {
	return fmt.Sprintf("heap-%s-n%d-c%d-q%g.pb.gz", start.UTC().Format("20060102T150405Z"), bc.N, bc.Concurrency, bc.QPS)
}

// topInuse sums each sample's inuse_space to the function of its leaf frame and returns the n
// largest, and the total.
func topInuse(p *profile.Profile, n int) ([]heapEntry, int64) {
	index := -1
	for i, st := range p.SampleType {
		if st.Type == "inuse_space" {
			index = i
		}
	}
	if index < 0 {
		return nil, 0
	}
	flat := map[string]int64{}
	var total int64
	for _, s := range p.Sample {
		v := s.Value[index]
		total += v
		name := "?"
		if len(s.Location) > 0 && len(s.Location[0].Line) > 0 && s.Location[0].Line[0].Function != nil {
			name = s.Location[0].Line[0].Function.Name
		}
		flat[name] += v
	}
	var top []heapEntry
	for f, v := range flat {
		top = append(top, heapEntry{Function: f, InuseBytes: v})
	}
	sort.Slice(top, func(i, j int) bool {
		if top[i].InuseBytes != top[j].InuseBytes {
			return top[i].InuseBytes > top[j].InuseBytes
		}
		return top[i].Function < top[j].Function
	})
	if len(top) > n {
		top = top[:n]
	}
	return top, total
}

// writeHeapTable renders the heap tops of the file's results, if any has one: a row per
// function (largest first), a column per case, MiB in use.
func writeHeapTable(b *bytes.Buffer, f resultFile) {
	var cols []result
	for _, r := range f.Rep.Results {
		if len(r.HeapTop) > 0 {
			cols = append(cols, r)
		}
	}
	if len(cols) == 0 {
		return
	}
	caption(b, f, fmt.Sprintf("The manager's heap at the end of the idle window, after a GC: the top %d functions by flat inuse_space, MiB", heapTopN),
		"results[].heapTopInuse")
	t := mdTable{header: []string{"function"}, right: []bool{false}}
	largest := map[string]int64{}
	for _, r := range cols {
		t.header = append(t.header, caseLabel(r.Case))
		t.right = append(t.right, true)
		for _, e := range r.HeapTop {
			largest[e.Function] = max(largest[e.Function], e.InuseBytes)
		}
	}
	functions := make([]string, 0, len(largest))
	for fn := range largest {
		functions = append(functions, fn)
	}
	sort.Slice(functions, func(i, j int) bool {
		if largest[functions[i]] != largest[functions[j]] {
			return largest[functions[i]] > largest[functions[j]]
		}
		return functions[i] < functions[j]
	})
	for _, fn := range functions {
		row := []string{"`" + fn + "`"}
		for _, r := range cols {
			cell := "—"
			for _, e := range r.HeapTop {
				if e.Function == fn {
					cell = fixed(mib(float64(e.InuseBytes)), 1)
				}
			}
			row = append(row, cell)
		}
		t.add(row...)
	}
	total := []string{"all in use"}
	for _, r := range cols {
		total = append(total, fixed(mib(float64(r.HeapInuse)), 1))
	}
	t.add(total...)
	t.write(b)
}
