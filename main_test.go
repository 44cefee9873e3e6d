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

package main

import (
	"crypto/tls"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"slices"
	"testing"

	"k8s.io/client-go/rest"
)

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
		cfg := &tls.Config{}
		for _, opt := range metricsTLSOptions(tc.enableHTTP2) {
			opt(cfg)
		}
		if cfg.MinVersion != tls.VersionTLS12 {
			t.Errorf("enableHTTP2=%v: MinVersion = %#x, want TLS 1.2 (%#x)", tc.enableHTTP2, cfg.MinVersion, tls.VersionTLS12)
		}
		if !slices.Equal(cfg.NextProtos, tc.wantProtos) {
			t.Errorf("enableHTTP2=%v: NextProtos = %q, want %q", tc.enableHTTP2, cfg.NextProtos, tc.wantProtos)
		}
	}
}

// TestManagerOptionsMetricsTLS checks that managerOptions hands the TLS settings to the
// metrics server.
func TestManagerOptionsMetricsTLS(t *testing.T) {
	o := options{metricsAddr: ":8443", metricsSecure: true}
	got := managerOptions(o, nil).Metrics.TLSOpts
	cfg := &tls.Config{}
	for _, opt := range got {
		opt(cfg)
	}
	if cfg.MinVersion != tls.VersionTLS12 || !slices.Equal(cfg.NextProtos, []string{"http/1.1"}) {
		t.Errorf("metrics TLS config: MinVersion %#x, NextProtos %q; want TLS 1.2 and [http/1.1]", cfg.MinVersion, cfg.NextProtos)
	}
}

func TestSetupMonitoringObjectsNeedsTheNamespace(t *testing.T) {
	t.Setenv(podNamespaceEnv, "")
	if err := setupMonitoringObjects(nil, nil, options{}); err != nil {
		t.Fatalf("without --monitoring-objects: %v, want nil (nothing set up)", err)
	}
	err := setupMonitoringObjects(nil, nil, options{monitoringObjects: true})
	want := "--monitoring-objects needs POD_NAMESPACE, the manager's namespace (the downward API's metadata.namespace)"
	if err == nil || err.Error() != want {
		t.Fatalf("--monitoring-objects without POD_NAMESPACE: %v, want %q", err, want)
	}
}

func TestSetGCPercent(t *testing.T) {
	t.Cleanup(func() { debug.SetGCPercent(100) })
	unset := func(string) (string, bool) { return "", false }
	if got := setGCPercent(unset); got != defaultGCPercent {
		t.Fatalf("GOGC unset: target %d, want %d", got, defaultGCPercent)
	}
	if got := debug.SetGCPercent(100); got != defaultGCPercent {
		t.Fatalf("GOGC unset: the runtime's target is %d, want %d", got, defaultGCPercent)
	}
	// GOGC=200 in the environment: the runtime read it at start; setGCPercent leaves it.
	debug.SetGCPercent(200)
	set := func(name string) (string, bool) { return "200", name == "GOGC" }
	if got := setGCPercent(set); got != 200 {
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
