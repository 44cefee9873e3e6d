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

package operator

import (
	"crypto/tls"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/seed1b407122/database-operator/controllers/cachecfg"
)

// tlsConfigOf applies opts to an empty TLS configuration.
func tlsConfigOf(opts []func(*tls.Config)) *tls.Config {
	cfg := &tls.Config{}
	for _, opt := range opts {
		opt(cfg)
	}
	return cfg
}

// TestMetricsTLSOptions checks the metrics endpoint's TLS settings with and without
// --enable-http2: TLS 1.2 at least, and ALPN limited to HTTP/1.1 unless HTTP/2 is asked for.
func TestMetricsTLSOptions(t *testing.T) {
	for _, tc := range []struct {
		enableHTTP2 bool
		wantProtos  []string
	}{
		{enableHTTP2: false, wantProtos: []string{"http/1.1"}},
		// controller-runtime's server then offers h2 and http/1.1 itself.
		{enableHTTP2: true, wantProtos: nil},
	} {
		cfg := tlsConfigOf(metricsTLSOptions(tc.enableHTTP2))
		if cfg.MinVersion != tls.VersionTLS12 {
			t.Errorf("enableHTTP2=%v: MinVersion = %#x, want TLS 1.2 (%#x)", tc.enableHTTP2, cfg.MinVersion, tls.VersionTLS12)
		}
		if !slices.Equal(cfg.NextProtos, tc.wantProtos) {
			t.Errorf("enableHTTP2=%v: NextProtos = %q, want %q", tc.enableHTTP2, cfg.NextProtos, tc.wantProtos)
		}
	}
}

// TestManagerOptions: the metrics server gets the TLS settings, and the authentication and
// authorization filter exactly when it serves securely; the leader election's settings, the
// watched namespaces and the controllers' warm-up reach the manager.
func TestManagerOptions(t *testing.T) {
	s := Settings{MetricsAddr: ":8443", MetricsSecure: true, ProbeAddr: ":8081", LeaderElect: true,
		LeaderElectionID: "lock", LeaderElectionNamespace: "ops", LeaseDuration: 15 * time.Second,
		RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second, ReleaseOnCancel: true,
		Namespaces: []string{"team-a"}}
	got := managerOptions(s)
	cfg := tlsConfigOf(got.Metrics.TLSOpts)
	if cfg.MinVersion != tls.VersionTLS12 || !slices.Equal(cfg.NextProtos, []string{"http/1.1"}) {
		t.Errorf("metrics TLS config: MinVersion %#x, NextProtos %q; want TLS 1.2 and [http/1.1]", cfg.MinVersion, cfg.NextProtos)
	}
	if !got.Metrics.SecureServing || got.Metrics.FilterProvider == nil {
		t.Errorf("secure metrics: SecureServing %v, filter set %v; want both", got.Metrics.SecureServing, got.Metrics.FilterProvider != nil)
	}
	if !got.LeaderElection || got.LeaderElectionID != "lock" || got.LeaderElectionNamespace != "ops" ||
		!got.LeaderElectionReleaseOnCancel || ptr.Deref(got.LeaseDuration, 0) != 15*time.Second ||
		ptr.Deref(got.RenewDeadline, 0) != 10*time.Second || ptr.Deref(got.RetryPeriod, 0) != 2*time.Second {
		t.Errorf("leader election options = %+v; want those of the settings", got)
	}
	if _, ok := got.Cache.DefaultNamespaces["team-a"]; !ok || len(got.Cache.DefaultNamespaces) != 1 {
		t.Errorf("cache namespaces = %v, want only team-a", got.Cache.DefaultNamespaces)
	}
	if !ptr.Deref(got.Controller.EnableWarmup, false) {
		t.Error("controllers do not warm up before they lead")
	}
	plain := managerOptions(Settings{MetricsAddr: ":8080"})
	if plain.Metrics.SecureServing || plain.Metrics.FilterProvider != nil {
		t.Error("--metrics-secure=false: the metrics endpoint still asks for TLS or a token")
	}
}

func TestWatchNamespaces(t *testing.T) {
	for value, want := range map[string][]string{
		"":                  nil,
		" , ":               nil,
		"team-a":            {"team-a"},
		" team-a,,team-b ,": {"team-a", "team-b"},
	} {
		if got := WatchNamespaces(value); !slices.Equal(got, want) {
			t.Errorf("WatchNamespaces(%q) = %q, want %q", value, got, want)
		}
	}
}

func TestDurationFromEnv(t *testing.T) {
	const name, flagValue = "STORAGE_MEASURE_INTERVAL", time.Minute
	for _, c := range []struct {
		env       map[string]string
		flagGiven bool
		want      time.Duration
		err       string
	}{
		{env: nil, want: flagValue},
		{env: map[string]string{name: "10s"}, want: 10 * time.Second},
		{env: map[string]string{name: " 2m "}, want: 2 * time.Minute},
		{env: map[string]string{name: "10s"}, flagGiven: true, want: flagValue},
		{env: map[string]string{name: ""}, want: flagValue},
		{env: map[string]string{"OTHER": "10s"}, want: flagValue},
		{env: map[string]string{name: "ten"}, want: flagValue,
			err: `environment variable STORAGE_MEASURE_INTERVAL="ten" is not a positive duration such as 30s or 2m; using 1m0s`},
		{env: map[string]string{name: "-5s"}, want: flagValue,
			err: `environment variable STORAGE_MEASURE_INTERVAL="-5s" is not a positive duration such as 30s or 2m; using 1m0s`},
		{env: map[string]string{name: "0"}, want: flagValue,
			err: `environment variable STORAGE_MEASURE_INTERVAL="0" is not a positive duration such as 30s or 2m; using 1m0s`},
	} {
		lookup := func(key string) (string, bool) { v, ok := c.env[key]; return v, ok }
		got, err := DurationFromEnv(lookup, name, flagValue, c.flagGiven)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if got != c.want || gotErr != c.err {
			t.Errorf("env %v, flag given %t: got %s, %q; want %s, %q", c.env, c.flagGiven, got, gotErr, c.want, c.err)
		}
	}
}

func TestSetGCPercent(t *testing.T) {
	t.Cleanup(func() { debug.SetGCPercent(100) })
	unset := func(string) (string, bool) { return "", false }
	if got := SetGCPercent(unset); got != defaultGCPercent {
		t.Fatalf("GOGC unset: target %d, want %d", got, defaultGCPercent)
	}
	if got := debug.SetGCPercent(100); got != defaultGCPercent {
		t.Fatalf("GOGC unset: the runtime's target is %d, want %d", got, defaultGCPercent)
	}
	// GOGC=200 in the environment: the runtime read it at start; SetGCPercent leaves it.
	debug.SetGCPercent(200)
	set := func(name string) (string, bool) { return "200", name == "GOGC" }
	if got := SetGCPercent(set); got != 200 {
		t.Fatalf("GOGC=200: target %d, want 200 (the environment's)", got)
	}
	if got := debug.SetGCPercent(100); got != 200 {
		t.Fatalf("GOGC=200: the runtime's target is %d, want 200", got)
	}
}

// TestWithoutCompression: the manager's client asks the API server for uncompressed responses,
// over TLS and over plain HTTP (where client-go would otherwise use Go's default transport,
// which asks for gzip whatever the config says).
func TestWithoutCompression(t *testing.T) {
	seen := make(chan string, 1)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Get("Accept-Encoding")
		_, _ = w.Write([]byte(`{}`))
	})
	plain := httptest.NewServer(handler)
	defer plain.Close()
	secure := httptest.NewTLSServer(handler)
	defer secure.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: secure.Certificate().Raw})
	for _, cfg := range []*rest.Config{
		{Host: plain.URL},
		{Host: secure.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}},
	} {
		if err := withoutCompression(cfg); err != nil {
			t.Fatal(err)
		}
		httpClient, err := rest.HTTPClientFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := httpClient.Get(cfg.Host + "/version")
		if err != nil {
			t.Fatalf("%s: %v", cfg.Host, err)
		}
		_ = resp.Body.Close()
		if got := <-seen; got != "" {
			t.Errorf("%s: Accept-Encoding of the request = %q, want none", cfg.Host, got)
		}
	}
}

// TestLeaseNamespace: the flag wins; without it the pod's namespace file is read (trimmed), and
// outside a cluster (no file) the error says which flag to set.
func TestLeaseNamespace(t *testing.T) {
	file := filepath.Join(t.TempDir(), "namespace")
	if got, err := leaseNamespace("ops", file); err != nil || got != "ops" {
		t.Fatalf("with the flag: %q, %v; want ops", got, err)
	}
	if _, err := leaseNamespace("", file); err == nil || !strings.Contains(err.Error(), "--leader-election-namespace") {
		t.Fatalf("no flag, no file: %v; want an error naming --leader-election-namespace", err)
	}
	if err := os.WriteFile(file, []byte("operators\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := leaseNamespace("", file); err != nil || got != "operators" {
		t.Fatalf("from the file: %q, %v; want operators", got, err)
	}
}

// TestWithLeaderLock: without leader election the manager keeps controller-runtime's lock (none
// set); with it, the watched Lease lock of the given name and namespace.
func TestWithLeaderLock(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:1"}
	missing := filepath.Join(t.TempDir(), "namespace")
	var opts ctrl.Options
	stop, err := withLeaderLock(cfg, &opts, missing)
	if err != nil || opts.LeaderElectionResourceLockInterface != nil {
		t.Fatalf("without leader election: lock %v, %v; want none", opts.LeaderElectionResourceLockInterface, err)
	}
	stop()
	opts = ctrl.Options{LeaderElection: true, LeaderElectionID: "lock", LeaseDuration: ptr.To(15 * time.Second),
		RenewDeadline: ptr.To(10 * time.Second)}
	if _, err := withLeaderLock(cfg, &opts, missing); err == nil {
		t.Fatal("leader election outside a cluster without --leader-election-namespace: no error")
	}
	opts.LeaderElectionNamespace = "ops"
	stop, err = withLeaderLock(cfg, &opts, missing)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	lock := opts.LeaderElectionResourceLockInterface
	if lock == nil || lock.Describe() != "ops/lock" {
		t.Fatalf("lock = %v; want the Lease ops/lock", lock)
	}
}

// TestWithSnapshotCache: the cache holds VolumeSnapshots only when the API server serves
// snapshot.storage.k8s.io/v1 with the VolumeSnapshot kind.
func TestWithSnapshotCache(t *testing.T) {
	path := "/apis/" + snapshotv1.SchemeGroupVersion.String()
	for _, tc := range []struct {
		name string
		body string // the group version's resource list; "" answers 404
		want bool
	}{
		{name: "not served", body: "", want: false},
		{name: "served", body: `{"kind":"APIResourceList","groupVersion":"snapshot.storage.k8s.io/v1",` +
			`"resources":[{"name":"volumesnapshots","namespaced":true,"kind":"VolumeSnapshot","verbs":["get"]}]}`, want: true},
		{name: "without the kind", body: `{"kind":"APIResourceList","groupVersion":"snapshot.storage.k8s.io/v1",` +
			`"resources":[{"name":"volumesnapshotclasses","namespaced":false,"kind":"VolumeSnapshotClass","verbs":["get"]}]}`, want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != path || tc.body == "" {
					http.NotFound(w, r)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(tc.body))
			}))
			defer server.Close()
			got, err := withSnapshotCache(&rest.Config{Host: server.URL}, cachecfg.Options(nil, cachecfg.NewShared()))
			if err != nil {
				t.Fatal(err)
			}
			if has := cachesSnapshots(got); has != tc.want {
				t.Errorf("VolumeSnapshots in the cache: %v, want %v", has, tc.want)
			}
		})
	}
}

func cachesSnapshots(opts cache.Options) bool {
	for obj := range opts.ByObject {
		if _, ok := obj.(*snapshotv1.VolumeSnapshot); ok {
			return true
		}
	}
	return false
}
