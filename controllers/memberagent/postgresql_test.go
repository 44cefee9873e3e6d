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
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// postgresBin holds the PostgreSQL 15 binaries of the Debian package.
const postgresBin = "/usr/lib/postgresql/15/bin"

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

// postgresAs is the identity the test's servers run as. initdb and postgres refuse to run as
// root, and the tests here run as root: as root, they run as the system's postgres user (the
// Debian package's, through the exec's credentials; no su or setpriv is needed), in a data
// directory made for it outside the test's 0700 temporary directory. Otherwise they run as the
// test's own user. Without a postgres user, root skips.
func postgresAs(t *testing.T) (*syscall.Credential, string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(postgresBin, "initdb")); err != nil {
		t.Skipf("PostgreSQL 15 is not installed in %s: %v", postgresBin, err)
	}
	if os.Geteuid() != 0 {
		return nil, t.TempDir()
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Skipf("running as root, and there is no postgres user to run PostgreSQL as: %v", err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	dir, err := os.MkdirTemp("", "memberagent-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chown(dir, int(uid), int(gid)); err != nil {
		t.Fatal(err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, dir
}

// pgHost runs the test's PostgreSQL servers as one identity in one directory, logging into log.
type pgHost struct {
	cred *syscall.Credential
	dir  string
	log  bytes.Buffer
}

// newPGHost is the test's pgHost; it prints the servers' log if the test fails.
func newPGHost(t *testing.T) *pgHost {
	t.Helper()
	cred, dir := postgresAs(t)
	h := &pgHost{cred: cred, dir: dir}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("PostgreSQL's log:\n%s", h.log.String())
		}
	})
	return h
}

// command is the PostgreSQL program name with args, run as the host's identity.
func (h *pgHost) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(postgresBin, name), args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: h.cred}
	cmd.Stdout, cmd.Stderr = &h.log, &h.log
	return cmd
}

// startPostgres runs a PostgreSQL 15 primary on a free port of 127.0.0.1 for the test's life
// and returns its DSN (user postgres, trust authentication, replication allowed from
// 127.0.0.1 as initdb's pg_hba.conf does). It is stopped and its data removed when the test
// ends, failed or not.
func startPostgres(t *testing.T, h *pgHost) string {
	t.Helper()
	data := filepath.Join(h.dir, "primary")
	if err := h.command("initdb", "--pgdata="+data, "--username=postgres", "--auth=trust", "--no-sync",
		"--encoding=UTF8", "--locale=C").Run(); err != nil {
		t.Fatalf("initdb: %v", err)
	}
	return h.start(t, data)
}

// startReplica copies the primary of dsn (pg_basebackup, writing the standby's settings) and
// runs the copy as a streaming replica; it returns the replica's DSN.
func startReplica(t *testing.T, h *pgHost, primary string) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(primary)
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(h.dir, "replica")
	if err := h.command("pg_basebackup", "--pgdata="+data, "--host=127.0.0.1", "--port="+strconv.Itoa(int(cfg.Port)),
		"--username=postgres", "--write-recovery-conf", "--wal-method=stream", "--no-sync").Run(); err != nil {
		t.Fatalf("pg_basebackup: %v", err)
	}
	return h.start(t, data)
}

// start runs the server of data on a free port until the test ends and returns its DSN.
func (h *pgHost) start(t *testing.T, data string) string {
	t.Helper()
	port := freePort(t)
	server := h.command("postgres", "-D", data, "-c", "listen_addresses=127.0.0.1", "-c", "port="+strconv.Itoa(port),
		"-c", "unix_socket_directories="+h.dir, "-c", "fsync=off")
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// SIGINT is the fast shutdown: sessions are ended, the server stops at once.
		_ = server.Process.Signal(os.Interrupt)
		stopped := make(chan struct{})
		go func() { _ = server.Wait(); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(10 * time.Second):
			_ = server.Process.Kill()
			<-stopped
		}
	})
	dsn := fmt.Sprintf("host=127.0.0.1 port=%d user=postgres dbname=postgres sslmode=disable", port)
	waitPostgres(t, dsn)
	return dsn
}

// waitPostgres waits up to 30 seconds for the server of dsn to take connections.
func waitPostgres(t *testing.T, dsn string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := pgx.Connect(context.Background(), dsn)
		if err == nil {
			_ = conn.Close(context.Background())
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("PostgreSQL takes no connections after 30s: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
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
// write; Fence ends a session with an open transaction, makes a new write fail as read-only
// and is observed; Promote lifts it; the actions PostgreSQL lacks are ErrUnsupported.
func TestPostgreSQLPrimary(t *testing.T) {
	dsn := startPostgres(t, newPGHost(t))
	pg := NewPostgreSQL("db-0", dsn)
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
	h := newPGHost(t)
	primaryDSN := startPostgres(t, h)
	ctx := context.Background()
	if _, err := connect(t, primaryDSN).Exec(ctx, "CREATE TABLE t (v int); INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	replica := NewPostgreSQL("db-1", startReplica(t, h, primaryDSN))
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
}
