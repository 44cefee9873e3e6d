package operands

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seed1b407122/database-operator/test/harness/proc"
)

// PostgreSQLBin holds the PostgreSQL 15 binaries of the Debian package.
const PostgreSQLBin = "/usr/lib/postgresql/15/bin"

// PostgreSQLHost runs a test's PostgreSQL 15 servers (a primary and its replicas) as one identity
// in one directory.
type PostgreSQLHost struct {
	cred *syscall.Credential
	dir  string
	// servers counts the servers made, naming the next one's files.
	servers int
}

// PostgreSQL is how StartPrimary makes a primary.
type PostgreSQL struct {
	// Password is the user postgres's, then required of every connection (scram-sha-256);
	// without one, every connection is trusted (replication included).
	Password string
	// CertPEM and KeyPEM, when set, are the pair the server serves TLS with (ssl=on).
	CertPEM, KeyPEM []byte
}

// PostgreSQLServer is a server that a PostgreSQLHost runs.
type PostgreSQLServer struct {
	// Address is its host:port on 127.0.0.1.
	Address string
	// DSN is the test's own connection: the user postgres with its password, the database
	// postgres, over TLS unverified (sslmode=require) when the server serves TLS.
	DSN string
	// settings are the server's options beyond its address, which a replica of it takes too.
	settings []string
}

// NewPostgreSQLHost is the test's PostgreSQLHost. initdb and postgres refuse to run as root: as
// root, the servers run as the system's postgres user (the Debian package's, through the exec's
// credentials), in a directory made for it outside the test's 0700 temporary directory;
// otherwise as the test's own user. It skips the test without PostgreSQL 15 in PostgreSQLBin, or
// as root without a postgres user.
func NewPostgreSQLHost(t testing.TB) *PostgreSQLHost {
	t.Helper()
	if _, err := os.Stat(filepath.Join(PostgreSQLBin, "initdb")); err != nil {
		t.Skipf("PostgreSQL 15 is not installed in %s: %v", PostgreSQLBin, err)
	}
	h := &PostgreSQLHost{}
	if os.Geteuid() != 0 {
		h.dir = t.TempDir()
	} else {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Skipf("running as root, and there is no postgres user to run PostgreSQL as: %v", err)
		}
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		h.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if h.dir, err = os.MkdirTemp("", "operands-pg-"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.RemoveAll(h.dir) })
		if err := os.Chown(h.dir, int(uid), int(gid)); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// StartPrimary makes a new database as p says (initdb) and runs its server on a free port of
// 127.0.0.1 for the test's life, returning it once it takes connections. The server is stopped
// (the fast shutdown) and its data removed when the test ends, failed or not; a failed test prints
// its log.
func (h *PostgreSQLHost) StartPrimary(t testing.TB, p PostgreSQL) PostgreSQLServer {
	t.Helper()
	name := h.next()
	data := filepath.Join(h.dir, name)
	initdb := []string{"--pgdata=" + data, "--username=postgres", "--no-sync", "--encoding=UTF8", "--locale=C"}
	if p.Password == "" {
		initdb = append(initdb, "--auth=trust")
	} else {
		initdb = append(initdb, "--auth=scram-sha-256", "--pwfile="+h.writeFile(t, name+".password", []byte(p.Password)))
	}
	h.run(t, "initdb", initdb...)
	settings := []string{"unix_socket_directories=" + h.dir, "fsync=off"}
	if p.CertPEM != nil {
		settings = append(settings, "ssl=on", "ssl_cert_file="+h.writeFile(t, name+".crt", p.CertPEM),
			"ssl_key_file="+h.writeFile(t, name+".key", p.KeyPEM))
	}
	return h.start(t, data, settings, p.Password)
}

// StartReplica copies primary (pg_basebackup, writing the standby's settings) and runs the copy
// as its streaming replica, with primary's settings, as StartPrimary runs a primary.
func (h *PostgreSQLHost) StartReplica(t testing.TB, primary PostgreSQLServer) PostgreSQLServer {
	t.Helper()
	data := filepath.Join(h.dir, h.next())
	h.run(t, "pg_basebackup", "--pgdata="+data, "--dbname="+primary.DSN, "--write-recovery-conf", "--wal-method=stream", "--no-sync")
	primaryURL, err := url.Parse(primary.DSN)
	if err != nil {
		t.Fatal(err)
	}
	password, _ := primaryURL.User.Password()
	return h.start(t, data, primary.settings, password)
}

// start runs the server of data with settings on a free port until the test ends, and returns
// it once it takes connections.
func (h *PostgreSQLHost) start(t testing.TB, data string, settings []string, password string) PostgreSQLServer {
	t.Helper()
	port, err := proc.FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	s := PostgreSQLServer{Address: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), settings: settings}
	args := []string{"-D", data, "-c", "listen_addresses=127.0.0.1", "-c", "port=" + strconv.Itoa(port)}
	sslmode := "disable"
	for _, setting := range settings {
		args = append(args, "-c", setting)
		if setting == "ssl=on" {
			sslmode = "require"
		}
	}
	role := url.User("postgres")
	if password != "" {
		role = url.UserPassword("postgres", password)
	}
	s.DSN = (&url.URL{Scheme: "postgres", User: role, Host: s.Address, Path: "/postgres", RawQuery: "sslmode=" + sslmode}).String()
	// SIGINT is the fast shutdown: sessions are ended, the server stops at once.
	server := start(t, "postgres "+filepath.Base(data), filepath.Join(PostgreSQLBin, "postgres"), args, data+".log", syscall.SIGINT,
		proc.Options{Dir: h.dir, Credential: h.cred})
	waitReady(t, "PostgreSQL at "+s.Address, []*proc.Process{server}, func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, s.DSN)
		if err != nil {
			return err
		}
		return conn.Close(ctx)
	})
	return s
}

// next names the host's next server.
func (h *PostgreSQLHost) next() string {
	h.servers++
	return fmt.Sprintf("server%d", h.servers)
}

// run runs the PostgreSQL program name with args to its end as the host's identity; it fails the
// test, quoting the output, if the program fails.
func (h *PostgreSQLHost) run(t testing.TB, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(PostgreSQLBin, name), args...)
	cmd.Dir = h.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: h.cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
}

// writeFile writes data into the host's directory as name, readable by the servers alone (as
// PostgreSQL requires of a key), and returns its path.
func (h *PostgreSQLHost) writeFile(t testing.TB, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(h.dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if h.cred != nil {
		if err := os.Chown(path, int(h.cred.Uid), int(h.cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	return path
}
