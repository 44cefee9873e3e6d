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

// Package agentcmd is the in-pod agent's command ("manager storage-agent ..."): one native
// sidecar that runs the storage agent (--path and --listen), the member agent (--engine), or
// both, until SIGTERM. It lives apart from both agents so that the storage agent, which the pure
// builders import for its Command, never depends on the member agent and its database drivers.
//
// The member agent's flags:
//
//   - --engine: etcd or postgresql.
//   - --member-listen (host:port), --member-tls-dir (ca.crt, tls.crt, tls.key, read again when
//     they change) and --member-name (the pod's name): required.
//   - --database-url: etcd's client URL, http:// or https:// (default http://127.0.0.1:2379);
//     PostgreSQL's host:port, never a URL, so that the credentials come from
//     --database-credentials alone (default 127.0.0.1:5432).
//   - --database-ca: the CA file that verifies the database's serving certificate: etcd over
//     https, PostgreSQL with sslmode=verify-full for the host it dials (without it PostgreSQL
//     is asked with sslmode=prefer, which encrypts without verifying, as suits a loopback
//     connection).
//   - --database-server-name: the name the certificate is verified for, since the agent dials
//     127.0.0.1. etcd verifies it. PostgreSQL's driver verifies no name but the host it dials,
//     so with it PostgreSQL is asked with sslmode=verify-ca: the certificate's chain to the CA,
//     not its name (every certificate that CA signs is one of the cluster's members).
//   - --database-credentials: PostgreSQL only, a directory with the files username and
//     password, read at every connection so that a rotated Secret is used at once.
//   - --member-wait-file: a file the agents wait for, non-empty, before they listen (etcd: the
//     member's announcement, which the operator writes on the pod once the member is in etcd's
//     member list, read through the downward API). The pod's startup probe on --member-listen
//     holds the database container back until then.
package agentcmd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/memberagent"
	"github.com/seed1b407122/database-operator/controllers/storageagent"
)

// The exit codes: a command line that cannot run is told from a server that failed.
const (
	exitFailed = 1
	exitUsage  = 2
)

// config is the command line.
type config struct {
	path, listen string

	// engine is a databasev1alpha1.Engine, the one the DatabaseCluster names.
	engine                           string
	memberListen, memberTLSDir, name string
	// healthListen is where the member agent serves the database's readiness (plain HTTP).
	healthListen string

	databaseURL, databaseCA, databaseServerName, databaseCredentials string

	// waitFile is the file that must be there, non-empty, before the agents listen.
	waitFile string

	// given holds the flags the command line named, to refuse those that would be ignored.
	given map[string]bool
}

// usageError is a command line that cannot run: exit 2, with its message on one line.
type usageError string

func (u usageError) Error() string { return string(u) }

// server is one agent, ready to serve on the address it names.
type server struct {
	// name is how messages call it: "storage agent", "member agent".
	name   string
	listen string
	serve  func(ctx context.Context, l net.Listener) error
}

// Main runs the agents that the command-line arguments following storageagent.Command ask for
// until SIGTERM or an interrupt, and returns the process's exit code: 0 after a signal, 1 when
// an agent failed (the kubelet restarts the sidecar), 2 for a command line that cannot run.
func Main(args []string, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return run(ctx, args, stderr)
}

// run is Main until ctx is done.
func run(ctx context.Context, args []string, stderr io.Writer) int {
	c, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return report(stderr, err)
	}
	servers, err := c.servers()
	if err != nil {
		return report(stderr, err)
	}
	if err := waitForFile(ctx, c.waitFile, stderr); err != nil {
		return report(stderr, err)
	}
	listeners, err := listenAll(servers)
	if err != nil {
		return report(stderr, err)
	}
	return report(stderr, serveAll(ctx, servers, listeners))
}

// waitPoll is how often the file of --member-wait-file is looked at.
const waitPoll = 250 * time.Millisecond

// waitForFile returns once path ("" for none) holds something, or with ctx's error.
func waitForFile(ctx context.Context, path string, stderr io.Writer) error {
	if path == "" {
		return nil
	}
	told := false
	for {
		if data, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(data))) > 0 {
			return nil
		}
		if !told {
			_, _ = fmt.Fprintf(stderr, "waiting for %s (the member's announcement) before listening\n", path)
			told = true
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", path, ctx.Err())
		case <-time.After(waitPoll):
		}
	}
}

// report writes err, if any, on one line and returns its exit code.
func report(stderr io.Writer, err error) int {
	if err == nil {
		return 0
	}
	_, _ = fmt.Fprintf(stderr, "%s: %v\n", storageagent.Command, err)
	var usage usageError
	if errors.As(err, &usage) {
		return exitUsage
	}
	return exitFailed
}

// parse reads and checks the command line, and sets the engine's default --database-url. -h
// prints the flags and returns flag.ErrHelp; every other error is a usageError.
func parse(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet(storageagent.Command, flag.ContinueOnError)
	// The flag package's own message would come before the usage; report writes it alone.
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.path, "path", "", "storage agent: the mount whose file system is measured")
	fs.StringVar(&c.listen, "listen", "", "storage agent: the address to serve "+storageagent.UsagePath+" on, host:port")
	fs.StringVar(&c.engine, "engine", "", "member agent: the database engine, "+etcdName+" or "+postgreSQLName)
	fs.StringVar(&c.memberListen, "member-listen", "", "member agent: the address to serve on over mutual TLS, host:port")
	fs.StringVar(&c.healthListen, "member-health-listen", "", "member agent: the address to serve the database's readiness ("+memberagent.ReadyPath+") on, in plain HTTP, host:port")
	fs.StringVar(&c.memberTLSDir, "member-tls-dir", "", "member agent: the directory of ca.crt, tls.crt and tls.key")
	fs.StringVar(&c.name, "member-name", "", "member agent: the member's name, the pod's")
	fs.StringVar(&c.waitFile, "member-wait-file", "", "member agent: a file that must be there, non-empty, before the agents listen")
	fs.StringVar(&c.databaseURL, "database-url", "", "member agent: etcd's client URL (default http://127.0.0.1:2379) or PostgreSQL's host:port (default 127.0.0.1:5432)")
	fs.StringVar(&c.databaseCA, "database-ca", "", "member agent: the CA file that verifies the database's certificate")
	fs.StringVar(&c.databaseServerName, "database-server-name", "", "member agent: the name the database's certificate is verified for (PostgreSQL: its chain alone, sslmode=verify-ca)")
	fs.StringVar(&c.databaseCredentials, "database-credentials", "", "member agent, PostgreSQL: the directory of the files username and password")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			_, _ = fmt.Fprintf(stderr, "Usage: manager %s [--path=DIR --listen=HOST:PORT] [--engine=%s|%s --member-listen=HOST:PORT ...]\n",
				storageagent.Command, etcdName, postgreSQLName)
			fs.PrintDefaults()
			return config{}, err
		}
		return config{}, usageError(err.Error())
	}
	if fs.NArg() > 0 {
		return config{}, usageError(fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	}
	c.given = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { c.given[f.Name] = true })
	if c.databaseURL == "" {
		c.databaseURL = defaultDatabaseURL[databasev1alpha1.Engine(c.engine)]
	}
	return c, c.validate()
}

// validate refuses a command line that runs no agent, half of one, or sets what would be ignored.
func (c config) validate() error {
	if (c.path == "") != (c.listen == "") {
		return usageError("--path and --listen go together: give both to run the storage agent, or neither")
	}
	if c.path == "" && c.engine == "" {
		return usageError("nothing to run: give --path and --listen (the storage agent), --engine (the member agent), or both")
	}
	if c.engine == "" {
		for _, name := range []string{"member-listen", "member-health-listen", "member-tls-dir", "member-name", "member-wait-file", "database-url",
			"database-ca", "database-server-name", "database-credentials"} {
			if c.given[name] {
				return usageError(fmt.Sprintf("--%s is the member agent's: give --engine too", name))
			}
		}
		return nil
	}
	return c.validateMember()
}

// validateMember checks the member agent's flags, then the engine's own.
func (c config) validateMember() error {
	switch {
	case c.memberListen == "" || c.memberTLSDir == "" || c.name == "":
		return usageError("--engine needs --member-listen, --member-tls-dir and --member-name")
	case !isHostPort(c.memberListen):
		return usageError(fmt.Sprintf("--member-listen %q is not host:port", c.memberListen))
	case c.memberListen == c.listen:
		return usageError("--member-listen and --listen are the same address")
	case c.healthListen != "" && !isHostPort(c.healthListen):
		return usageError(fmt.Sprintf("--member-health-listen %q is not host:port", c.healthListen))
	case c.healthListen != "" && (c.healthListen == c.memberListen || c.healthListen == c.listen):
		return usageError("--member-health-listen is the address of another agent")
	}
	switch databasev1alpha1.Engine(c.engine) {
	case databasev1alpha1.EngineEtcd:
		return c.validateEtcd()
	case databasev1alpha1.EnginePostgreSQL:
		return c.validatePostgreSQL()
	default:
		return usageError(fmt.Sprintf("--engine %q is not %s or %s", c.engine, etcdName, postgreSQLName))
	}
}

// isHostPort tells whether address is host:port with a port ("" host: every address).
func isHostPort(address string) bool {
	_, port, err := net.SplitHostPort(address)
	return err == nil && port != ""
}

// serveAll serves each server on its listener until ctx is done or one of them stops, which
// stops the others: a server that stops before ctx is done has failed, whatever it returned.
func serveAll(ctx context.Context, servers []server, listeners []net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopped := make(chan error, len(servers))
	for i, s := range servers {
		go func() { stopped <- s.stop(ctx, s.serve(ctx, listeners[i])) }()
	}
	var failure error
	for range servers {
		if err := <-stopped; failure == nil {
			failure = err
		}
		cancel()
	}
	return failure
}

// stop is what the return err of s's serve means, told while ctx is as it was when it returned.
func (s server) stop(ctx context.Context, err error) error {
	switch {
	case ctx.Err() == nil && err == nil:
		return fmt.Errorf("the %s stopped", s.name)
	case ctx.Err() == nil || err != nil && !errors.Is(err, http.ErrServerClosed):
		return fmt.Errorf("the %s: %w", s.name, err)
	default:
		return nil
	}
}

// listenAll opens the listener of each server, or none: on an error it closes those it opened.
func listenAll(servers []server) ([]net.Listener, error) {
	var listeners []net.Listener
	for _, s := range servers {
		l, err := net.Listen("tcp", s.listen)
		if err != nil {
			for _, opened := range listeners {
				_ = opened.Close()
			}
			return nil, fmt.Errorf("the %s: %w", s.name, err)
		}
		listeners = append(listeners, l)
	}
	return listeners, nil
}

// servers are the agents c runs, each ready to serve.
func (c config) servers() ([]server, error) {
	var servers []server
	if c.path != "" {
		path := c.path
		servers = append(servers, server{name: "storage agent", listen: c.listen,
			serve: func(ctx context.Context, l net.Listener) error {
				return storageagent.Serve(ctx, l, path, storageagent.Statfs)
			}})
	}
	if c.engine != "" {
		member, err := c.memberServers()
		if err != nil {
			return nil, err
		}
		servers = append(servers, member...)
	}
	return servers, nil
}

// memberServers are the member agent of c's engine, its certificates read once to check them,
// and with --member-health-listen the database's readiness check.
func (c config) memberServers() ([]server, error) {
	tlsConfig, err := memberagent.ServerTLSConfig(c.memberTLSDir)
	if err != nil {
		return nil, fmt.Errorf("the member agent: %w", err)
	}
	engine, err := c.newEngine()
	if err != nil {
		return nil, fmt.Errorf("the member agent: %w", err)
	}
	servers := []server{{name: "member agent", listen: c.memberListen,
		serve: func(ctx context.Context, l net.Listener) error {
			return memberagent.Serve(ctx, l, engine, tlsConfig)
		}}}
	if c.healthListen != "" {
		servers = append(servers, server{name: "readiness check", listen: c.healthListen,
			serve: func(ctx context.Context, l net.Listener) error {
				return memberagent.ServeReadiness(ctx, l, engine)
			}})
	}
	return servers, nil
}

// newEngine is the engine --engine names, for the database c describes.
func (c config) newEngine() (memberagent.Engine, error) {
	if databasev1alpha1.Engine(c.engine) == databasev1alpha1.EngineEtcd {
		return c.etcdEngine()
	}
	return c.postgreSQLEngine()
}

// defaultDatabaseURL is each engine's --database-url when none is given: the database's port in
// the pod, on the loopback address.
var defaultDatabaseURL = map[databasev1alpha1.Engine]string{
	databasev1alpha1.EngineEtcd:       "http://127.0.0.1:2379",
	databasev1alpha1.EnginePostgreSQL: "127.0.0.1:5432",
}

// The engines' names as --engine takes them, for messages.
const (
	etcdName       = string(databasev1alpha1.EngineEtcd)
	postgreSQLName = string(databasev1alpha1.EnginePostgreSQL)
)

// validateEtcd checks that --database-url is an http or https URL and that the TLS flags have
// an https URL to apply to.
func (c config) validateEtcd() error {
	u, err := url.Parse(c.databaseURL)
	switch {
	case err != nil || u.Host == "" || u.Scheme != "http" && u.Scheme != "https":
		return usageError(fmt.Sprintf("--database-url %q is not etcd's http:// or https:// client URL", c.databaseURL))
	case c.given["database-credentials"]:
		return usageError("--database-credentials is PostgreSQL's: etcd's agent uses no password")
	case u.Scheme == "http" && (c.databaseCA != "" || c.databaseServerName != ""):
		return usageError("--database-ca and --database-server-name need an https:// --database-url")
	}
	return nil
}

// validatePostgreSQL checks that --database-url is a host and a port.
func (c config) validatePostgreSQL() error {
	if host, _, err := net.SplitHostPort(c.databaseURL); err != nil || host == "" || !isHostPort(c.databaseURL) {
		return usageError(fmt.Sprintf("--database-url %q is not PostgreSQL's host:port", c.databaseURL))
	}
	if c.databaseServerName != "" && c.databaseCA == "" {
		return usageError("--database-server-name needs --database-ca, the CA that verifies the certificate")
	}
	return nil
}

// etcdEngine is the etcd engine at --database-url; over https it trusts --database-ca (the system's
// roots without it) for --database-server-name. The CA is read once: a renewed CA keeps its key
// (certs.RenewCA), so the certificates it signs still verify against the one read.
func (c config) etcdEngine() (memberagent.Engine, error) {
	if !strings.HasPrefix(c.databaseURL, "https://") {
		return memberagent.NewEtcd(c.databaseURL, nil), nil
	}
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.databaseServerName}
	if c.databaseCA != "" {
		pool, err := readCA(c.databaseCA)
		if err != nil {
			return nil, err
		}
		tlsConfig.RootCAs = pool
	}
	return memberagent.NewEtcd(c.databaseURL, tlsConfig), nil
}

// postgreSQLEngine is the PostgreSQL engine at --database-url. With --database-ca it verifies the
// server's certificate: for the address it dials (sslmode=verify-full), or, with
// --database-server-name, its chain alone (sslmode=verify-ca), since the driver verifies no
// name but the host it dials. The CA file is checked now and read at every connection.
func (c config) postgreSQLEngine() (memberagent.Engine, error) {
	conn := postgreSQLConn{hostPort: c.databaseURL, sslmode: "prefer", credentials: c.databaseCredentials}
	if c.databaseCA != "" {
		if _, err := readCA(c.databaseCA); err != nil {
			return nil, err
		}
		conn.sslmode, conn.rootCert = "verify-full", c.databaseCA
		if c.databaseServerName != "" {
			conn.sslmode = "verify-ca"
		}
	}
	return postgreSQL{member: c.name, conn: conn}, nil
}

// readCA is the pool of the certificates of the PEM file path.
func readCA(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("the database's CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("the database's CA %s holds no PEM certificate", path)
	}
	return pool, nil
}

// postgreSQLConn is how the agent connects to its PostgreSQL server.
type postgreSQLConn struct {
	hostPort string
	// sslmode is libpq's: prefer (encrypt if the server can, verify nothing), verify-ca or
	// verify-full, with the CA file rootCert.
	sslmode, rootCert string
	// credentials is the directory of the files username and password; without it the
	// driver's defaults apply (PGUSER, PGPASSWORD, the process's user).
	credentials string
}

// dsn is the URL of the database postgres on the server, as the user the credentials name now.
func (p postgreSQLConn) dsn() (string, error) {
	query := url.Values{"sslmode": {p.sslmode}}
	if p.rootCert != "" {
		query.Set("sslrootcert", p.rootCert)
	}
	u := url.URL{Scheme: "postgres", Host: p.hostPort, Path: "/postgres", RawQuery: query.Encode()}
	if p.credentials != "" {
		user, password, err := readCredentials(p.credentials)
		if err != nil {
			return "", err
		}
		u.User = url.UserPassword(user, password)
	}
	return u.String(), nil
}

// readCredentials reads the files username and password of dir, without the line end that a
// file written by hand often has.
func readCredentials(dir string) (user, password string, err error) {
	var values [2]string
	for i, name := range []string{"username", "password"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return "", "", fmt.Errorf("the database's credentials: %w", err)
		}
		values[i] = strings.TrimRight(string(data), "\r\n")
	}
	if values[0] == "" {
		return "", "", fmt.Errorf("the database's credentials: %s is empty", filepath.Join(dir, "username"))
	}
	return values[0], values[1], nil
}

// postgreSQL is memberagent's PostgreSQL engine, made again for each call with the credentials
// of that moment: the engine connects for each call anyway, so a rotated password is used from
// the next call on, without a restart.
type postgreSQL struct {
	member string
	conn   postgreSQLConn
}

var _ memberagent.Engine = postgreSQL{}

// engine is the engine with the credentials as they are now.
func (p postgreSQL) engine() (*memberagent.PostgreSQL, error) {
	dsn, err := p.conn.dsn()
	if err != nil {
		return nil, err
	}
	return memberagent.NewPostgreSQL(p.member, dsn), nil
}

// Observe is memberagent.PostgreSQL's Observe.
func (p postgreSQL) Observe(ctx context.Context) (memberagent.Observation, error) {
	e, err := p.engine()
	if err != nil {
		return memberagent.Observation{}, err
	}
	return e.Observe(ctx)
}

// Promote is memberagent.PostgreSQL's Promote.
func (p postgreSQL) Promote(ctx context.Context) error {
	e, err := p.engine()
	if err != nil {
		return err
	}
	return e.Promote(ctx)
}

// Fence is memberagent.PostgreSQL's Fence.
func (p postgreSQL) Fence(ctx context.Context) error {
	e, err := p.engine()
	if err != nil {
		return err
	}
	return e.Fence(ctx)
}

// TransferLeadership is memberagent.PostgreSQL's, which is unsupported. The unsupported actions
// connect to nothing, so they are answered without reading the credentials: a missing Secret
// does not hide from the operator that it must take another way.
func (p postgreSQL) TransferLeadership(ctx context.Context, to string) error {
	return memberagent.NewPostgreSQL(p.member, "").TransferLeadership(ctx, to)
}

// AddMember is memberagent.PostgreSQL's, which is unsupported.
func (p postgreSQL) AddMember(ctx context.Context, name, peerURL string) error {
	return memberagent.NewPostgreSQL(p.member, "").AddMember(ctx, name, peerURL)
}

// RemoveMember is memberagent.PostgreSQL's, which is unsupported.
func (p postgreSQL) RemoveMember(ctx context.Context, name string) error {
	return memberagent.NewPostgreSQL(p.member, "").RemoveMember(ctx, name)
}
