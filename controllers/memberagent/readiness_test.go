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

package memberagent

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestReadiness: 200 while the database answers; 503 when it refuses, and when it takes the
// connection and never answers (a frozen PostgreSQL), within ReadyTimeout; only GET.
func TestReadiness(t *testing.T) {
	sim := NewSimEngine("db-0", RolePrimary)
	frozen, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = frozen.Close() })
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- ServeReadiness(ctx, l, sim) }()
	url := "http://" + l.Addr().String() + ReadyPath
	check := func(method string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(body))
	}
	if code, body := check(http.MethodGet); code != http.StatusOK || body != "the database answers" {
		t.Fatalf("answering: %d %q", code, body)
	}
	if code, _ := check(http.MethodPost); code != http.StatusMethodNotAllowed {
		t.Fatalf("POST: %d, want 405", code)
	}
	sim.Fail(ActionObserve, errors.New("connect: secret details"))
	if code, body := check(http.MethodGet); code != http.StatusServiceUnavailable || body != "the database does not answer" {
		t.Fatalf("failing: %d %q", code, body)
	}

	// A PostgreSQL that takes the connection and never answers.
	pg := NewPostgreSQL("db-0", "postgres://u:p@"+frozen.Addr().String()+"/postgres?sslmode=disable")
	l2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = ServeReadiness(ctx, l2, pg) }()
	began := time.Now()
	resp, err := http.Get("http://" + l2.Addr().String() + ReadyPath)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if took := time.Since(began); resp.StatusCode != http.StatusServiceUnavailable || took > ReadyTimeout+time.Second {
		t.Fatalf("frozen: %d after %s, want 503 within %s", resp.StatusCode, took, ReadyTimeout+time.Second)
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("ServeReadiness after ctx is done: %v", err)
	}
}
