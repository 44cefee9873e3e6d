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
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/seed1b407122/database-operator/test/harness/operands"
)

// TestParseLSN: an LSN is its two 32-bit halves; anything else is refused.
func TestParseLSN(t *testing.T) {
	cases := []struct {
		text string
		want uint64
		ok   bool
	}{
		{"0/0", 0, true},
		{"0/3000060", 0x3000060, true},
		{"16/B374D848", 0x16B374D848, true},
		{"FFFFFFFF/FFFFFFFF", 1<<64 - 1, true},
		{"0/", 0, false},
		{"/1", 0, false},
		{"0/100000000", 0, false},
		{"1-2", 0, false},
		{"0/xyz", 0, false},
		{"+1/2", 0, false},
	}
	for _, tc := range cases {
		got, err := ParseLSN(tc.text)
		if tc.ok && (err != nil || got != tc.want) {
			t.Errorf("ParseLSN(%q) = %#x, %v; want %#x", tc.text, got, err, tc.want)
		}
		if !tc.ok && err == nil {
			t.Errorf("ParseLSN(%q) = %#x, want an error", tc.text, got)
		}
	}
}

// connect opens a session for the test's life.
func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// observe is Observe that fails the test on an error.
func observe(t *testing.T, e Engine) Observation {
	t.Helper()
	obs, err := e.Observe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return obs
}

// TestPostgreSQLPrimary: a primary is observed writable with a position that grows with a
// write; Fence ends a session with an open transaction, makes a new write fail as read-only,
// asks the server to step down (demote.signal) and, on a server that does not (no entrypoint of
// ours runs it), returns after stepDownWait with the read-only fence observed; Promote lifts it;
// the actions PostgreSQL lacks are ErrUnsupported. hack/postgres/entrypoint's tests cover the
// step down itself.
// TestPostgreSQLStopped: a refused connection (nothing listens) is ErrStopped; a server that
// takes the connection and never answers (frozen) is not.
func TestPostgreSQLStopped(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	silent := "postgres://u:p@" + l.Addr().String() + "/postgres?sslmode=disable&connect_timeout=1"
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "postgres://u:p@" + closed.Addr().String() + "/postgres?sslmode=disable"
	_ = closed.Close()
	t.Cleanup(func() { _ = l.Close() })
	if _, err := NewPostgreSQL("db-0", refused).Observe(context.Background()); !errors.Is(err, ErrStopped) {
		t.Fatalf("Observe with nothing listening: err = %v, want ErrStopped", err)
	}
	if _, err := NewPostgreSQL("db-0", silent).Observe(context.Background()); err == nil || errors.Is(err, ErrStopped) {
		t.Fatalf("Observe of a server that never answers: err = %v, want an error that is not ErrStopped", err)
	}
}

func TestPostgreSQLPrimary(t *testing.T) {
	dsn := operands.NewPostgreSQLHost(t).StartPrimary(t, operands.PostgreSQL{}).DSN
	pg := NewPostgreSQL("db-0", dsn)
	pg.stepDownWait = 500 * time.Millisecond
	ctx := context.Background()
	before := observe(t, pg)
	if before.Member != "db-0" || before.Role != RolePrimary || !before.Writable || before.Fenced || before.PositionText == "" {
		t.Fatalf("Observe = %+v, want db-0, a writable primary with a position", before)
	}
	writer := connect(t, dsn)
	if _, err := writer.Exec(ctx, "CREATE TABLE t (v int); INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	if after := observe(t, pg); after.Position <= before.Position {
		t.Fatalf("position %s after a write, want past %s", after.PositionText, before.PositionText)
	}

	// A transaction open across the fence is ended with its session.
	open, err := writer.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := open.Exec(ctx, "INSERT INTO t VALUES (2)"); err != nil {
		t.Fatal(err)
	}
	if err := pg.Fence(ctx); err != nil {
		t.Fatal(err)
	}
	if err := open.Commit(ctx); err == nil {
		t.Fatal("a transaction open across the fence committed")
	}
	expectReadOnly(t, dsn)
	var asked bool
	if err := connect(t, dsn).QueryRow(ctx, "SELECT (pg_stat_file('demote.signal', true)).size IS NOT NULL").Scan(&asked); err != nil || !asked {
		t.Fatalf("demote.signal in the data directory after Fence: %v (err %v), want it there", asked, err)
	}
	if fenced := observe(t, pg); !fenced.Fenced || fenced.Writable || fenced.Role != RolePrimary {
		t.Fatalf("Observe after Fence = %+v, want a fenced primary, not writable", fenced)
	}

	if err := pg.Promote(ctx); err != nil {
		t.Fatal(err)
	}
	if promoted := observe(t, pg); promoted.Fenced || !promoted.Writable {
		t.Fatalf("Observe after Promote = %+v, want writable again", promoted)
	}
	if _, err := connect(t, dsn).Exec(ctx, "INSERT INTO t VALUES (3)"); err != nil {
		t.Fatalf("a write after Promote: %v", err)
	}
	for name, err := range map[string]error{
		"TransferLeadership": pg.TransferLeadership(ctx, "db-1"),
		"AddMember":          pg.AddMember(ctx, "db-1", "postgres://db-1"),
		"RemoveMember":       pg.RemoveMember(ctx, "db-1"),
	} {
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: err = %v, want ErrUnsupported", name, err)
		}
	}
}

// expectReadOnly checks that a new session's write fails as read-only (SQLSTATE 25006).
func expectReadOnly(t *testing.T, dsn string) {
	t.Helper()
	_, err := connect(t, dsn).Exec(context.Background(), "INSERT INTO t VALUES (4)")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "25006" {
		t.Fatalf("a write after Fence: err = %v, want read_only_sql_transaction (25006)", err)
	}
}

// TestPostgreSQLReplica: a streaming replica is observed as a replica, not writable, at the
// primary's position once it has caught up; Promote makes it a writable primary.
func TestPostgreSQLReplica(t *testing.T) {
	h := operands.NewPostgreSQLHost(t)
	primaryServer := h.StartPrimary(t, operands.PostgreSQL{})
	primaryDSN := primaryServer.DSN
	ctx := context.Background()
	if _, err := connect(t, primaryDSN).Exec(ctx, "CREATE TABLE t (v int); INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	replicaDSN := h.StartReplica(t, primaryServer).DSN
	replica := NewPostgreSQL("db-1", replicaDSN)
	obs := observe(t, replica)
	if obs.Role != RoleReplica || obs.Writable || obs.Fenced || obs.PositionText == "" {
		t.Fatalf("Observe of the replica = %+v, want a replica with a position, not writable", obs)
	}
	if _, err := connect(t, primaryDSN).Exec(ctx, "INSERT INTO t VALUES (2)"); err != nil {
		t.Fatal(err)
	}
	primary := observe(t, NewPostgreSQL("db-0", primaryDSN))
	deadline := time.Now().Add(10 * time.Second)
	for obs = observe(t, replica); obs.Position < primary.Position; obs = observe(t, replica) {
		if time.Now().After(deadline) {
			t.Fatalf("the replica stays at %s, the primary is at %s", obs.PositionText, primary.PositionText)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := replica.Promote(ctx); err != nil {
		t.Fatal(err)
	}
	if obs = observe(t, replica); obs.Role != RolePrimary || !obs.Writable {
		t.Fatalf("Observe after Promote = %+v, want a writable primary", obs)
	}
	// The control file names the new timeline at once (pg_rewind reads it there).
	var checkpointed, current int
	if err := connect(t, replicaDSN).QueryRow(ctx, `SELECT timeline_id,
		('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int FROM pg_control_checkpoint()`).Scan(&checkpointed, &current); err != nil {
		t.Fatal(err)
	}
	if checkpointed != 2 || current != 2 {
		t.Fatalf("after Promote the checkpoint names timeline %d and the server writes on %d, want 2 and 2", checkpointed, current)
	}
}
