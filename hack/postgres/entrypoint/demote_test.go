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
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed1b407122/database-operator/controllers/memberagent"
)

// readWriteProxy stands for the Service NAME-rw: it forwards each new connection to the port it
// points at; a connection it forwarded stays with its server, as kube-proxy's do.
type readWriteProxy struct {
	ln     net.Listener
	target atomic.Int64
	wg     sync.WaitGroup
}

// newReadWriteProxy listens on a free port of 127.0.0.1 until the test ends.
func newReadWriteProxy(t *testing.T) *readWriteProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &readWriteProxy{ln: ln}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(func() {
		_ = ln.Close()
		p.wg.Wait()
	})
	return p
}

// port is the proxy's own port.
func (p *readWriteProxy) port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// pointAt sends the connections that follow to port.
func (p *readWriteProxy) pointAt(port int) { p.target.Store(int64(port)) }

func (p *readWriteProxy) serve() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.forward(in)
	}
}

// forward joins in to a connection to the current target, until either side closes.
func (p *readWriteProxy) forward(in net.Conn) {
	defer func() { _ = in.Close() }()
	out, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(p.target.Load()))))
	if err != nil {
		return
	}
	defer func() { _ = out.Close() }()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(out, in); done <- struct{}{} }()
	go func() { _, _ = io.Copy(in, out); done <- struct{}{} }()
	<-done
}

// streamingFrom is how many standbys stream from the server of dsn (pg_stat_replication).
func streamingFrom(t *testing.T, dsn string) int {
	t.Helper()
	var n int
	query(t, dsn, "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'", &n)
	return n
}

// position is the member's position as its agent reports it.
func position(t *testing.T, m *member) memberagent.Observation {
	t.Helper()
	obs, err := memberagent.NewPostgreSQL(m.name, m.dsn).Observe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return obs
}

// TestSwitchoverStepsDown: three members streaming through a stand-in for NAME-rw. The agent's
// Fence makes the primary a step down: it stops (its last WAL reaching both replicas), comes
// back in the same entrypoint as a standby of NAME-rw, and streams from nobody while NAME-rw
// still reaches it (target_session_attrs=read-write). Once NAME-rw points at the replica
// promoted, both other members follow the new timeline without a rewind and replay its writes.
// Without the step down, the replica that is not promoted kept streaming from the old primary
// and could not follow the new one (the 3-member switchover bug).
func TestSwitchoverStepsDown(t *testing.T) {
	h := newHost(t)
	rw := newReadWriteProxy(t)
	a, b, c := h.member(t, "a"), h.member(t, "b"), h.member(t, "c")
	h.announce(t, a, rolePrimary, "127.0.0.1", rw.port())
	h.start(t, a)
	a.waitReady(t)
	rw.pointAt(a.port)
	query(t, a.dsn, "CREATE TABLE t (v int); INSERT INTO t VALUES (1)")
	for _, m := range []*member{b, c} {
		h.announce(t, m, roleReplica, "127.0.0.1", rw.port())
		h.start(t, m)
		m.waitReady(t)
		eventuallyRows(t, m.dsn, "1")
	}
	query(t, a.dsn, "INSERT INTO t VALUES (2)")

	ctx := context.Background()
	if err := memberagent.NewPostgreSQL("a", a.dsn).Fence(ctx); err != nil {
		t.Fatalf("Fence: %v", err)
	}
	conninfo := standbyOf(t, a.dsn, "127.0.0.1", rw.port())
	if !strings.Contains(conninfo, "target_session_attrs='read-write'") {
		t.Fatalf("the stepped-down primary's primary_conninfo %q lacks target_session_attrs=read-write", conninfo)
	}
	if _, err := os.Stat(filepath.Join(a.pgdata, demoteSignal)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s after the step down: %v, want it removed", demoteSignal, err)
	}
	if a.p.Exited() {
		t.Fatal("the entrypoint exited on the step down; want the server started again in it")
	}
	// Its last WAL, the shutdown checkpoint, reached both replicas.
	last := position(t, a)
	for _, m := range []*member{b, c} {
		if got := position(t, m); got.Position < last.Position {
			t.Fatalf("%s is at %s, the stepped-down primary ended at %s", m.name, got.PositionText, last.PositionText)
		}
	}
	// NAME-rw still reaches a, which streams to nobody: read-write connections only.
	time.Sleep(2 * time.Second)
	if n := streamingFrom(t, a.dsn); n != 0 {
		t.Fatalf("%d standbys stream from the stepped-down primary, want 0", n)
	}

	rw.pointAt(b.port)
	if err := memberagent.NewPostgreSQL("b", b.dsn).Promote(ctx); err != nil {
		t.Fatalf("Promote: %v", err)
	}
	query(t, b.dsn, "INSERT INTO t VALUES (3)")
	for _, m := range []*member{a, c} {
		eventuallyRows(t, m.dsn, "1,2,3")
	}
	deadline := time.Now().Add(30 * time.Second)
	for n := streamingFrom(t, b.dsn); n != 2; n = streamingFrom(t, b.dsn) {
		if time.Now().After(deadline) {
			t.Fatalf("%d standbys stream from the new primary, want 2", n)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, m := range []*member{a, c} {
		if log := h.log(t, m); strings.Contains(log, "pg_rewind") || strings.Contains(log, "moved aside") {
			t.Fatalf("%s was rewound or moved aside:\n%s", m.name, log)
		}
	}
	if log := h.log(t, a); strings.Count(log, "stepped down") != 1 {
		t.Fatalf("a's entrypoint did not step down once:\n%s", log)
	}
}
