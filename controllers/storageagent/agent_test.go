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

package storageagent

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// TestFromCounters: used is size minus free blocks, capacity adds what unprivileged users may
// still write (root's reserved blocks are not counted).
func TestFromCounters(t *testing.T) {
	// 1000 blocks of 4096 bytes, 400 free of which 350 available to non-root.
	got := fromCounters(4096, 1000, 400, 350)
	want := Usage{UsedBytes: 600 * 4096, CapacityBytes: 950 * 4096}
	if got != want {
		t.Fatalf("fromCounters = %+v, want %+v", got, want)
	}
}

// TestStatfsOfARealDirectory: the real statfs of a directory gives a capacity and used bytes
// no larger than it.
func TestStatfsOfARealDirectory(t *testing.T) {
	u, err := Statfs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if u.CapacityBytes <= 0 || u.UsedBytes < 0 || u.UsedBytes > u.CapacityBytes {
		t.Fatalf("Statfs = %+v, want 0 <= used <= capacity, capacity > 0", u)
	}
	if _, err := Statfs("/no/such/path"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Statfs of a missing path: err = %v, want ENOENT", err)
	}
}

// serve runs the agent on 127.0.0.1 with stat, for the test's life, and returns its address.
func serve(t *testing.T, stat StatFunc) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, l, "/var/lib/database", stat) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve after cancel: %v", err)
		}
	})
	return l.Addr().String()
}

// TestReadServedUsage: Read gets exactly what the agent measured of the path it was given.
func TestReadServedUsage(t *testing.T) {
	var asked string
	addr := serve(t, func(path string) (Usage, error) {
		asked = path
		return Usage{UsedBytes: 850, CapacityBytes: 1000}, nil
	})
	got, err := Read(context.Background(), &http.Client{Timeout: time.Second}, addr)
	if err != nil {
		t.Fatal(err)
	}
	if got != (Usage{UsedBytes: 850, CapacityBytes: 1000}) || asked != "/var/lib/database" {
		t.Fatalf("Read = %+v of path %q, want used 850 of 1000 of /var/lib/database", got, asked)
	}
}

// TestReadFailures: an agent that cannot measure, that answers nonsense, that is not there,
// or that does not answer in time is an error, never a usage.
func TestReadFailures(t *testing.T) {
	hc := &http.Client{Timeout: 200 * time.Millisecond}
	failing := serve(t, func(string) (Usage, error) {
		return Usage{}, errors.New("statfs /var/lib/database: no such file or directory")
	})
	zero := serve(t, func(string) (Usage, error) { return Usage{}, nil })
	slow := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { time.Sleep(time.Second) }))
	defer slow.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := closed.Addr().String()
	_ = closed.Close()
	for _, tc := range []struct{ name, addr, want string }{
		{"cannot measure", failing, "500 Internal Server Error: statfs /var/lib/database: no such file or directory"},
		{"no capacity", zero, "the agent reports used 0 of capacity 0 bytes"},
		{"not listening", gone, "connection refused"},
		{"too slow", strings.TrimPrefix(slow.URL, "http://"), "Client.Timeout exceeded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(context.Background(), hc, tc.addr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Read: err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestReadAnswerWithoutBody: a refusal with no body (or white space only) is told by its status
// alone, with no separator left before nothing.
func TestReadAnswerWithoutBody(t *testing.T) {
	for _, body := range []string{"", " \n"} {
		agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(body))
		}))
		_, err := Read(context.Background(), &http.Client{Timeout: time.Second}, strings.TrimPrefix(agent.URL, "http://"))
		agent.Close()
		if err == nil || err.Error() != "the agent answered 404 Not Found" {
			t.Fatalf("Read of a 404 with body %q: err = %v, want \"the agent answered 404 Not Found\"", body, err)
		}
	}
}

// TestHandlerServesOnlyUsage: other paths and methods are refused.
func TestHandlerServesOnlyUsage(t *testing.T) {
	h := Handler("/data", func(string) (Usage, error) { return Usage{UsedBytes: 1, CapacityBytes: 2}, nil })
	for _, tc := range []struct {
		method, path string
		code         int
	}{
		{http.MethodGet, UsagePath, http.StatusOK},
		{http.MethodPost, UsagePath, http.StatusMethodNotAllowed},
		{http.MethodGet, "/", http.StatusNotFound},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
		if rec.Code != tc.code {
			t.Errorf("%s %s = %d, want %d", tc.method, tc.path, rec.Code, tc.code)
		}
	}
}

// TestMainFlags: both flags are required; a bad address fails at once.
func TestMainFlags(t *testing.T) {
	var stderr bytes.Buffer
	if code := Main([]string{"--path=/data"}, &stderr); code != 2 || !strings.Contains(stderr.String(), "--path and --listen are required") {
		t.Fatalf("Main without --listen = %d (%q), want 2 and the missing flag named", code, stderr.String())
	}
	stderr.Reset()
	if code := Main([]string{"--path=/data", "--listen=not-an-address"}, &stderr); code != 1 {
		t.Fatalf("Main with a bad address = %d (%q), want 1", code, stderr.String())
	}
}
