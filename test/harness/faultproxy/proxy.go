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

// Package faultproxy is a reverse proxy on 127.0.0.1 between a Kubernetes client (the manager)
// and kube-apiserver that injects faults: 409 Conflict, 500, 503, 429 with Retry-After,
// timeouts (the request is held, then answered 504, with or without reaching the API server),
// added latency and dropped watches (the stream is cut mid-way). Rules select requests by
// verb, resource, namespace and name and fire at a configured rate; the proxy counts what it
// injected and every request it received, so a test can also tell whether the client wrote
// while nothing changed. A hold stops one chosen request before or after it reached the API
// server until the test releases it, e.g. to kill the client at an exact step.
//
// Credentials: the client talks plain HTTP to the proxy on loopback, without credentials
// (Kubeconfig writes such a file), and the proxy talks TLS to kube-apiserver with the
// credentials of the rest.Config it is given (the local control plane's admin). Passing the
// client's own certificate through is impossible once the proxy must read the request (it
// would have to terminate TLS, and it cannot present the client's certificate without the
// client's key); the manager runs as admin in test/e2e too, so nothing changes for it.
package faultproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Fault is a class of injected failure.
type Fault string

// The fault classes.
const (
	// Conflict answers 409 Conflict, as for a stale resourceVersion.
	Conflict Fault = "conflict"
	// InternalError answers 500.
	InternalError Fault = "internal-error"
	// Unavailable answers 503.
	Unavailable Fault = "unavailable"
	// TooManyRequests answers 429 with a Retry-After header (Rule.RetryAfter seconds), as API
	// priority and fairness does.
	TooManyRequests Fault = "too-many-requests"
	// Timeout holds the request for Rule.Delay, then answers 504 Gateway Timeout. With
	// Rule.Forward the request reaches the API server first and only its answer is lost.
	Timeout Fault = "timeout"
	// Latency holds the request for Rule.Delay, then forwards it.
	Latency Fault = "latency"
	// DropWatch forwards a watch and cuts its stream (the connection is aborted) after
	// Rule.Delay.
	DropWatch Fault = "drop-watch"
)

// Faults lists every class, in the order reports use.
var Faults = []Fault{Conflict, InternalError, Unavailable, TooManyRequests, Timeout, Latency, DropWatch}

// Rule injects one fault into a share of the requests it matches.
type Rule struct {
	Match
	Fault Fault
	// Name labels the rule's injections in Injected (default: the fault's name), to tell
	// apart two rules of one class.
	Name string
	// Rate is the probability (0–1) that a matching request gets the fault.
	Rate float64
	// Delay: how long Timeout holds a request, how much Latency adds, and after how long
	// DropWatch cuts a watch.
	Delay time.Duration
	// RetryAfter is the Retry-After of TooManyRequests, in seconds (at least 1).
	RetryAfter int
	// Forward lets a Timeout request reach the API server: it is applied, the answer lost.
	Forward bool
}

// Options configure Start.
type Options struct {
	// Upstream reaches kube-apiserver with the credentials the proxy uses for every request.
	Upstream *rest.Config
	// Seed makes the random choices of the rules repeatable.
	Seed uint64
	// Log receives a line per injected fault (default: none).
	Log func(format string, args ...any)
}

// Key identifies requests in Counts.
type Key struct {
	Verb, Resource, Namespace string
}

// Proxy is a running fault proxy. Close it when done.
type Proxy struct {
	// URL is the proxy's address, http://127.0.0.1:PORT.
	URL string

	upstream *url.URL
	proxy    *httputil.ReverseProxy
	server   *http.Server
	listener net.Listener
	served   chan struct{}
	logf     func(string, ...any)

	mu       sync.Mutex
	rand     *rand.Rand
	rules    []Rule
	holds    []*Hold
	injected map[string]int
	counts   map[Key]int
	closed   chan struct{}
}

// ctxKey marks a request whose answer must be lost (Timeout with Forward) or held (a Hold
// after forwarding).
type ctxKey int

const (
	loseAnswerKey ctxKey = iota
	holdAfterKey
)

// errAnswerLost is how ModifyResponse tells the error handler to answer 504.
var errAnswerLost = errors.New("answer lost by the fault proxy")

// Start listens on a free loopback port and proxies to opts.Upstream.
func Start(opts Options) (*Proxy, error) {
	if opts.Upstream == nil {
		return nil, errors.New("faultproxy: no upstream configuration")
	}
	transport, err := rest.TransportFor(opts.Upstream)
	if err != nil {
		return nil, fmt.Errorf("faultproxy: building the upstream transport: %w", err)
	}
	host, _, err := rest.DefaultServerUrlFor(opts.Upstream)
	if err != nil {
		return nil, fmt.Errorf("faultproxy: upstream address: %w", err)
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultproxy: listening: %w", err)
	}
	p := &Proxy{
		URL:      "http://" + listener.Addr().String(),
		upstream: host,
		listener: listener,
		served:   make(chan struct{}),
		logf:     opts.Log,
		rand:     rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15)), //nolint:gosec // test randomness
		injected: map[string]int{},
		counts:   map[Key]int{},
		closed:   make(chan struct{}),
	}
	if p.logf == nil {
		p.logf = func(string, ...any) {}
	}
	p.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(p.upstream)
			pr.Out.Host = p.upstream.Host
		},
		Transport: transport,
		// Watches are streams: pass every event on at once.
		FlushInterval:  -1,
		ModifyResponse: p.modifyResponse,
		ErrorHandler:   p.errorHandler,
		// A cut watch or a client that went away is expected; do not log it.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	p.server = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go func() {
		defer close(p.served)
		_ = p.server.Serve(listener)
	}()
	return p, nil
}

// Close stops the proxy, releases every held request and closes every connection.
func (p *Proxy) Close() error {
	p.mu.Lock()
	select {
	case <-p.closed:
	default:
		close(p.closed)
	}
	p.mu.Unlock()
	err := p.server.Close()
	<-p.served
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// SetRules replaces the rules; none means every request is forwarded untouched.
func (p *Proxy) SetRules(rules ...Rule) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = append([]Rule(nil), rules...)
}

// Injected returns how many times each rule injected its fault since Start, by the rule's Name
// (by default the fault's).
func (p *Proxy) Injected() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.injected)
}

// Counts returns how many requests the proxy received since Start, by verb, resource and
// namespace, whether it forwarded them or answered them with a fault: a client that keeps
// trying to write is seen even when its writes fail.
func (p *Proxy) Counts() map[Key]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.counts)
}

// Writes returns the write requests (WriteVerbs) of after that are not in before,
// leaving out the resources given (e.g. "leases", which leader election renews).
func Writes(before, after map[Key]int, except ...string) map[Key]int {
	out := map[Key]int{}
	for k, n := range after {
		if !(Request{Verb: k.Verb}).IsWrite() || contains(except, k.Resource) {
			continue
		}
		if d := n - before[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

// Kubeconfig writes a kubeconfig that reaches the API server through the proxy.
func (p *Proxy) Kubeconfig(path string) error {
	const name = "faultproxy"
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: p.URL}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	cfg.CurrentContext = name
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("faultproxy: writing %s: %w", path, err)
	}
	return os.Chmod(path, 0o600)
}

// ServeHTTP applies the first hold, then the first rule that fires, then forwards.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req := ParseRequest(r)
	p.mu.Lock()
	p.counts[Key{Verb: req.Verb, Resource: req.Resource, Namespace: req.Namespace}]++
	p.mu.Unlock()
	hold := p.takeHold(req)
	if hold != nil && !hold.afterForward {
		if !hold.wait(r.Context(), p.closed) {
			panic(http.ErrAbortHandler) // the client is gone or the proxy closes
		}
	}
	rule, fire := p.pick(req)
	if fire {
		p.count(rule, req)
		if p.inject(w, r, rule) {
			return
		}
	}
	ctx := r.Context()
	if fire && rule.Fault == Timeout {
		ctx = context.WithValue(ctx, loseAnswerKey, rule.Delay)
	}
	var cut atomic.Bool
	if fire && rule.Fault == DropWatch && req.Verb == VerbWatch {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		stop := time.AfterFunc(rule.Delay, func() {
			cut.Store(true)
			cancel()
		})
		defer stop.Stop()
	}
	if hold != nil && hold.afterForward {
		ctx = context.WithValue(ctx, holdAfterKey, hold)
	}
	p.proxy.ServeHTTP(w, r.WithContext(ctx))
	if cut.Load() {
		// The upstream stream may end cleanly on the cancel; the client must see a broken
		// stream, not the end of a watch.
		panic(http.ErrAbortHandler)
	}
}

// pick returns the first rule matching req, and whether it fires this time.
func (p *Proxy) pick(req Request) (Rule, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, rule := range p.rules {
		if !rule.Matches(req) {
			continue
		}
		if rule.Fault == DropWatch && req.Verb != VerbWatch {
			continue
		}
		return rule, p.rand.Float64() < rule.Rate
	}
	return Rule{}, false
}

func (p *Proxy) count(rule Rule, req Request) {
	name := rule.Name
	if name == "" {
		name = string(rule.Fault)
	}
	p.mu.Lock()
	p.injected[name]++
	p.mu.Unlock()
	p.logf("faultproxy: %s (%s) on %s %s %s/%s", rule.Fault, name, req.Verb, req.Resource, req.Namespace, req.Name)
}

// inject answers the request itself for the faults that do not forward it, and reports
// whether it did. Latency waits here and lets the request go on.
func (p *Proxy) inject(w http.ResponseWriter, r *http.Request, rule Rule) bool {
	switch rule.Fault {
	case Conflict:
		writeStatus(w, http.StatusConflict, metav1.StatusReasonConflict,
			"Operation cannot be fulfilled: the object has been modified (injected by the fault proxy)")
	case InternalError:
		writeStatus(w, http.StatusInternalServerError, metav1.StatusReasonInternalError,
			"Internal error occurred (injected by the fault proxy)")
	case Unavailable:
		writeStatus(w, http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable,
			"The server is currently unable to handle the request (injected by the fault proxy)")
	case TooManyRequests:
		w.Header().Set("Retry-After", strconv.Itoa(max(rule.RetryAfter, 1)))
		writeStatus(w, http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests,
			"Too many requests, please try again later (injected by the fault proxy)")
	case Timeout:
		if rule.Forward {
			return false // forwarded; modifyResponse loses the answer
		}
		if !sleep(r.Context(), p.closed, rule.Delay) {
			panic(http.ErrAbortHandler)
		}
		writeTimeout(w)
	case Latency:
		if !sleep(r.Context(), p.closed, rule.Delay) {
			panic(http.ErrAbortHandler)
		}
		return false
	default: // DropWatch acts while forwarding.
		return false
	}
	return true
}

// modifyResponse loses the answer of a forwarded Timeout, and holds a response for a Hold
// after forwarding.
func (p *Proxy) modifyResponse(resp *http.Response) error {
	ctx := resp.Request.Context()
	if delay, ok := ctx.Value(loseAnswerKey).(time.Duration); ok {
		_ = resp.Body.Close()
		sleep(ctx, p.closed, delay)
		return errAnswerLost
	}
	if hold, ok := ctx.Value(holdAfterKey).(*Hold); ok {
		hold.response = resp.StatusCode
		if !hold.wait(ctx, p.closed) {
			_ = resp.Body.Close()
			return context.Canceled
		}
	}
	return nil
}

// errorHandler answers 504 for a lost answer. Anything else (the API server cannot be
// reached, a held request whose client left) aborts the connection, which is what the client
// would see without the proxy.
func (p *Proxy) errorHandler(w http.ResponseWriter, _ *http.Request, err error) {
	if errors.Is(err, errAnswerLost) {
		writeTimeout(w)
		return
	}
	panic(http.ErrAbortHandler)
}

func writeTimeout(w http.ResponseWriter) {
	writeStatus(w, http.StatusGatewayTimeout, metav1.StatusReasonTimeout,
		"The request did not complete in time (injected by the fault proxy)")
}

// writeStatus answers with a metav1.Status, as kube-apiserver does for errors.
func writeStatus(w http.ResponseWriter, code int, reason metav1.StatusReason, message string) {
	status := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Message:  message,
		Reason:   reason,
		Code:     int32(code), //nolint:gosec // HTTP status codes fit
	}
	body, _ := json.Marshal(status)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// sleep waits d; false when ctx ended or closed was closed first.
func sleep(ctx context.Context, closed <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	return await(ctx, closed, t.C)
}

// await waits for a value on ch, or its close; false when ctx ended or closed was closed first.
func await[T any](ctx context.Context, closed <-chan struct{}, ch <-chan T) bool {
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	case <-closed:
		return false
	}
}
