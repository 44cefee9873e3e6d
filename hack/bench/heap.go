package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
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
	raw, err := httpGet(ctx, http.DefaultClient, base+"/debug/pprof/heap?gc=1")
	if err != nil {
		return nil, 0, fmt.Errorf("reading the heap profile: %w", err)
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

// heapProfileName names the kept heap profile of case bc whose idle window began at start.
func heapProfileName(bc benchCase, start time.Time) string {
	return fmt.Sprintf("heap-%s-n%d-c%d-q%g.pb.gz", start.UTC().Format(stampLayout), bc.N, bc.Concurrency, bc.QPS)
}

// topInuse sums each sample's inuse_space to the function of its leaf frame and returns the n
// largest, and the total.
func topInuse(p *profile.Profile, n int) ([]heapEntry, int64) {
	index := slices.IndexFunc(p.SampleType, func(t *profile.ValueType) bool { return t.Type == "inuse_space" })
	if index < 0 {
		return nil, 0
	}
	flat := map[string]int64{}
	var total int64
	for _, s := range p.Sample {
		name := "?"
		if len(s.Location) > 0 && len(s.Location[0].Line) > 0 && s.Location[0].Line[0].Function != nil {
			name = s.Location[0].Line[0].Function.Name
		}
		flat[name] += s.Value[index]
		total += s.Value[index]
	}
	var top []heapEntry
	for f, v := range flat {
		top = append(top, heapEntry{Function: f, InuseBytes: v})
	}
	slices.SortFunc(top, func(a, b heapEntry) int {
		return cmp.Or(cmp.Compare(b.InuseBytes, a.InuseBytes), cmp.Compare(a.Function, b.Function))
	})
	return top[:min(n, len(top))], total
}
