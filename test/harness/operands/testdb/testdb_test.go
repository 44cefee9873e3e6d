package testdb_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed1b407122/database-operator/test/harness/operands/testdb"
)

// server is a store served on 127.0.0.1 for one test.
type server struct {
	addr string
	info testdb.LoadInfo
	stop func()
}

// start opens the store in dir and serves it on a free loopback port until stop is called.
func start(t *testing.T, dir string) *server {
	t.Helper()
	st, info, err := testdb.Open(dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- testdb.Serve(ctx, ln, st) }()
	s := &server{addr: ln.Addr().String(), info: info}
	stopped := false
	s.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Serve did not return after its context was cancelled")
		}
		if err := st.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	t.Cleanup(s.stop)
	return s
}

func dial(t *testing.T, addr string) *testdb.Client {
	t.Helper()
	c, err := testdb.Dial(addr)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func mustGet(t *testing.T, c *testdb.Client, key, want string) {
	t.Helper()
	got, ok, err := c.Get(key)
	if err != nil || !ok || got != want {
		t.Fatalf("Get(%q) = %q, %v, %v; want %q, true, nil", key, got, ok, err, want)
	}
}

func mustCount(t *testing.T, c *testdb.Client, want int) {
	t.Helper()
	if n, err := c.Count(); err != nil || n != want {
		t.Fatalf("Count() = %d, %v; want %d", n, err, want)
	}
}

// The data written before a restart is served after it: what a pod replaced on the same volume
// must see.
func TestPutRestartGet(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data") // Open creates it
	s := start(t, dir)
	if s.info.Keys != 0 || s.info.Records != 0 {
		t.Fatalf("fresh store loaded %+v", s.info)
	}
	c := dial(t, s.addr)
	for k, v := range map[string]string{"a": "1", "b": "two words", "c": "3"} {
		if err := c.Put(k, v); err != nil {
			t.Fatalf("Put(%q): %v", k, err)
		}
	}
	if err := c.Put("a", "overwritten"); err != nil {
		t.Fatal(err)
	}
	mustGet(t, c, "b", "two words")
	mustCount(t, c, 3)
	if _, ok, err := c.Get("missing"); ok || err != nil {
		t.Fatalf("Get(missing) = %v, %v; want false, nil", ok, err)
	}
	if err := c.Ping(); err != nil {
		t.Fatal(err)
	}
	s.stop()

	s = start(t, dir)
	if s.info.Keys != 3 || s.info.Records != 4 || s.info.TornBytes != 0 {
		t.Fatalf("after restart loaded %+v; want 3 keys, 4 records, no torn tail", s.info)
	}
	c = dial(t, s.addr)
	mustGet(t, c, "a", "overwritten")
	mustGet(t, c, "b", "two words")
	mustGet(t, c, "c", "3")
	mustCount(t, c, 3)
}

// A record cut short by a crash is dropped and cut from the log, and the next write starts on a
// line of its own, so a second restart reads a clean log.
func TestTornTail(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, testdb.LogFile)
	torn := "PUT c half-writ"
	if err := os.WriteFile(log, []byte("PUT a 1\nPUT b 2\n"+torn), 0o644); err != nil {
		t.Fatal(err)
	}
	s := start(t, dir)
	if s.info.Keys != 2 || s.info.Records != 2 || s.info.TornBytes != int64(len(torn)) {
		t.Fatalf("loaded %+v; want 2 keys, 2 records, torn tail of %d bytes", s.info, len(torn))
	}
	c := dial(t, s.addr)
	if _, ok, _ := c.Get("c"); ok {
		t.Fatal("the torn record was applied")
	}
	if err := c.Put("d", "4"); err != nil {
		t.Fatal(err)
	}
	s.stop()

	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if want := "PUT a 1\nPUT b 2\nPUT d 4\n"; string(data) != want {
		t.Fatalf("log after repair = %q, want %q", data, want)
	}
	s = start(t, dir)
	if s.info.Keys != 3 || s.info.TornBytes != 0 {
		t.Fatalf("second restart loaded %+v; want 3 keys, no torn tail", s.info)
	}
	mustGet(t, dial(t, s.addr), "d", "4")
}

// A malformed complete record is corruption, not a crash: Open refuses to start on it.
func TestCorruptRecordRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, testdb.LogFile), []byte("PUT a 1\ngarbage\nPUT b 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := testdb.Open(dir); err == nil || !strings.Contains(err.Error(), "record 2") {
		t.Fatalf("Open = %v; want an error naming record 2", err)
	}
}

// The raw protocol: every request gets exactly one answer line, in order, also when pipelined.
func TestProtocol(t *testing.T) {
	s := start(t, t.TempDir())
	conn, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	requests := []struct{ req, want string }{
		{"PING", "PONG"},
		{"ping", "PONG"},
		{"PUT k v w", "OK"},
		{"GET k", "VALUE v w"},
		{"GET nope", "NOTFOUND"},
		{"COUNT", "COUNT 1"},
		{"PUT k", "ERR usage: PUT <key> <value>"},
		{"GET", "ERR usage: GET <key>"},
		{"GET a b", "ERR usage: GET <key>"},
		{"", "ERR empty request"},
		{"DROP k", `ERR unknown command "DROP" (PUT, GET, COUNT, PING)`},
		{"PUT crlf ok\r", "OK"},
		{"GET crlf", "VALUE ok"},
	}
	var batch strings.Builder
	for _, r := range requests {
		batch.WriteString(r.req + "\n")
	}
	if _, err := conn.Write([]byte(batch.String())); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	for _, want := range requests {
		got, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("answer to %q: %v", want.req, err)
		}
		if got = strings.TrimSuffix(got, "\n"); got != want.want {
			t.Errorf("%q -> %q, want %q", want.req, got, want.want)
		}
	}
}

// The client refuses what the protocol cannot carry, and reports ERR answers as ServerError.
func TestClientErrors(t *testing.T) {
	s := start(t, t.TempDir())
	c := dial(t, s.addr)
	for _, kv := range [][2]string{{"", "v"}, {"a b", "v"}, {"k", ""}, {"k", "line\nbreak"}} {
		if err := c.Put(kv[0], kv[1]); err == nil {
			t.Errorf("Put(%q, %q) succeeded", kv[0], kv[1])
		}
	}
	if _, _, err := c.Get("a b"); err == nil {
		t.Error("Get of a key with a blank succeeded")
	}
	mustCount(t, c, 0)

	huge := strings.Repeat("x", testdb.MaxLine)
	conn, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	go func() { _, _ = conn.Write([]byte("PUT k " + huge + "\n")) }()
	answer, _ := bufio.NewReader(conn).ReadString('\n')
	if !strings.HasPrefix(answer, "ERR request longer than") {
		t.Fatalf("oversized request -> %q", answer)
	}
	mustCount(t, c, 0) // the other connection is unaffected
}

// An "ERR" answer reaches the caller as a *ServerError with the server's text.
func TestServerError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer func() { _ = conn.Close() }()
		_, _ = bufio.NewReader(conn).ReadString('\n')
		_, _ = conn.Write([]byte("ERR disk full\n"))
	}()
	c := dial(t, ln.Addr().String())
	var serr *testdb.ServerError
	if err := c.Put("k", "v"); !errors.As(err, &serr) || serr.Text != "disk full" {
		t.Fatalf("Put = %v; want ServerError{disk full}", err)
	}
}
