// Copyright 2026 The database-operator Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package faultproxy

import (
	"bufio"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// upstream is a TLS server standing in for kube-apiserver: it answers 200 with the path it
// was asked for, requires the client certificate-less TLS the proxy's rest.Config sets up,
// and streams a watch line every 20 ms until the client goes.
type upstream struct {
	*httptest.Server
	hits atomic.Int32
}

func startUpstream(t *testing.T) (*upstream, *rest.Config) {
	t.Helper()
	u := &upstream{}
	u.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.hits.Add(1)
		if r.Header.Get("X-Test-Auth") != "admin" {
			http.Error(w, "no credentials", http.StatusUnauthorized)
			return
		}
		if r.URL.Query().Get("watch") == "true" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			for i := 0; ; i++ {
				if _, err := fmt.Fprintf(w, `{"type":"ADDED","object":{"n":%d}}`+"\n", i); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}
		_, _ = fmt.Fprintf(w, "%s %s", r.Method, r.URL.Path)
	}))
	t.Cleanup(u.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: u.Certificate().Raw})
	cfg := &rest.Config{Host: u.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
	// The proxy must send the upstream credentials; a header stands in for the admin's
	// client certificate.
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			r = r.Clone(r.Context())
			r.Header.Set("X-Test-Auth", "admin")
			return rt.RoundTrip(r)
		})
	}
	return u, cfg
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func startProxy(t *testing.T, cfg *rest.Config, rules ...Rule) *Proxy {
	t.Helper()
	p, err := Start(Options{Upstream: cfg, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	})
	p.SetRules(rules...)
	return p
}

func do(t *testing.T, p *Proxy, method, path string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, p.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, path, err)
	}
	return resp, string(body)
}

const stsPath = "/apis/apps/v1/namespaces/a/statefulsets/db"

func TestParseRequest(t *testing.T) {
	for _, tc := range []struct {
		method, url string
		want        Request
	}{
		{"GET", "/api/v1/namespaces/a/pods/db-0", Request{VerbGet, "pods", "a", "db-0"}},
		{"GET", "/api/v1/namespaces/a/pods", Request{VerbList, "pods", "a", ""}},
		{"GET", "/api/v1/pods?watch=true&resourceVersion=5", Request{VerbWatch, "pods", "", ""}},
		{"GET", "/apis/apps/v1/statefulsets?watch=1", Request{VerbWatch, "statefulsets", "", ""}},
		{"POST", "/apis/apps/v1/namespaces/a/statefulsets", Request{VerbCreate, "statefulsets", "a", ""}},
		{"PATCH", "/apis/database.seed1b407122.io/v1alpha1/namespaces/a/databaseclusters/db/status",
			Request{VerbPatch, "databaseclusters/status", "a", "db"}},
		{"PUT", "/apis/coordination.k8s.io/v1/namespaces/s/leases/l", Request{VerbUpdate, "leases", "s", "l"}},
		{"DELETE", "/api/v1/namespaces/a/persistentvolumeclaims/data-db-0",
			Request{VerbDelete, "persistentvolumeclaims", "a", "data-db-0"}},
		{"DELETE", "/api/v1/namespaces/a/pods", Request{VerbDeleteCollection, "pods", "a", ""}},
		{"GET", "/api/v1/namespaces/a", Request{VerbGet, "namespaces", "", "a"}},
		{"PUT", "/api/v1/namespaces/a/finalize", Request{VerbUpdate, "namespaces/finalize", "", "a"}},
		{"GET", "/api/v1/nodes", Request{VerbList, "nodes", "", ""}},
		{"GET", "/apis", Request{Verb: "get"}},
		{"GET", "/healthz", Request{Verb: "get"}},
	} {
		r := httptest.NewRequest(tc.method, tc.url, nil)
		if got := ParseRequest(r); got != tc.want {
			t.Errorf("%s %s: got %+v, want %+v", tc.method, tc.url, got, tc.want)
		}
	}
}

func TestMatch(t *testing.T) {
	req := Request{VerbPatch, "databaseclusters/status", "a", "db"}
	for _, tc := range []struct {
		m    Match
		want bool
	}{
		{Match{}, true},
		{Match{Resources: []string{"databaseclusters"}}, true},
		{Match{Resources: []string{"databaseclusters/status"}}, true},
		{Match{Resources: []string{"databaseclusters/scale"}}, false},
		{Match{Verbs: WriteVerbs}, true},
		{Match{Verbs: []string{VerbGet}}, false},
		{Match{Namespace: "a", Name: "db"}, true},
		{Match{Namespace: "b"}, false},
		{Match{Name: "other"}, false},
	} {
		if got := tc.m.Matches(req); got != tc.want {
			t.Errorf("%+v: got %v, want %v", tc.m, got, tc.want)
		}
	}
	if (Match{Resources: []string{"pods"}}).Matches(Request{Verb: "get"}) {
		t.Error("a resource rule matched a non-resource request")
	}
}

func TestForwardsWithUpstreamCredentials(t *testing.T) {
	u, cfg := startUpstream(t)
	p := startProxy(t, cfg)
	resp, body := do(t, p, http.MethodPatch, stsPath)
	if resp.StatusCode != http.StatusOK || body != "PATCH "+stsPath {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
	if u.hits.Load() != 1 {
		t.Fatalf("upstream hits %d, want 1", u.hits.Load())
	}
	want := map[Key]int{{VerbPatch, "statefulsets", "a"}: 1}
	if got := p.Counts(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("counts %v, want %v", got, want)
	}
}

func TestAnswerFaults(t *testing.T) {
	for _, tc := range []struct {
		fault  Fault
		code   int
		reason metav1.StatusReason
		is     func(error) bool
	}{
		{Conflict, 409, metav1.StatusReasonConflict, apierrors.IsConflict},
		{InternalError, 500, metav1.StatusReasonInternalError, apierrors.IsInternalError},
		{Unavailable, 503, metav1.StatusReasonServiceUnavailable, apierrors.IsServiceUnavailable},
		{TooManyRequests, 429, metav1.StatusReasonTooManyRequests, apierrors.IsTooManyRequests},
		{Timeout, 504, metav1.StatusReasonTimeout, apierrors.IsTimeout},
	} {
		t.Run(string(tc.fault), func(t *testing.T) {
			u, cfg := startUpstream(t)
			p := startProxy(t, cfg, Rule{Fault: tc.fault, Rate: 1, RetryAfter: 3, Delay: time.Millisecond})
			resp, body := do(t, p, http.MethodPatch, stsPath)
			if resp.StatusCode != tc.code {
				t.Fatalf("code %d, want %d", resp.StatusCode, tc.code)
			}
			var status metav1.Status
			if err := json.Unmarshal([]byte(body), &status); err != nil {
				t.Fatalf("body %q: %v", body, err)
			}
			if status.Reason != tc.reason || status.Code != int32(tc.code) || status.Kind != "Status" {
				t.Fatalf("status %+v", status)
			}
			if err := apierrors.FromObject(&status); !tc.is(err) {
				t.Fatalf("client-go does not classify %v as %s", err, tc.fault)
			}
			if tc.fault == TooManyRequests && resp.Header.Get("Retry-After") != "3" {
				t.Fatalf("Retry-After %q, want 3", resp.Header.Get("Retry-After"))
			}
			if u.hits.Load() != 0 {
				t.Fatalf("the request was forwarded (%d upstream hits)", u.hits.Load())
			}
			if got := p.Counts()[Key{VerbPatch, "statefulsets", "a"}]; got != 1 {
				t.Fatalf("counted %d requests, want 1 (answered by a fault, still received)", got)
			}
			if got := p.Injected(); got[string(tc.fault)] != 1 || len(got) != 1 {
				t.Fatalf("injected %v", got)
			}
		})
	}
}

func TestRateAndSelection(t *testing.T) {
	u, cfg := startUpstream(t)
	p := startProxy(t, cfg, Rule{
		Match: Match{Verbs: []string{VerbPatch}, Resources: []string{"statefulsets"}, Namespace: "a"},
		Fault: Unavailable, Rate: 0.3, Name: "unavailable",
	})
	const n = 400
	failed := 0
	for range n {
		if resp, _ := do(t, p, http.MethodPatch, stsPath); resp.StatusCode == http.StatusServiceUnavailable {
			failed++
		}
	}
	if failed < n*20/100 || failed > n*40/100 {
		t.Fatalf("%d of %d requests failed at rate 0.3", failed, n)
	}
	if got := p.Injected()["unavailable"]; got != failed {
		t.Fatalf("injected %d, answered %d", got, failed)
	}
	// Not selected: another verb, another namespace, another resource.
	for _, path := range []string{"GET " + stsPath, "PATCH /apis/apps/v1/namespaces/b/statefulsets/db",
		"PATCH /api/v1/namespaces/a/services/db"} {
		method, url, _ := strings.Cut(path, " ")
		for range 20 {
			if resp, _ := do(t, p, method, url); resp.StatusCode != http.StatusOK {
				t.Fatalf("%s: %d", path, resp.StatusCode)
			}
		}
	}
	if int(u.hits.Load()) != n-failed+60 {
		t.Fatalf("upstream hits %d, want %d", u.hits.Load(), n-failed+60)
	}
}

func TestTimeoutAndLatency(t *testing.T) {
	const delay = 200 * time.Millisecond
	for _, tc := range []struct {
		name     string
		rule     Rule
		code     int
		upstream int32
	}{
		{"timeout, not forwarded", Rule{Fault: Timeout, Rate: 1, Delay: delay}, 504, 0},
		{"timeout, applied and answer lost", Rule{Fault: Timeout, Rate: 1, Delay: delay, Forward: true}, 504, 1},
		{"latency", Rule{Fault: Latency, Rate: 1, Delay: delay}, 200, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, cfg := startUpstream(t)
			p := startProxy(t, cfg, tc.rule)
			began := time.Now()
			resp, _ := do(t, p, http.MethodPost, "/api/v1/namespaces/a/services")
			if took := time.Since(began); took < delay {
				t.Fatalf("answered after %s, before the delay of %s", took, delay)
			}
			if resp.StatusCode != tc.code || u.hits.Load() != tc.upstream {
				t.Fatalf("code %d, upstream hits %d; want %d, %d", resp.StatusCode, u.hits.Load(), tc.code, tc.upstream)
			}
		})
	}
}

func TestDropWatch(t *testing.T) {
	_, cfg := startUpstream(t)
	const after = 300 * time.Millisecond
	p := startProxy(t, cfg, Rule{Fault: DropWatch, Rate: 1, Delay: after})
	// A list is not a watch: the rule does not apply.
	if resp, _ := do(t, p, http.MethodGet, "/api/v1/pods"); resp.StatusCode != http.StatusOK {
		t.Fatalf("list: %d", resp.StatusCode)
	}
	began := time.Now()
	resp, err := http.Get(p.URL + "/api/v1/pods?watch=true")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	events := 0
	scanner := bufio.NewScanner(resp.Body)
	for scanner.Scan() {
		events++
	}
	took := time.Since(began)
	if err := scanner.Err(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("the stream ended with %v, want an aborted connection (unexpected EOF)", err)
	}
	if took < after || took > after+2*time.Second || events < 3 {
		t.Fatalf("the watch was cut after %s with %d events; want after %s, with events before", took, events, after)
	}
	if got := p.Injected(); got[string(DropWatch)] != 1 || len(got) != 1 {
		t.Fatalf("injected %v", got)
	}
}

func TestHoldBeforeAndAfterForwarding(t *testing.T) {
	for _, afterForward := range []bool{false, true} {
		t.Run(fmt.Sprintf("afterForward=%v", afterForward), func(t *testing.T) {
			u, cfg := startUpstream(t)
			p := startProxy(t, cfg)
			hold := p.HoldNext(Match{Verbs: []string{VerbDelete}, Resources: []string{"statefulsets"}}, afterForward)
			// Not selected: passes.
			if resp, _ := do(t, p, http.MethodGet, stsPath); resp.StatusCode != http.StatusOK {
				t.Fatalf("get: %d", resp.StatusCode)
			}
			done := make(chan int)
			go func() {
				resp, err := http.DefaultClient.Do(mustRequest(http.MethodDelete, p.URL+stsPath))
				if err != nil {
					done <- 0
					return
				}
				_ = resp.Body.Close()
				done <- resp.StatusCode
			}()
			select {
			case <-hold.Held():
			case <-time.After(5 * time.Second):
				t.Fatal("the delete was not held")
			}
			if hold.Request != (Request{VerbDelete, "statefulsets", "a", "db"}) {
				t.Fatalf("held %+v", hold.Request)
			}
			time.Sleep(100 * time.Millisecond)
			want := int32(1)
			if afterForward {
				want = 2 // the delete reached the API server while its answer is held
			}
			if u.hits.Load() != want {
				t.Fatalf("upstream hits %d while held, want %d", u.hits.Load(), want)
			}
			select {
			case code := <-done:
				t.Fatalf("answered %d while held", code)
			default:
			}
			hold.Release()
			if code := <-done; code != http.StatusOK {
				t.Fatalf("code %d after release", code)
			}
			// A hold catches one request only.
			if resp, _ := do(t, p, http.MethodDelete, stsPath); resp.StatusCode != http.StatusOK {
				t.Fatalf("second delete: %d", resp.StatusCode)
			}
		})
	}
}

func TestHeldRequestOfAClientThatLeft(t *testing.T) {
	u, cfg := startUpstream(t)
	p := startProxy(t, cfg)
	hold := p.HoldNext(Match{Verbs: []string{VerbCreate}}, false)
	client := &http.Client{Timeout: 300 * time.Millisecond}
	if _, err := client.Do(mustRequest(http.MethodPost, p.URL+"/api/v1/namespaces/a/services")); err == nil {
		t.Fatal("a held request was answered")
	}
	<-hold.Held()
	hold.Release()
	time.Sleep(100 * time.Millisecond)
	if u.hits.Load() != 0 {
		t.Fatal("the request of a client that left was forwarded after the release")
	}
}

func TestUnreachableUpstreamAbortsTheConnection(t *testing.T) {
	u, cfg := startUpstream(t)
	p := startProxy(t, cfg)
	u.Close()
	resp, err := http.DefaultClient.Do(mustRequest(http.MethodGet, p.URL+stsPath))
	if err == nil {
		_ = resp.Body.Close()
		t.Fatalf("answered %d; want no answer, as without the proxy", resp.StatusCode)
	}
}

func TestWritesAndKubeconfig(t *testing.T) {
	_, cfg := startUpstream(t)
	p := startProxy(t, cfg)
	before := p.Counts()
	for _, r := range []string{"PATCH " + stsPath, "GET " + stsPath, "PUT /apis/coordination.k8s.io/v1/namespaces/s/leases/l",
		"POST /api/v1/namespaces/a/events", "PATCH " + stsPath} {
		method, url, _ := strings.Cut(r, " ")
		do(t, p, method, url)
	}
	got := Writes(before, p.Counts(), "leases")
	want := map[Key]int{{VerbPatch, "statefulsets", "a"}: 2, {VerbCreate, "events", "a"}: 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("writes %v, want %v", got, want)
	}

	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := p.Kubeconfig(path); err != nil {
		t.Fatal(err)
	}
	restCfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	if restCfg.Host != p.URL {
		t.Fatalf("kubeconfig server %q, want %q", restCfg.Host, p.URL)
	}
}

func mustRequest(method, url string) *http.Request {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		panic(err)
	}
	return req
}
