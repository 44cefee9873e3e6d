package main

// The entrypoint against real PostgreSQL 15 servers on 127.0.0.1: the test binary is the
// entrypoint (TestMain runs start when helperEnv is set), run as the postgres user as the image
// runs as its own, with the paths of its test (helper, below).

import (
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	certutil "k8s.io/client-go/util/cert"

	"github.com/seed1b407122/database-operator/test/harness/operands"
	"github.com/seed1b407122/database-operator/test/harness/proc"
)

const (
	// helperEnv names the test's directory to the test binary run as the entrypoint.
	helperEnv = "ENTRYPOINT_TEST_DIR"
	// password is the superuser's, with characters a password file and a URL must escape.
	password = `pa:ss w\rd/1`
	// superuser is the superuser's name, as operands' primary has it.
	superuser = "postgres"
	// readyTimeout bounds a member's wait for its announcement, its clone or rewind, and its start.
	readyTimeout = 90 * time.Second
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperEnv); dir != "" {
		os.Exit(helper(dir))
	}
	os.Exit(m.Run())
}

// helper is the entrypoint as a test starts it: the credentials and CA under dir, its password
// files in dir/tmp, quick polling.
func helper(dir string) int {
	serveAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	err := start(config{
		pgdata:         os.Getenv("PGDATA"),
		roleDir:        os.Getenv("DATABASE_ROLE_DIR"),
		credentialsDir: filepath.Join(dir, "credentials"),
		caFile:         filepath.Join(dir, "ca.crt"),
		tmpDir:         os.Getenv("TMPDIR"),
		poll:           100 * time.Millisecond,
		retry:          500 * time.Millisecond,
		demotePoll:     50 * time.Millisecond,
		now:            time.Now,
	}, os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "entrypoint: %v\n", err)
		return 1
	}
	return 0
}

// host runs a test's members as the postgres user (as root) in one directory.
type host struct {
	dir  string
	cred *syscall.Credential
	// exe is the test binary, copied where that user may run it.
	exe string
}

// member is one member: its data directory, announcement and password files, and its server.
type member struct {
	name                    string
	pgdata, roleDir, tmpDir string
	port                    int
	dsn                     string
	p                       *proc.Process
}

// newHost skips the test without PostgreSQL 15, or as root without a postgres user to run it as.
// (operands.PostgreSQLHost does the same for its own servers, and keeps its directory and identity
// to itself.)
func newHost(t *testing.T) *host {
	t.Helper()
	if _, err := os.Stat(filepath.Join(operands.PostgreSQLBin, "pg_rewind")); err != nil {
		t.Skipf("PostgreSQL 15 is not installed in %s: %v", operands.PostgreSQLBin, err)
	}
	h := &host{}
	dir, err := os.MkdirTemp("", "entrypoint-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	h.dir = dir
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Skipf("running as root, and there is no postgres user to run PostgreSQL as: %v", err)
		}
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		h.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	h.mkdir(t, dir)
	h.mkdir(t, filepath.Join(dir, "credentials"))
	h.write(t, filepath.Join(dir, "credentials", "username"), superuser+"\n")
	h.write(t, filepath.Join(dir, "credentials", "password"), password+"\n")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h.exe = filepath.Join(dir, "entrypoint.test")
	copyFile(t, self, h.exe)
	return h
}

// mkdir makes dir, the host's user's.
func (h *host) mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	h.chown(t, dir)
}

// write writes content at path, atomically, the host's user's.
func (h *host) write(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	h.chown(t, tmp)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func (h *host) chown(t *testing.T, path string) {
	t.Helper()
	if h.cred == nil {
		return
	}
	if err := os.Chown(path, int(h.cred.Uid), int(h.cred.Gid)); err != nil {
		t.Fatal(err)
	}
}

// member makes the directories of a member called name, its announcement empty.
func (h *host) member(t *testing.T, name string) *member {
	t.Helper()
	m := &member{name: name, pgdata: filepath.Join(h.dir, name, "pgdata"), roleDir: filepath.Join(h.dir, name, "role"),
		tmpDir: filepath.Join(h.dir, name, "tmp")}
	h.mkdir(t, filepath.Join(h.dir, name))
	h.mkdir(t, m.roleDir)
	h.mkdir(t, m.tmpDir)
	return m
}

// announce writes m's announcement: role, and for a replica its primary's host and port (the
// downward API writes an absent annotation as an empty file).
func (h *host) announce(t *testing.T, m *member, role, primaryHost string, primaryPort int) {
	t.Helper()
	port := ""
	if primaryPort != 0 {
		port = strconv.Itoa(primaryPort)
	}
	h.write(t, filepath.Join(m.roleDir, "primary-host"), primaryHost)
	h.write(t, filepath.Join(m.roleDir, "primary-port"), port)
	h.write(t, filepath.Join(m.roleDir, "role"), role)
}

// start runs m's entrypoint with the server on a free port of 127.0.0.1, until it is stopped or
// the test ends (then with SIGTERM, as the kubelet stops it).
func (h *host) start(t *testing.T, m *member) {
	t.Helper()
	port, err := proc.FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	m.port = port
	m.dsn = (&url.URL{Scheme: "postgres", User: url.UserPassword(superuser, password),
		Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Path: "/postgres", RawQuery: "sslmode=disable"}).String()
	// wal_keep_size: pg_rewind reads the old primary's WAL back to the last checkpoint before the
	// failover, which the shutdown's checkpoint would otherwise have recycled.
	args := []string{"postgres", "-c", "listen_addresses=127.0.0.1", "-c", "port=" + strconv.Itoa(port),
		"-c", "unix_socket_directories=" + filepath.Join(h.dir, m.name), "-c", "fsync=off", "-c", "wal_keep_size=64MB"}
	// HOME: libpq looks for a client certificate in ~/.postgresql, which must not be root's.
	env := []string{helperEnv + "=" + h.dir, "PGDATA=" + m.pgdata, "TMPDIR=" + m.tmpDir, "HOME=" + filepath.Join(h.dir, m.name),
		"PATH=" + operands.PostgreSQLBin + ":" + os.Getenv("PATH")}
	if m.roleDir != "" {
		env = append(env, "DATABASE_ROLE_DIR="+m.roleDir)
	}
	logPath := filepath.Join(h.dir, m.name+".log")
	p, err := proc.Start("entrypoint "+m.name, h.exe, args, proc.Options{LogPath: logPath, Append: true, Dir: h.dir, Env: env, Credential: h.cred})
	if err != nil {
		t.Fatal(err)
	}
	m.p = p
	t.Cleanup(func() {
		_ = p.Stop(syscall.SIGTERM)
		if t.Failed() {
			log, _ := os.ReadFile(logPath)
			t.Logf("%s's log:\n%s", m.name, log)
		}
	})
}

// waitReady returns once m's server takes connections.
func (m *member) waitReady(t *testing.T) {
	t.Helper()
	var last error
	err := proc.PollWhileRunning(context.Background(), m.name+" serving", []*proc.Process{m.p}, 200*time.Millisecond, readyTimeout,
		func(ctx context.Context) (bool, error) {
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			conn, err := pgx.Connect(ctx, m.dsn)
			if last = err; err != nil {
				return false, nil
			}
			return true, conn.Close(ctx)
		})
	if err != nil {
		t.Fatalf("%v (last error: %v)", err, last)
	}
}

// waitLog waits until m's log holds want, failing the test with failure (a format for the log)
// when it does not within readyTimeout or m's entrypoint exits first.
func (h *host) waitLog(t *testing.T, m *member, want, failure string) {
	t.Helper()
	deadline := time.Now().Add(readyTimeout)
	for !strings.Contains(h.log(t, m), want) {
		if time.Now().After(deadline) || m.p.Exited() {
			t.Fatalf(failure, h.log(t, m))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop stops m as the kubelet does (SIGTERM, PostgreSQL's fast shutdown through the entrypoint),
// which must end it with status 0.
func (m *member) stop(t *testing.T) {
	t.Helper()
	if err := m.p.Stop(syscall.SIGTERM); err != nil || m.p.ExitCode() != 0 {
		t.Fatalf("stopping %s: %v (exit code %d)", m.name, err, m.p.ExitCode())
	}
}

// log is m's entrypoint's output so far.
func (h *host) log(t *testing.T, m *member) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(h.dir, m.name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// query runs sql on dsn and scans its one row into dest.
func query(t *testing.T, dsn, sql string, dest ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	if len(dest) == 0 {
		_, err = conn.Exec(ctx, sql)
	} else {
		err = conn.QueryRow(ctx, sql).Scan(dest...)
	}
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// rows is the sorted list of t's values on dsn.
func rows(t *testing.T, dsn string) string {
	t.Helper()
	var values string
	query(t, dsn, "SELECT coalesce(string_agg(v::text, ',' ORDER BY v), '') FROM t", &values)
	return values
}

// eventuallyRows waits until the replica at dsn holds want.
func eventuallyRows(t *testing.T, dsn, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for got := rows(t, dsn); got != want; got = rows(t, dsn) {
		if time.Now().After(deadline) {
			t.Fatalf("rows %q, want %q", got, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// standbyOf checks that the server of dsn is a standby whose primary_conninfo names host and
// port with the password file, and no password; without TLS settings beyond sslmode=prefer.
func standbyOf(t *testing.T, dsn, host string, port int) string {
	t.Helper()
	conninfo := standbyOfWith(t, dsn, host, port, "sslmode=prefer")
	if strings.Contains(conninfo, "sslrootcert") {
		t.Fatalf("primary_conninfo %q names a CA", conninfo)
	}
	return conninfo
}

// standbyOfWith is standbyOf with the TLS settings tls.
func standbyOfWith(t *testing.T, dsn, host string, port int, tls ...string) string {
	t.Helper()
	var inRecovery bool
	var conninfo string
	query(t, dsn, "SELECT pg_is_in_recovery(), current_setting('primary_conninfo')", &inRecovery, &conninfo)
	if !inRecovery {
		t.Fatalf("%s is not a standby", dsn)
	}
	for _, want := range append([]string{"host=" + connValue(host) + " ", "port=" + strconv.Itoa(port) + " ", "passfile="}, tls...) {
		if !strings.Contains(conninfo, want) {
			t.Fatalf("primary_conninfo %q holds no %q", conninfo, want)
		}
	}
	if strings.Contains(conninfo, "password=") {
		t.Fatalf("primary_conninfo %q holds the password", conninfo)
	}
	return conninfo
}

// portOf is the port of a host:port.
func portOf(t *testing.T, address string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(address)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return port
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = in.Close() }()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReplicaClonesPrimary: a member waits for its role; announced a replica of a primary (one
// operands starts, as the tests of the agents do), it clones it and streams from it, with no
// password left in a file of pg_basebackup's or in primary_conninfo; restarted with another host
// announced, its primary_conninfo follows.
func TestReplicaClonesPrimary(t *testing.T) {
	h := newHost(t)
	primary := operands.NewPostgreSQLHost(t).StartPrimary(t, operands.PostgreSQL{Password: password})
	query(t, primary.DSN, "CREATE TABLE t (v int); INSERT INTO t VALUES (1)")
	primaryPort := portOf(t, primary.Address)

	replica := h.member(t, "replica")
	h.start(t, replica)
	h.waitLog(t, replica, "waiting for the operator to announce", "the entrypoint did not say it waits for its role:\n%s")
	if _, err := os.Stat(replica.pgdata); !os.IsNotExist(err) {
		t.Fatalf("before its role, %s: %v; want none", replica.pgdata, err)
	}
	h.announce(t, replica, roleReplica, "127.0.0.1", primaryPort)
	replica.waitReady(t)
	query(t, primary.DSN, "INSERT INTO t VALUES (2)")
	eventuallyRows(t, replica.dsn, "1,2")
	standbyOf(t, replica.dsn, "127.0.0.1", primaryPort)
	if n := strings.Count(h.log(t, replica), "waiting for the operator to announce"); n != 1 {
		t.Fatalf("the wait for the role was logged %d times, want once", n)
	}
	// Only the server's password file is left, mode 0600.
	entries, err := os.ReadDir(replica.tmpDir)
	if err != nil || len(entries) != 1 || entries[0].Name() != replicationPassfile {
		t.Fatalf("%s holds %v (%v), want only %s", replica.tmpDir, entries, err, replicationPassfile)
	}
	if info, err := os.Stat(filepath.Join(replica.tmpDir, replicationPassfile)); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v, %v; want mode 0600", replicationPassfile, info, err)
	}

	// The primary's Service renamed: the standby's primary_conninfo follows at its next start.
	replica.stop(t)
	h.announce(t, replica, roleReplica, "localhost", primaryPort)
	h.start(t, replica)
	replica.waitReady(t)
	standbyOf(t, replica.dsn, "localhost", primaryPort)
	query(t, primary.DSN, "INSERT INTO t VALUES (3)")
	eventuallyRows(t, replica.dsn, "1,2,3")
	if strings.Count(h.log(t, replica), "pg_basebackup") != 1 {
		t.Fatalf("the standby was cloned again:\n%s", h.log(t, replica))
	}
}

// TestOldPrimaryRewound: a primary and its replica cloned by the entrypoint; the replica is
// promoted while the old primary still takes a write; the old primary, announced a replica of
// the new one, is rewound (its write undone) and follows it. Announced primary again before the
// operator promoted it, it stays a standby.
func TestOldPrimaryRewound(t *testing.T) {
	h := newHost(t)
	a, b := h.member(t, "a"), h.member(t, "b")
	h.announce(t, a, rolePrimary, "", 0)
	h.start(t, a)
	a.waitReady(t)
	var checksums string
	query(t, a.dsn, "SHOW data_checksums", &checksums)
	if checksums != "on" {
		t.Fatalf("data_checksums %s, want on (pg_rewind needs them)", checksums)
	}
	query(t, a.dsn, "CREATE TABLE t (v int); INSERT INTO t VALUES (1)")
	h.announce(t, b, roleReplica, "127.0.0.1", a.port)
	h.start(t, b)
	b.waitReady(t)
	eventuallyRows(t, b.dsn, "1")

	// The failover: b promoted (by the operator's agent, here by the test), a still written.
	var promoted bool
	query(t, b.dsn, "SELECT pg_promote()", &promoted)
	if !promoted {
		t.Fatal("pg_promote() returned false")
	}
	query(t, a.dsn, "INSERT INTO t VALUES (100)")
	query(t, b.dsn, "INSERT INTO t VALUES (2)")
	a.stop(t)

	h.announce(t, a, roleReplica, "127.0.0.1", b.port)
	h.start(t, a)
	a.waitReady(t)
	standbyOf(t, a.dsn, "127.0.0.1", b.port)
	eventuallyRows(t, a.dsn, "1,2")
	query(t, b.dsn, "INSERT INTO t VALUES (3)")
	eventuallyRows(t, a.dsn, "1,2,3")
	if log := h.log(t, a); !strings.Contains(log, "rewinding it to follow") || strings.Contains(log, "moved aside") {
		t.Fatalf("a was not rewound, or was moved aside:\n%s", log)
	}
	if left, _ := filepath.Glob(a.pgdata + ".*"); len(left) != 0 {
		t.Fatalf("beside PGDATA: %v, want nothing", left)
	}

	// Announced primary before it is promoted: it stays b's standby.
	a.stop(t)
	h.announce(t, a, rolePrimary, "", 0)
	h.start(t, a)
	a.waitReady(t)
	standbyOf(t, a.dsn, "127.0.0.1", b.port)
	query(t, b.dsn, "INSERT INTO t VALUES (4)")
	eventuallyRows(t, a.dsn, "1,2,3,4")
}

// TestUnrewindableMovedAside: a database of another cluster, announced a replica, cannot be
// rewound: it is moved aside, whole, and the member is cloned.
func TestUnrewindableMovedAside(t *testing.T) {
	h := newHost(t)
	a, c := h.member(t, "a"), h.member(t, "c")
	h.announce(t, a, rolePrimary, "", 0)
	h.announce(t, c, rolePrimary, "", 0)
	h.start(t, a)
	h.start(t, c)
	a.waitReady(t)
	c.waitReady(t)
	query(t, a.dsn, "CREATE TABLE t (v int); INSERT INTO t VALUES (1)")
	query(t, c.dsn, "CREATE TABLE kept (v int)")
	c.stop(t)

	h.announce(t, c, roleReplica, "127.0.0.1", a.port)
	h.start(t, c)
	c.waitReady(t)
	standbyOf(t, c.dsn, "127.0.0.1", a.port)
	eventuallyRows(t, c.dsn, "1")
	aside, _ := filepath.Glob(c.pgdata + ".failed-*")
	if len(aside) != 1 {
		t.Fatalf("beside PGDATA: %v, want one directory moved aside", aside)
	}
	if _, err := os.Stat(filepath.Join(aside[0], "PG_VERSION")); err != nil {
		t.Fatalf("the directory moved aside holds no database: %v", err)
	}
	if log := h.log(t, c); !strings.Contains(log, "moved aside to "+aside[0]) {
		t.Fatalf("the entrypoint did not say where it moved the database:\n%s", log)
	}
	if _, err := os.Stat(c.pgdata + ".rewinding"); !os.IsNotExist(err) {
		t.Fatalf("the rewind's mark is left: %v", err)
	}
}

// TestWithoutRoleDir: without DATABASE_ROLE_DIR, the entrypoint initializes PGDATA on the first
// start (with data checksums) and serves it, and serves it as it is on the next.
func TestWithoutRoleDir(t *testing.T) {
	h := newHost(t)
	m := h.member(t, "m")
	m.roleDir = ""
	h.start(t, m)
	m.waitReady(t)
	query(t, m.dsn, "CREATE TABLE t (v int); INSERT INTO t VALUES (1)")
	m.stop(t)
	h.start(t, m)
	m.waitReady(t)
	if got := rows(t, m.dsn); got != "1" {
		t.Fatalf("rows %q after a restart, want 1", got)
	}
	var inRecovery bool
	query(t, m.dsn, "SELECT pg_is_in_recovery()", &inRecovery)
	if log := h.log(t, m); inRecovery || strings.Count(log, "initdb as "+superuser) != 1 || strings.Contains(log, "announce") {
		t.Fatalf("in recovery %t; want one initdb and no announcement:\n%s", inRecovery, log)
	}
}

// TestReplicaVerifiesPrimary: with the CA of spec.tls mounted, a replica clones and streams from
// its primary over TLS, verifying the primary's name (sslmode=verify-full); against another CA it
// clones nothing.
func TestReplicaVerifiesPrimary(t *testing.T) {
	// A serving certificate for localhost, and the CA that signed it after it.
	chain, key, err := certutil.GenerateSelfSignedCertKey("localhost", nil, []string{"localhost"})
	if err != nil {
		t.Fatal(err)
	}
	leaf, rest := pem.Decode(chain)
	ca, _ := pem.Decode(rest)
	if leaf == nil || ca == nil {
		t.Fatalf("GenerateSelfSignedCertKey returned no certificate and CA:\n%s", chain)
	}
	primary := operands.NewPostgreSQLHost(t).StartPrimary(t, operands.PostgreSQL{Password: password, CertPEM: chain, KeyPEM: key})
	query(t, primary.DSN, "CREATE TABLE t (v int); INSERT INTO t VALUES (1)")
	primaryPort := portOf(t, primary.Address)

	h := newHost(t)
	caFile := filepath.Join(h.dir, "ca.crt")
	h.write(t, caFile, string(pem.EncodeToMemory(ca)))
	replica := h.member(t, "replica")
	h.announce(t, replica, roleReplica, "localhost", primaryPort)
	h.start(t, replica)
	replica.waitReady(t)
	eventuallyRows(t, replica.dsn, "1")
	standbyOfWith(t, replica.dsn, "localhost", primaryPort, "sslmode='verify-full'", "sslrootcert="+connValue(caFile))
	var streamsOverTLS bool
	query(t, primary.DSN, "SELECT bool_and(ssl) AND count(*) = 1 FROM pg_stat_replication JOIN pg_stat_ssl USING (pid)", &streamsOverTLS)
	if !streamsOverTLS {
		t.Fatal("the replica does not stream over TLS")
	}

	// Another CA: the primary's certificate is refused, and nothing is cloned.
	other, _, err := certutil.GenerateSelfSignedCertKey("localhost", nil, []string{"localhost"})
	if err != nil {
		t.Fatal(err)
	}
	_, rest = pem.Decode(other)
	otherCA, _ := pem.Decode(rest)
	h2 := newHost(t)
	h2.write(t, filepath.Join(h2.dir, "ca.crt"), string(pem.EncodeToMemory(otherCA)))
	stranger := h2.member(t, "stranger")
	h2.announce(t, stranger, roleReplica, "localhost", primaryPort)
	h2.start(t, stranger)
	h2.waitLog(t, stranger, "certificate verify failed", "the primary's certificate was not refused:\n%s")
	for _, dir := range []string{stranger.pgdata, stranger.pgdata + ".init"} {
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Fatalf("%s holds %d files after a refused clone", dir, len(entries))
		}
	}
}

// TestPrimaryAnnouncedWhileWaiting: a primary's database whose container starts announced a
// replica (promoted after its pod was created, restarted before the announcement followed)
// waits for a primary that does not answer; announced the primary meanwhile, it starts as the
// primary with its data, neither rewound nor cloned.
func TestPrimaryAnnouncedWhileWaiting(t *testing.T) {
	h := newHost(t)
	a := h.member(t, "a")
	h.announce(t, a, rolePrimary, "", 0)
	h.start(t, a)
	a.waitReady(t)
	query(t, a.dsn, "CREATE TABLE t (v int); INSERT INTO t VALUES (1)")
	a.stop(t)

	nobody, err := proc.FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	h.announce(t, a, roleReplica, "127.0.0.1", nobody)
	h.start(t, a)
	h.waitLog(t, a, "waiting for the primary", "the entrypoint did not wait for the primary:\n%s")
	h.announce(t, a, rolePrimary, "127.0.0.1", nobody)
	a.waitReady(t)
	var inRecovery bool
	query(t, a.dsn, "SELECT pg_is_in_recovery()", &inRecovery)
	if inRecovery {
		t.Fatal("announced the primary, it started as a standby")
	}
	if got := rows(t, a.dsn); got != "1" {
		t.Fatalf("rows %q, want 1", got)
	}
	log := h.log(t, a)
	if !strings.Contains(log, "announced the primary while it waited for one") || strings.Contains(log, "rewinding") ||
		strings.Contains(log, "cloning") {
		t.Fatalf("the wait did not end as the primary, or the database was rewound or cloned:\n%s", log)
	}
}
