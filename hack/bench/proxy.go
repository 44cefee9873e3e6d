package main

import (
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// countingProxy sits between the manager and kube-apiserver and counts every request the
// manager sends, by verb and resource (-count proxy; the default, -count audit, reads
// kube-apiserver's audit log instead: audit.go). kube-apiserver's own apiserver_request_total
// has verb and resource but no client label. The manager reaches the proxy over plain HTTP on
// loopback; the proxy forwards with the admin credentials (the identity the manager has in the
// e2e suites too). It costs CPU in the benchmark process and changes the manager's path (plain
// HTTP/1.1, a connection per watch).
type countingProxy struct {
	URL string

	server *http.Server
	tally  requestTally
}

// requestTally counts requests by "verb resource" and by response code: the proxy's and the
// audit log's counts.
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

// startProxy listens on a free loopback port and forwards to cfg.Host.
func startProxy(cfg *rest.Config) (*countingProxy, error) {
	target, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", cfg.Host, err)
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the upstream transport: %w", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening: %w", err)
	}
	p := &countingProxy{URL: "http://" + l.Addr().String()}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = target.Host
		},
		Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := transport.RoundTrip(req)
			p.record(req, resp)
			return resp, err
		}),
		// Watches stream: pass every event on at once.
		FlushInterval: -1,
	}
	p.server = &http.Server{Handler: rp, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.server.Serve(l) }()
	return p, nil
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (p *countingProxy) record(req *http.Request, resp *http.Response) {
	verb, resource := classify(req)
	code := 0
	if resp != nil {
		code = resp.StatusCode
	}
	p.tally.add(verb+" "+resource, strconv.Itoa(code))
}

// snapshot returns a copy of the counters.
func (p *countingProxy) snapshot() requestCounts { return p.tally.snapshot() }

// writeKubeconfig writes a kubeconfig that points at the proxy.
func (p *countingProxy) writeKubeconfig(dir string) (string, error) {
	path := filepath.Join(dir, "bench-proxy.kubeconfig")
	content := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: proxy
  cluster:
    server: %s
contexts:
- name: proxy
  context:
    cluster: proxy
    user: proxy
users:
- name: proxy
  user: {}
current-context: proxy
`, p.URL)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return path, nil
}

// stop closes the listener and every connection at once: watches never end by themselves.
func (p *countingProxy) stop() { _ = p.server.Close() }

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
// kube-apiserver's request info would.
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
