package main

// The role a member is announced (DATABASE_ROLE_DIR) and what the entrypoint makes of PGDATA for
// it before the server starts:
//
//   - primary: initdb when PGDATA holds no database, as without an announcement. A standby stays
//     one (standby.signal is left): the operator promotes through its agent, never the entrypoint.
//   - replica, PGDATA without a database: a clone of the primary (pg_basebackup --write-recovery-conf)
//     into PGDATA.init, renamed to PGDATA once complete, so an interrupted clone is started over.
//     It waits for the primary as long as it does not answer (its Service has no endpoint until
//     it is Ready) and tries again after a failed clone.
//   - replica, PGDATA with a database that is no standby (an old primary rejoining after a
//     failover): pg_rewind from the primary (the databases have data checksums: initdb -k), then
//     standby.signal. pg_rewind reads the old primary's WAL back to the last checkpoint before
//     the failover, which its next checkpoint (its shutdown's) recycles unless wal_keep_size keeps
//     it. When pg_rewind fails, or an earlier one was interrupted (PGDATA.rewinding is left),
//     PGDATA is moved aside to PGDATA.failed-<UTC time> and the member is cloned. The entrypoint
//     deletes no database, and neither does the operator: a directory moved aside stays on the
//     claim, taking its room, until a person removes it.
//   - replica, PGDATA with a standby: started as it is.
//
// A replica's primary_conninfo (postgresql.auto.conf) names the announced primary, with the TLS
// settings of its clone (sslmode=verify-full against the CA of spec.tls when it is mounted,
// otherwise prefer) and a password file instead of the password: the file pgpass-replication of
// the container's /tmp, mode 0600, written at every start of a standby, since the server reads it
// whenever it connects to its primary. pg_basebackup and pg_rewind read another one, removed once
// they end. The password is in no program's arguments or environment.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	rolePrimary = "primary"
	roleReplica = "replica"
	// defaultPrimaryPort is the primary's port when the announcement names none.
	defaultPrimaryPort = 5432
	// standbySignal in PGDATA makes the server a standby.
	standbySignal = "standby.signal"
	// autoConf is the settings file of PGDATA that ALTER SYSTEM and pg_basebackup -R write.
	autoConf = "postgresql.auto.conf"
	// replicationPassfile, in the container's /tmp, is the password file primary_conninfo names.
	replicationPassfile = "pgpass-replication"
	// pgReadyTimeout bounds one pg_isready, in seconds.
	pgReadyTimeout = "5"
)

// announcement is what the operator tells a member through DATABASE_ROLE_DIR.
type announcement struct {
	role string
	// host and port are the primary's, for a replica.
	host string
	port int
}

func (a announcement) String() string {
	if a.role == roleReplica {
		return fmt.Sprintf("%s of %s", a.role, address(a.host, a.port))
	}
	return a.role
}

// address is host:port for messages.
func address(host string, port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }

// readAnnouncement reads the files role, primary-host and primary-port of dir. It reports false
// while the announcement is not complete: no role yet, or a replica without its primary's host
// (the downward API writes an absent annotation as an empty file).
func readAnnouncement(dir string) (announcement, bool, error) {
	var a announcement
	role, err := readValue(dir, "role")
	if err != nil || role == "" {
		return a, false, err
	}
	switch role {
	case rolePrimary:
		return announcement{role: role}, true, nil
	case roleReplica:
	default:
		return a, false, fmt.Errorf("%s: unknown role %q (want %s or %s)", filepath.Join(dir, "role"), role, rolePrimary, roleReplica)
	}
	a, ok, err := readPrimaryAddress(dir)
	if err != nil || !ok {
		return announcement{}, false, err
	}
	a.role = role
	return a, true, nil
}

// readPrimaryAddress reads the announced primary's address, the files primary-host and
// primary-port of dir (every member is announced it); false without a host.
func readPrimaryAddress(dir string) (announcement, bool, error) {
	var a announcement
	host, err := readValue(dir, "primary-host")
	if err != nil || host == "" {
		return a, false, err
	}
	port := defaultPrimaryPort
	if v, err := readValue(dir, "primary-port"); err != nil {
		return a, false, err
	} else if v != "" {
		if port, err = strconv.Atoi(v); err != nil || port < 1 || port > 65535 {
			return a, false, fmt.Errorf("%s: %q is no port", filepath.Join(dir, "primary-port"), v)
		}
	}
	return announcement{host: host, port: port}, true, nil
}

// readValue is the file name of dir without surrounding white space; empty when it is absent.
func readValue(dir, name string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, name))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	return strings.TrimSpace(string(data)), err
}

// prepare makes PGDATA fit the member's role: without an announcement directory, initialize.
func prepare(c config) error {
	if c.roleDir == "" {
		return initialize(c)
	}
	// Until the server runs, SIGTERM and SIGINT end the wait, and a clone with it.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := prepareRole(ctx, c); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return errors.New("stopped before the server started")
	}
	// A standby (a replica, or a primary the operator has yet to promote) reads the password
	// file of its primary_conninfo whenever it connects, and the container's /tmp starts empty.
	if standby, err := exists(filepath.Join(c.pgdata, standbySignal)); err != nil || !standby {
		return err
	}
	return writeReplicationPassfile(c)
}

// writeReplicationPassfile writes the password file a standby's primary_conninfo names.
func writeReplicationPassfile(c config) error {
	user, password, err := credentials(c.credentialsDir)
	if err != nil {
		return err
	}
	return writePassfile(filepath.Join(c.tmpDir, replicationPassfile), user, password)
}

// prepareRole makes PGDATA fit the announced role. A member announced a replica that holds a
// primary's database and waits for the primary starts over when it is announced the primary
// meanwhile: it is the primary (promoted after its pod was created, its container restarted
// before the announcement followed), and would otherwise wait for itself.
func prepareRole(ctx context.Context, c config) error {
	for {
		a, err := awaitAnnouncement(ctx, c)
		if err != nil {
			return err
		}
		logf("announced role: %s", a)
		if a.role == rolePrimary {
			return initialize(c)
		}
		err = prepareReplica(ctx, c, a)
		if !errors.Is(err, errAnnouncedPrimary) {
			return err
		}
		logf("announced the primary while it waited for one")
	}
}

// errAnnouncedPrimary ends the wait for the primary of a member that holds a primary's database
// (no standby.signal) and is announced the primary meanwhile.
var errAnnouncedPrimary = errors.New("announced the primary")

// announcedPrimary tells whether PGDATA holds a primary's database and the announcement now
// names this member the primary.
func announcedPrimary(c config) bool {
	a, ok, err := readAnnouncement(c.roleDir)
	if err != nil || !ok || a.role != rolePrimary {
		return false
	}
	hasDatabase, err := exists(filepath.Join(c.pgdata, "PG_VERSION"))
	if err != nil || !hasDatabase {
		return false
	}
	standby, err := exists(filepath.Join(c.pgdata, standbySignal))
	return err == nil && !standby
}

// awaitAnnouncement polls the announcement until it is complete.
func awaitAnnouncement(ctx context.Context, c config) (announcement, error) {
	for logged := false; ; logged = true {
		a, ok, err := readAnnouncement(c.roleDir)
		if err != nil || ok {
			return a, err
		}
		if !logged {
			logf("waiting for the operator to announce this member's role in %s", c.roleDir)
		}
		if err := sleep(ctx, c.poll); err != nil {
			return a, err
		}
	}
}

// source is the announced primary as libpq reaches it.
type source struct {
	host, user string
	port       int
	// sslmode is verify-full with sslrootcert, the CA of spec.tls, when it is mounted; else prefer.
	sslmode, sslrootcert string
}

// replicaSource is the primary of a as this member's replication reaches it (the user of
// c.credentialsDir), with that user's password.
func replicaSource(c config, a announcement) (source, string, error) {
	user, password, err := credentials(c.credentialsDir)
	if err != nil {
		return source{}, "", err
	}
	src, err := newSource(a, user, c.caFile)
	return src, password, err
}

// newSource is the primary of a as user reaches it, verifying it against caFile if it exists.
func newSource(a announcement, user, caFile string) (source, error) {
	s := source{host: a.host, port: a.port, user: user, sslmode: "prefer"}
	ok, err := exists(caFile)
	if ok {
		s.sslmode, s.sslrootcert = "verify-full", caFile
	}
	return s, err
}

// conninfo is the libpq connection string to s that reads the password from passfile, with the
// keyword/value pairs of extra after it.
func (s source) conninfo(passfile string, extra ...string) string {
	pairs := []string{"host", s.host, "port", strconv.Itoa(s.port), "user", s.user, "passfile", passfile, "sslmode", s.sslmode}
	if s.sslrootcert != "" {
		pairs = append(pairs, "sslrootcert", s.sslrootcert)
	}
	pairs = append(pairs, extra...)
	parts := make([]string, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		parts = append(parts, pairs[i]+"="+connValue(pairs[i+1]))
	}
	return strings.Join(parts, " ")
}

// connValue quotes v for a libpq connection string as libpq's appendConnStrVal does: bare when
// it is only letters, digits, '_' and '.', else single-quoted with ' and \ escaped.
func connValue(v string) string {
	bare := v != ""
	for _, r := range v {
		if (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && r != '_' && r != '.' {
			bare = false
			break
		}
	}
	if bare {
		return v
	}
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}

// passfileLine is the line of a password file (PGPASSFILE) for user on every host, port and
// database, with ':' and '\' escaped.
func passfileLine(user, password string) string {
	escape := strings.NewReplacer(`\`, `\\`, `:`, `\:`).Replace
	return "*:*:*:" + escape(user) + ":" + escape(password) + "\n"
}

// writePassfile writes user's password file at path, mode 0600 (libpq ignores a looser one).
func writePassfile(path, user, password string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(passfileLine(user, password))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(path, 0o600)
	}
	return err
}

// replicaConninfo is a standby's primary_conninfo for src: the password file of the container's
// /tmp, and target_session_attrs=read-write, so that the standby streams only from a server that
// takes writes (demote.go says why).
func replicaConninfo(c config, src source) string {
	return src.conninfo(filepath.Join(c.tmpDir, replicationPassfile), "target_session_attrs", "read-write")
}

// basebackupArgs are pg_basebackup's arguments for a clone of the primary of conninfo into
// staging: the WAL streamed alongside, the standby's settings written, the primary's checkpoint
// taken at once rather than spread.
func basebackupArgs(staging, conninfo string) []string {
	return []string{"--pgdata=" + staging, "--dbname=" + conninfo, "--wal-method=stream", "--write-recovery-conf",
		"--checkpoint=fast", "--no-password"}
}

// rewindArgs are pg_rewind's arguments for PGDATA from the primary of conninfo. With the
// server's configFile, the crash recovery pg_rewind runs first (a server that was killed) uses
// it: with PGDATA's own postgresql.conf (initdb's max_connections = 100 where the server's is
// lower) the standby would then refuse to start ("insufficient parameter settings").
func rewindArgs(pgdata, conninfo, configFile string) []string {
	args := []string{"--target-pgdata=" + pgdata, "--source-server=" + conninfo, "--progress"}
	if configFile != "" {
		args = append(args, "--config-file="+configFile)
	}
	return args
}

// readyArgs are pg_isready's for s: it answers without a password.
func readyArgs(s source) []string {
	return []string{"--host=" + s.host, "--port=" + strconv.Itoa(s.port), "--timeout=" + pgReadyTimeout}
}

// prepareReplica makes PGDATA a standby of the primary of a, and points its primary_conninfo at
// it.
func prepareReplica(ctx context.Context, c config, a announcement) error {
	src, password, err := replicaSource(c, a)
	if err != nil {
		return err
	}
	hasDatabase, err := exists(filepath.Join(c.pgdata, "PG_VERSION"))
	if err != nil {
		return err
	}
	standby, err := exists(filepath.Join(c.pgdata, standbySignal))
	if err != nil {
		return err
	}
	if !hasDatabase || !standby {
		// pg_basebackup and pg_rewind read the password from this file while they run.
		passfile, err := writeSecret(c.tmpDir, "pgpass-", passfileLine(src.user, password))
		if err != nil {
			return err
		}
		defer func() { _ = os.Remove(passfile) }()
		if err := fill(ctx, c, src, passfile, hasDatabase); err != nil {
			return err
		}
	}
	// A rewind completed but for the removal of its mark.
	if err := os.Remove(c.pgdata + ".rewinding"); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	conninfo := replicaConninfo(c, src)
	if changed, err := setPrimaryConninfo(c.pgdata, conninfo); err != nil || !changed {
		return err
	}
	logf("primary_conninfo set to %s", conninfo)
	return nil
}

// fill makes PGDATA, which holds no standby, a standby of src: a clone when it holds no
// database, else a rewind, or a clone when the rewind fails.
func fill(ctx context.Context, c config, src source, passfile string, hasDatabase bool) error {
	if !hasDatabase {
		return clone(ctx, c, src, passfile)
	}
	if ok, err := rewind(ctx, c, src, passfile); err != nil || ok {
		return err
	}
	aside := c.pgdata + ".failed-" + c.now().UTC().Format("20060102T150405Z")
	if err := os.Rename(c.pgdata, aside); err != nil {
		return err
	}
	logf("%s could not be rewound: moved aside to %s, kept (nothing deletes it); cloning the primary", c.pgdata, aside)
	if err := os.Remove(c.pgdata + ".rewinding"); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return clone(ctx, c, src, passfile)
}

// clone copies the primary into PGDATA.init, trying until it succeeds, and renames it PGDATA.
func clone(ctx context.Context, c config, src source, passfile string) error {
	staging := c.pgdata + ".init"
	for {
		if err := awaitPrimary(ctx, c, src); err != nil {
			return err
		}
		if err := os.RemoveAll(staging); err != nil {
			return err
		}
		logf("cloning the primary at %s into %s (pg_basebackup)", address(src.host, src.port), staging)
		cmd := exec.CommandContext(ctx, "pg_basebackup", basebackupArgs(staging, src.conninfo(passfile))...)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		err := cmd.Run()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			_ = os.RemoveAll(staging)
			return ctx.Err()
		}
		logf("pg_basebackup: %v; trying again in %s", err, c.retry)
		if err := sleep(ctx, c.retry); err != nil {
			return err
		}
	}
	return replace(c.pgdata, staging)
}

// rewind runs pg_rewind on PGDATA from src and makes it a standby. It reports false when
// pg_rewind failed, or an earlier one was interrupted: PGDATA can then not be trusted. Its error
// is for everything else.
func rewind(ctx context.Context, c config, src source, passfile string) (bool, error) {
	// The mark lives beside PGDATA: pg_rewind removes the files of PGDATA that the primary lacks.
	mark := c.pgdata + ".rewinding"
	if interrupted, err := exists(mark); err != nil || interrupted {
		if interrupted {
			logf("an earlier pg_rewind of %s was interrupted (%s is there)", c.pgdata, mark)
		}
		return false, err
	}
	if err := awaitPrimary(ctx, c, src); err != nil {
		return false, err
	}
	if err := os.WriteFile(mark, nil, 0o600); err != nil {
		return false, err
	}
	logf("%s holds a database that is no standby: rewinding it to follow %s (pg_rewind)", c.pgdata, address(src.host, src.port))
	// pg_rewind connects to a database: the user's own may not exist.
	cmd := exec.CommandContext(ctx, "pg_rewind", rewindArgs(c.pgdata, src.conninfo(passfile, "dbname", "postgres"), c.configFile)...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		logf("pg_rewind: %v", err)
		return false, nil
	}
	if err := os.WriteFile(filepath.Join(c.pgdata, standbySignal), nil, 0o600); err != nil {
		return false, err
	}
	return true, nil
}

// awaitPrimary returns once src takes connections (pg_isready), polling every retry interval, or
// errAnnouncedPrimary.
func awaitPrimary(ctx context.Context, c config, src source) error {
	for logged := false; ; logged = true {
		out, err := exec.CommandContext(ctx, "pg_isready", readyArgs(src)...).CombinedOutput()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !logged {
			logf("waiting for the primary at %s (pg_isready: %s)", address(src.host, src.port), strings.TrimSpace(string(out)))
		}
		if announcedPrimary(c) {
			return errAnnouncedPrimary
		}
		if err := sleep(ctx, c.retry); err != nil {
			return err
		}
	}
}

// primaryConninfoLine matches a setting of primary_conninfo in a configuration file.
var primaryConninfoLine = regexp.MustCompile(`^\s*primary_conninfo\s*(=|\s|$)`)

// withPrimaryConninfo is the content of postgresql.auto.conf with primary_conninfo set to
// conninfo as ALTER SYSTEM writes it (every other line kept), and whether that changed it.
func withPrimaryConninfo(content, conninfo string) (string, bool) {
	want := "primary_conninfo = '" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(conninfo) + "'"
	lines := strings.SplitAfter(content, "\n")
	var kept []string
	var found []string
	for _, line := range lines {
		if primaryConninfoLine.MatchString(line) {
			found = append(found, strings.TrimRight(line, "\r\n"))
			continue
		}
		if line != "" {
			kept = append(kept, line)
		}
	}
	if len(found) == 1 && found[0] == want {
		return content, false
	}
	if n := len(kept); n > 0 && !strings.HasSuffix(kept[n-1], "\n") {
		kept[n-1] += "\n"
	}
	return strings.Join(kept, "") + want + "\n", true
}

// setPrimaryConninfo sets primary_conninfo in PGDATA's postgresql.auto.conf (replaced whole, so
// that the server never reads half a file) and reports whether it changed.
func setPrimaryConninfo(pgdata, conninfo string) (bool, error) {
	path := filepath.Join(pgdata, autoConf)
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	content, changed := withPrimaryConninfo(string(data), conninfo)
	if !changed {
		return false, nil
	}
	tmp, err := writeSecret(pgdata, "."+autoConf+"-", content)
	if err != nil {
		return false, err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return false, err
	}
	return true, nil
}

// sleep waits d, or returns ctx's error once it is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// logf writes a line of the entrypoint to stderr.
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "entrypoint: "+format+"\n", args...)
}
