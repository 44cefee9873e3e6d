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

package agentcmd

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/seed1b407122/database-operator/controllers/internal/certs"
	"github.com/seed1b407122/database-operator/controllers/memberagent"
	"github.com/seed1b407122/database-operator/controllers/storageagent"
	"github.com/seed1b407122/database-operator/test/harness/operands"
)

// memberDNSName is the name in the test member's serving certificates (the agent's and etcd's).
const memberDNSName = "db-0.db-headless.ns.svc"

// authority is a cluster's CA with the member's serving pair and the operator's client pair.
type authority struct {
	ca, serving, client certs.Pair
}

// newAuthority issues a CA named name, a serving certificate for memberDNSName and the
// operator's client certificate.
func newAuthority(t *testing.T, name string) authority {
	t.Helper()
	now := time.Now()
	ca, err := certs.NewCA(name, now)
	if err != nil {
		t.Fatal(err)
	}
	serving, err := certs.NewServing(ca, []string{memberDNSName}, now)
	if err != nil {
		t.Fatal(err)
	}
	client, err := memberagent.NewClientCertificate(ca, memberagent.OperatorClientName, now, memberagent.ClientValidity)
	if err != nil {
		t.Fatal(err)
	}
	return authority{ca: ca, serving: serving, client: client}
}

// writeTLSDir writes the member agent's files of a (ca.crt, tls.crt, tls.key) into a new
// directory, as the kubelet mounts the Secret, and returns it.
func writeTLSDir(t *testing.T, a authority) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range certs.ServingSecretData(a.serving, a.ca.CertPEM) {
		writeFile(t, filepath.Join(dir, name), string(data))
	}
	return dir
}

// writeFile writes data to path.
func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// freeAddress is an address of 127.0.0.1 whose port was free a moment ago.
func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

// startEtcd runs a one-member etcd named db-0 for the test's life and returns its client URL.
// With an authority it serves its clients over https with the authority's serving pair.
func startEtcd(t *testing.T, a *authority) string {
	t.Helper()
	var tlsConfig *operands.EtcdTLS
	if a != nil {
		tlsConfig = &operands.EtcdTLS{CAPEM: a.ca.CertPEM, CertPEM: a.serving.CertPEM, KeyPEM: a.serving.KeyPEM, ServerName: memberDNSName}
	}
	return operands.StartEtcd(t, tlsConfig, "db-0")[0]
}

// command is a run of the agent command in the test.
type command struct {
	stop   context.CancelFunc
	done   chan int
	stderr *bytes.Buffer
}

// start runs the command with args until stop.
func start(t *testing.T, args ...string) *command {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	c := &command{stop: stop, done: make(chan int, 1), stderr: &bytes.Buffer{}}
	go func() { c.done <- run(ctx, args, c.stderr) }()
	t.Cleanup(stop)
	return c
}

// stopWithin stops the command and checks that it returns 0, silent, within two seconds and
// leaves the addresses free.
func (c *command) stopWithin(t *testing.T, addresses ...string) {
	t.Helper()
	c.stop()
	select {
	case code := <-c.done:
		if code != 0 || c.stderr.Len() > 0 {
			t.Fatalf("the command stopped with %d: %q, want 0 and nothing said", code, c.stderr.String())
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the command did not return within 2s of its stop")
	}
	for _, address := range addresses {
		l, err := net.Listen("tcp", address)
		if err != nil {
			t.Fatalf("%s is still taken after the stop: %v", address, err)
		}
		_ = l.Close()
	}
}

// observe asks the agent at address through client until it answers, up to 10 seconds, and
// fails the test if the command stops meanwhile.
func observe(t *testing.T, cmd *command, client *memberagent.Client, address string) memberagent.Observation {
	t.Helper()
	agent := memberagent.Agent{Address: address, ServerName: memberDNSName}
	deadline := time.Now().Add(10 * time.Second)
	for {
		obs, err := client.Observe(context.Background(), agent)
		if err == nil {
			return obs
		}
		select {
		case code := <-cmd.done:
			t.Fatalf("the command stopped with %d: %s", code, cmd.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent at %s does not answer after 10s: %v", address, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// newClient is the operator's client with the pair client, trusting caPEM.
func newClient(t *testing.T, caPEM []byte, client certs.Pair) *memberagent.Client {
	t.Helper()
	c, err := memberagent.NewClient(caPEM, client.CertPEM, client.KeyPEM, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCommandLine: a command line that runs nothing, half an agent, or sets what would be
// ignored is refused with exit 2 and one line that says why; files that do not make the agent
// are exit 1, also on one line.
func TestCommandLine(t *testing.T) {
	a := newAuthority(t, "db-ca")
	tlsDir := writeTLSDir(t, a)
	member := func(engine string, extra ...string) []string {
		return append([]string{"--engine=" + engine, "--member-listen=127.0.0.1:0", "--member-tls-dir=" + tlsDir,
			"--member-name=db-0"}, extra...)
	}
	cases := []struct {
		name string
		args []string
		code int
		says string
	}{
		{"nothing", nil, 2, "nothing to run"},
		{"path alone", []string{"--path=/data"}, 2, "--path and --listen go together"},
		{"listen alone", []string{"--listen=:9190"}, 2, "--path and --listen go together"},
		{"unknown flag", []string{"--bogus"}, 2, "flag provided but not defined: -bogus"},
		{"argument", []string{"--path=/data", "--listen=:9190", "extra"}, 2, `unexpected argument "extra"`},
		{"member flag without engine", []string{"--path=/data", "--listen=:9190", "--member-name=db-0"}, 2,
			"--member-name is the member agent's: give --engine too"},
		{"database flag without engine", []string{"--path=/data", "--listen=:9190", "--database-url=http://x:1"}, 2,
			"--database-url is the member agent's"},
		{"unknown engine", member("mysql"), 2, `--engine "mysql" is not etcd or postgresql`},
		{"engine without tls dir", []string{"--engine=etcd", "--member-listen=:9191", "--member-name=db-0"}, 2,
			"--engine needs --member-listen, --member-tls-dir and --member-name"},
		{"engine without name", []string{"--engine=etcd", "--member-listen=:9191", "--member-tls-dir=" + tlsDir}, 2,
			"--engine needs"},
		{"member listen without port", append(member("etcd"), "--member-listen=9191"), 2, `--member-listen "9191" is not host:port`},
		{"one address for both", append(member("etcd"), "--path=/data", "--listen=:9191", "--member-listen=:9191"), 2,
			"--member-listen and --listen are the same address"},
		{"health listen without engine", []string{"--path=/data", "--listen=:9190", "--member-health-listen=:9192"}, 2,
			"--member-health-listen is the member agent's: give --engine too"},
		{"health listen without port", member("etcd", "--member-health-listen=9192"), 2, `--member-health-listen "9192" is not host:port`},
		{"health listen on the member agent's address", member("etcd", "--member-listen=:9191", "--member-health-listen=:9191"), 2,
			"--member-health-listen is the address of another agent"},
		{"etcd without scheme", member("etcd", "--database-url=127.0.0.1:2379"), 2, "is not etcd's http:// or https:// client URL"},
		{"etcd with credentials", member("etcd", "--database-credentials=/creds"), 2, "--database-credentials is PostgreSQL's"},
		{"etcd CA over http", member("etcd", "--database-ca=/ca.crt"), 2, "need an https:// --database-url"},
		{"etcd name over http", member("etcd", "--database-server-name=db-0"), 2, "need an https:// --database-url"},
		{"postgresql URL", member("postgresql", "--database-url=postgres://u:p@127.0.0.1:5432/db"), 2, "is not PostgreSQL's host:port"},
		{"postgresql without host", member("postgresql", "--database-url=:5432"), 2, "is not PostgreSQL's host:port"},
		{"postgresql name without CA", member("postgresql", "--database-server-name=db-0"), 2,
			"--database-server-name needs --database-ca"},
		{"no certificates", append(member("etcd"), "--member-tls-dir="+t.TempDir()), 1, "the member agent: the certificates in"},
		{"no database CA", member("etcd", "--database-url=https://127.0.0.1:2379", "--database-ca=/no/ca.crt"), 1,
			"the member agent: the database's CA"},
		{"database CA not PEM", member("postgresql", "--database-ca="+filepath.Join(tlsDir, "tls.key")), 1, "holds no PEM certificate"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			code := run(context.Background(), tc.args, &stderr)
			said := stderr.String()
			if code != tc.code || !strings.Contains(said, tc.says) || strings.Count(said, "\n") != 1 ||
				!strings.HasPrefix(said, storageagent.Command+": ") {
				t.Fatalf("run(%q) = %d, %q; want %d and one line saying %q", tc.args, code, said, tc.code, tc.says)
			}
		})
	}
}

// TestHelp: -h prints the flags and is no error.
func TestHelp(t *testing.T) {
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"-h"}, &stderr); code != 0 || !strings.Contains(stderr.String(), "-database-credentials") {
		t.Fatalf("run(-h) = %d, %q; want 0 and the flags", code, stderr.String())
	}
}

// TestAddressTaken: an address that cannot be listened on is exit 1, and the agent that listened
// first lets its address go.
func TestAddressTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = taken.Close() }()
	storage := freeAddress(t)
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"--path=" + t.TempDir(), "--listen=" + storage, "--engine=etcd",
		"--member-listen=" + taken.Addr().String(), "--member-tls-dir=" + writeTLSDir(t, newAuthority(t, "db-ca")),
		"--member-name=db-0"}, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "the member agent: listen tcp") {
		t.Fatalf("run with a taken address = %d, %q; want 1 and the member agent's listen error", code, stderr.String())
	}
	l, err := net.Listen("tcp", storage)
	if err != nil {
		t.Fatalf("the storage agent's address is still taken: %v", err)
	}
	_ = l.Close()
}

// TestServeAll: a server that fails, or stops on its own, stops the others and is the error;
// servers stopped by the context are no error.
func TestServeAll(t *testing.T) {
	boom := errors.New("boom")
	cases := []struct {
		name   string
		first  error
		cancel bool
		want   string
	}{
		{"one fails", boom, false, "the failing: boom"},
		{"one stops on its own", nil, false, "the failing stopped"},
		{"stopped by the context", http.ErrServerClosed, true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			if tc.cancel {
				cancel()
			}
			defer cancel()
			othersStopped := make(chan struct{})
			servers := []server{
				{name: "failing", serve: func(ctx context.Context, _ net.Listener) error {
					<-time.After(10 * time.Millisecond)
					return tc.first
				}},
				{name: "waiting", serve: func(ctx context.Context, _ net.Listener) error {
					<-ctx.Done()
					close(othersStopped)
					return nil
				}},
			}
			returned := make(chan error, 1)
			go func() { returned <- serveAll(ctx, servers, make([]net.Listener, 2)) }()
			var err error
			select {
			case err = <-returned:
			case <-time.After(2 * time.Second):
				t.Fatal("serveAll did not return within 2s")
			}
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || err.Error() != tc.want) {
				t.Fatalf("serveAll = %v, want %q", err, tc.want)
			}
			select {
			case <-othersStopped:
			default:
				t.Fatal("serveAll returned before it stopped the other server")
			}
		})
	}
}

// TestPostgreSQLConnection: the connection string names the server, the database postgres and
// the user and password the credentials' files hold at each call, any characters in them; with
// a CA it verifies the server's certificate; without the files each call fails, but the
// actions PostgreSQL does not have are still told as unsupported.
func TestPostgreSQLConnection(t *testing.T) {
	creds, ca := t.TempDir(), filepath.Join(t.TempDir(), "ca.crt")
	writeFile(t, ca, string(newAuthority(t, "db-ca").ca.CertPEM))
	writeFile(t, filepath.Join(creds, "username"), "app\n")
	writeFile(t, filepath.Join(creds, "password"), "p@ss:w/rd 'x'?&\n")
	engine, err := config{engine: postgreSQLName, name: "db-0", databaseURL: "127.0.0.1:5433",
		databaseCA: ca, databaseCredentials: creds}.newEngine()
	if err != nil {
		t.Fatal(err)
	}
	conn := engine.(postgreSQL).conn
	parsed := parseDSN(t, conn)
	if parsed.Host != "127.0.0.1" || parsed.Port != 5433 || parsed.Database != "postgres" || parsed.User != "app" ||
		parsed.Password != "p@ss:w/rd 'x'?&" || parsed.TLSConfig == nil || parsed.TLSConfig.ServerName != "127.0.0.1" ||
		parsed.TLSConfig.RootCAs == nil {
		t.Fatalf("parsed = %s@%s:%d/%s password %q TLS %+v", parsed.User, parsed.Host, parsed.Port, parsed.Database,
			parsed.Password, parsed.TLSConfig)
	}
	writeFile(t, filepath.Join(creds, "password"), "rotated")
	if parsed := parseDSN(t, conn); parsed.Password != "rotated" {
		t.Fatalf("password after the rotation = %q, want rotated", parsed.Password)
	}
	if err := os.Remove(filepath.Join(creds, "username")); err != nil {
		t.Fatal(err)
	}
	if _, err := engine.Observe(context.Background()); err == nil || !strings.Contains(err.Error(), "the database's credentials") {
		t.Fatalf("Observe without the credentials: err = %v", err)
	}
	if err := engine.RemoveMember(context.Background(), "db-1"); !errors.Is(err, memberagent.ErrUnsupported) {
		t.Fatalf("RemoveMember without the credentials: err = %v, want ErrUnsupported", err)
	}
}

// TestPostgreSQLServerName: with a server name, the chain is verified and not the dialled
// address (sslmode=verify-ca); without a CA, TLS is tried and nothing verified.
func TestPostgreSQLServerName(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca.crt")
	writeFile(t, ca, string(newAuthority(t, "db-ca").ca.CertPEM))
	for _, tc := range []struct {
		config config
		want   string
	}{
		{config{databaseCA: ca, databaseServerName: memberDNSName}, "verify-ca"},
		{config{databaseCA: ca}, "verify-full"},
		{config{}, "prefer"},
	} {
		tc.config.engine, tc.config.databaseURL = postgreSQLName, "127.0.0.1:5432"
		engine, err := tc.config.newEngine()
		if err != nil {
			t.Fatal(err)
		}
		if got := engine.(postgreSQL).conn.sslmode; got != tc.want {
			t.Errorf("sslmode of %+v = %s, want %s", tc.config, got, tc.want)
		}
	}
}

// parseDSN is the driver's reading of conn's connection string.
func parseDSN(t *testing.T, conn postgreSQLConn) *pgconn.Config {
	t.Helper()
	dsn, err := conn.dsn()
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := pgconn.ParseConfig(dsn)
	if err != nil {
		t.Fatalf("ParseConfig(%q): %v", dsn, err)
	}
	return parsed
}

// TestMemberAgentOverEtcd: the member agent in front of a real etcd over https, verified with
// the cluster's CA for the member's name, answers the operator that the only member is the
// primary, refuses a client certified by another CA, and stops on the context's end, freeing
// its port.
func TestMemberAgentOverEtcd(t *testing.T) {
	a := newAuthority(t, "db-ca")
	etcd := startEtcd(t, &a)
	databaseCA := filepath.Join(t.TempDir(), "ca.crt")
	writeFile(t, databaseCA, string(a.ca.CertPEM))
	address := freeAddress(t)
	cmd := start(t, "--engine=etcd", "--member-listen="+address, "--member-tls-dir="+writeTLSDir(t, a),
		"--member-name=db-0", "--database-url="+etcd, "--database-ca="+databaseCA, "--database-server-name="+memberDNSName)
	obs := observe(t, cmd, newClient(t, a.ca.CertPEM, a.client), address)
	if obs.Role != memberagent.RolePrimary || obs.Member != "db-0" || !obs.Writable {
		t.Fatalf("Observe = %+v, want db-0, primary, writable", obs)
	}
	other := newAuthority(t, "other-ca")
	stranger := newClient(t, a.ca.CertPEM, other.client)
	if obs, err := stranger.Observe(context.Background(), memberagent.Agent{Address: address, ServerName: memberDNSName}); err == nil {
		t.Fatalf("a client certified by another CA was answered: %+v", obs)
	}
	cmd.stopWithin(t, address)

	// The name is what etcd's certificate is verified for: another name is refused, although
	// the certificate also carries the loopback address that the agent dials.
	address = freeAddress(t)
	cmd = start(t, "--engine=etcd", "--member-listen="+address, "--member-tls-dir="+writeTLSDir(t, a),
		"--member-name=db-0", "--database-url="+etcd, "--database-ca="+databaseCA, "--database-server-name=db-1.db-headless.ns.svc")
	operator := newClient(t, a.ca.CertPEM, a.client)
	agent := memberagent.Agent{Address: address, ServerName: memberDNSName}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := operator.Observe(context.Background(), agent)
		if err != nil && strings.Contains(err.Error(), "db-1.db-headless.ns.svc") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Observe through an agent that verifies etcd for another name: err = %v, want etcd's certificate refused", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.stopWithin(t, address)
}

// TestBothAgents: one command serves the storage agent and the member agent, and stops both.
func TestBothAgents(t *testing.T) {
	a := newAuthority(t, "db-ca")
	etcd := startEtcd(t, nil)
	storage, member := freeAddress(t), freeAddress(t)
	cmd := start(t, "--path="+t.TempDir(), "--listen="+storage, "--engine=etcd", "--member-listen="+member,
		"--member-tls-dir="+writeTLSDir(t, a), "--member-name=db-0", "--database-url="+etcd)
	if obs := observe(t, cmd, newClient(t, a.ca.CertPEM, a.client), member); obs.Role != memberagent.RolePrimary {
		t.Fatalf("Observe = %+v, want the primary", obs)
	}
	usage, err := storageagent.Read(context.Background(), &http.Client{Timeout: 5 * time.Second}, storage)
	if err != nil || usage.CapacityBytes <= 0 {
		t.Fatalf("the storage agent's usage = %+v, %v", usage, err)
	}
	cmd.stopWithin(t, storage, member)
}

// TestStorageAgentAlone: the storage agent runs as it did before the member agent, with
// --path and --listen alone.
func TestStorageAgentAlone(t *testing.T) {
	storage := freeAddress(t)
	cmd := start(t, "--path="+t.TempDir(), "--listen="+storage)
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := storageagent.Read(context.Background(), &http.Client{Timeout: time.Second}, storage)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the storage agent does not answer: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.stopWithin(t, storage)
}

// TestMemberAgentOverPostgreSQL: the member agent in front of a real PostgreSQL over TLS
// (verified with the cluster's CA) and a password reports the primary, and follows a rotation
// of the password from the next call on: the credentials' files are read at every connection.
func TestMemberAgentOverPostgreSQL(t *testing.T) {
	a := newAuthority(t, "db-ca")
	const password, rotated = "p@ss w'rd/1", "rotated:2"
	server := operands.NewPostgreSQLHost(t).StartPrimary(t,
		operands.PostgreSQL{Password: password, CertPEM: a.serving.CertPEM, KeyPEM: a.serving.KeyPEM})
	database := server.Address
	creds, databaseCA := t.TempDir(), filepath.Join(t.TempDir(), "ca.crt")
	writeFile(t, databaseCA, string(a.ca.CertPEM))
	writeFile(t, filepath.Join(creds, "username"), "postgres")
	writeFile(t, filepath.Join(creds, "password"), password+"\n")
	address, health := freeAddress(t), freeAddress(t)
	cmd := start(t, "--engine=postgresql", "--member-listen="+address, "--member-tls-dir="+writeTLSDir(t, a),
		"--member-name=db-0", "--database-url="+database, "--database-ca="+databaseCA,
		"--database-server-name="+memberDNSName, "--database-credentials="+creds, "--member-health-listen="+health)
	operator := newClient(t, a.ca.CertPEM, a.client)
	if obs := observe(t, cmd, operator, address); obs.Role != memberagent.RolePrimary || obs.Member != "db-0" || !obs.Writable {
		t.Fatalf("Observe = %+v, want db-0, primary, writable", obs)
	}
	// The readiness check, in plain HTTP: the database answers.
	resp, err := http.Get("http://" + health + memberagent.ReadyPath)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the readiness check: %s, want 200", resp.Status)
	}
	conn, err := pgx.Connect(context.Background(), server.DSN)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(context.Background(), "ALTER USER postgres PASSWORD '"+rotated+"'")
	_ = conn.Close(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	agent := memberagent.Agent{Address: address, ServerName: memberDNSName}
	if _, err := operator.Observe(context.Background(), agent); err == nil || !strings.Contains(err.Error(), "password") {
		t.Fatalf("Observe with the old password: err = %v, want the password refused", err)
	}
	writeFile(t, filepath.Join(creds, "password"), rotated)
	if obs, err := operator.Observe(context.Background(), agent); err != nil || obs.Role != memberagent.RolePrimary {
		t.Fatalf("Observe after the rotation = %+v, %v; want the primary", obs, err)
	}
	cmd.stopWithin(t, address)
}
