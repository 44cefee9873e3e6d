package main

import (
	"maps"
	"net/http"
	"strings"
	"sync"
)

// The operator's requests by verb and resource, as counted from kube-apiserver's audit log of
// the manager's own user (audit.go).

// requestTally counts requests by "verb resource" and by response code.
type requestTally struct {
	mu     sync.Mutex
	counts map[string]int64
	codes  map[string]int64
}

func (t *requestTally) add(key, code string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.counts == nil {
		t.counts, t.codes = map[string]int64{}, map[string]int64{}
	}
	t.counts[key]++
	t.codes[code]++
}

// snapshot returns a copy of the counters.
func (t *requestTally) snapshot() requestCounts {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := requestCounts{ByVerbResource: map[string]int64{}, ByCode: map[string]int64{}}
	maps.Copy(s.ByVerbResource, t.counts)
	maps.Copy(s.ByCode, t.codes)
	return s
}

// requestCounts are the requests seen up to a moment.
type requestCounts struct {
	ByVerbResource map[string]int64 `json:"byVerbResource"`
	ByCode         map[string]int64 `json:"byCode"`
}

// minus returns the requests made between earlier and c.
func (c requestCounts) minus(earlier requestCounts) requestCounts {
	d := requestCounts{ByVerbResource: map[string]int64{}, ByCode: map[string]int64{}}
	for k, v := range c.ByVerbResource {
		if n := v - earlier.ByVerbResource[k]; n != 0 {
			d.ByVerbResource[k] = n
		}
	}
	for k, v := range c.ByCode {
		if n := v - earlier.ByCode[k]; n != 0 {
			d.ByCode[k] = n
		}
	}
	return d
}

// verbWatch is the verb of a watch request.
const verbWatch = "watch"

// writeVerbs are the verbs that change state.
var writeVerbs = map[string]bool{"create": true, "update": true, "patch": true, "delete": true, "deletecollection": true}

// totals sums writes, one-shot reads (get, list) and watches.
func (c requestCounts) totals() (writes, reads, watches int64) {
	for k, v := range c.ByVerbResource {
		verb, _, _ := strings.Cut(k, " ")
		switch {
		case writeVerbs[verb]:
			writes += v
		case verb == verbWatch:
			watches += v
		default:
			reads += v
		}
	}
	return writes, reads, watches
}

// classify returns the Kubernetes verb and "resource[.group][/subresource]" of a request, as
// kube-apiserver's request info would; the audit log names a request without a resource
// (discovery, /metrics) by its path only, and classify names it as the counts always did.
func classify(r *http.Request) (verb, resource string) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var rest []string
	group := ""
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		rest = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		group, rest = parts[1], parts[3:]
	default:
		return strings.ToLower(r.Method), "nonresource" + r.URL.Path
	}
	if len(rest) > 2 && rest[0] == "namespaces" {
		rest = rest[2:]
	}
	if len(rest) == 0 {
		return strings.ToLower(r.Method), "discovery"
	}
	resource = rest[0]
	if group != "" {
		resource += "." + group
	}
	name := ""
	if len(rest) > 1 {
		name = rest[1]
	}
	if len(rest) > 2 {
		resource += "/" + rest[2]
	}
	return verbOf(r, name), resource
}

// verbOf maps the method of a resource request to its Kubernetes verb.
func verbOf(r *http.Request, name string) string {
	switch r.Method {
	case http.MethodGet:
		switch {
		case r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("watch") == "1":
			return verbWatch
		case name != "":
			return "get"
		default:
			return "list"
		}
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		if name == "" {
			return "deletecollection"
		}
		return "delete"
	default:
		return strings.ToLower(r.Method)
	}
}
