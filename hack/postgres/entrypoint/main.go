// Command entrypoint is the entrypoint of the project's PostgreSQL image (hack/postgres/build.sh:
// Debian's PostgreSQL packages and this static program). It does what the Docker Hub image's
// docker-entrypoint.sh does for a DatabaseCluster, without a shell:
//
//   - On the first start, when PGDATA (default /var/lib/database/pgdata, under the claim's
//     mount) holds no PG_VERSION, it runs initdb as the superuser DATABASE_USERNAME with the
//     password of /etc/database/credentials/password (spec.credentials), with SCRAM
//     authentication and data checksums. initdb writes into PGDATA.init, which is renamed to
//     PGDATA once complete, so an interrupted first start is started over, never half used.
//   - With DATABASE_ROLE_DIR set (the operator's announcement, a downward-API volume: the files
//     role, primary or replica, primary-host and primary-port), it first waits for the role and
//     makes PGDATA fit it (role.go): a primary is initialized as above; a replica is cloned from
//     the announced primary (pg_basebackup), an old primary rewound to follow it (pg_rewind), a
//     standby pointed at it. It never promotes a standby: the operator does, through its agent.
//     Without DATABASE_ROLE_DIR every member is started as above.
//   - It sets PGDATA's mode to 0700, which PostgreSQL insists on.
//   - Then it runs its arguments (default: postgres) as a child. SIGTERM, which the kubelet
//     sends to stop the container, becomes SIGINT for the server: PostgreSQL's fast shutdown
//     (clients disconnected, a checkpoint, a clean stop). Its own SIGTERM would be the smart
//     shutdown, which waits for every client to leave and so outlasts the grace period.
//     SIGINT, SIGQUIT and SIGHUP (reload) are passed on as they are.
//   - With DATABASE_ROLE_DIR, a primary that the member agent asks to step down (demote.signal
//     in PGDATA) is stopped and started again as a standby, in the same container (demote.go).
//
// It exits with the server's exit code.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

const (
	defaultPGDATA  = "/var/lib/database/pgdata"
	credentialsDir = "/etc/database/credentials"
	// caFile is the CA of spec.tls, which a replica verifies its primary with when it is there.
	caFile = "/etc/database/tls/ca.crt"
	// pollInterval is how often the announcement is read while it names no role.
	pollInterval = time.Second
	// retryInterval is how long a replica waits before it tries its primary again.
	retryInterval = 3 * time.Second
)

// config is where the entrypoint finds its inputs: the image's paths, and in tests their own.
type config struct {
	// pgdata is the data directory.
	pgdata string
	// roleDir is the announcement's directory (DATABASE_ROLE_DIR); empty without one.
	roleDir string
	// credentialsDir holds the files username and password.
	credentialsDir string
	// caFile is the CA a replica verifies its primary with, when the file exists.
	caFile string
	// tmpDir is where the password files go: the container's own /tmp, never the claim.
	tmpDir string
	// poll and retry are pollInterval and retryInterval; demotePoll is demotePollInterval.
	poll, retry, demotePoll time.Duration
	// now names a data directory moved aside.
	now func() time.Time
	// synchronous is synchronous_standby_names (DATABASE_SYNCHRONOUS_STANDBY_NAMES); empty
	// leaves the configuration's.
	synchronous string
	// configFile is the server's configuration file as its arguments name it (-c
	// config_file=...); empty: PGDATA's postgresql.conf.
	configFile string
}

// serveAttr is the server's process attributes: none in the image, where the server ends with
// the container. The tests have the kernel kill it with the entrypoint, which their harness has
// killed if the test dies.
var serveAttr *syscall.SysProcAttr

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "entrypoint: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	pgdata := os.Getenv("PGDATA")
	if pgdata == "" {
		pgdata = defaultPGDATA
		if err := os.Setenv("PGDATA", pgdata); err != nil {
			return err
		}
	}
	return start(config{
		pgdata:         pgdata,
		roleDir:        os.Getenv("DATABASE_ROLE_DIR"),
		credentialsDir: credentialsDir,
		caFile:         caFile,
		tmpDir:         os.TempDir(),
		poll:           pollInterval,
		retry:          retryInterval,
		demotePoll:     demotePollInterval,
		now:            time.Now,
		synchronous:    os.Getenv("DATABASE_SYNCHRONOUS_STANDBY_NAMES"),
	}, args)
}

// start prepares PGDATA as c says and then serves args.
func start(c config, args []string) error {
	c.configFile = configFile(args)
	if err := removeStaleLock(c.pgdata); err != nil {
		return err
	}
	if err := prepare(c); err != nil {
		return err
	}
	if err := stepDownIfAsked(c); err != nil {
		return err
	}
	// PostgreSQL refuses a data directory that its group may write, which the kubelet makes of a
	// volume whose root is not yet the pod's fsGroup's (it walks the volume once, adding g+rwx).
	if err := os.Chmod(c.pgdata, 0o700); err != nil {
		return err
	}
	return serve(c, serverArgs(args, c.synchronous))
}

// configFile is the configuration file the server's args name: -c config_file=PATH (also
// -cconfig_file=PATH, --config_file=PATH, --config-file=PATH); "" when they name none.
func configFile(args []string) string {
	for i, arg := range args {
		var value string
		switch {
		case arg == "-c" && i+1 < len(args):
			value = args[i+1]
		case strings.HasPrefix(arg, "-c"):
			value = strings.TrimPrefix(arg, "-c")
		case strings.HasPrefix(arg, "--"):
			value = strings.ReplaceAll(strings.TrimPrefix(arg, "--"), "-", "_")
		default:
			continue
		}
		if path, ok := strings.CutPrefix(value, "config_file="); ok {
			return path
		}
	}
	return ""
}

// removeStaleLock removes PGDATA's postmaster.pid, which a server that was killed leaves (SIGKILL,
// or its container stopped while it was frozen): no server of this container runs yet, and no
// other container mounts the volume, so the lock is stale. PostgreSQL removes a stale lock itself
// only when the PID it names is not alive, and in a new container's PID namespace that PID is
// often another process (this entrypoint, pg_rewind): the server, or pg_rewind's crash recovery,
// then refuses to start ("lock file postmaster.pid already exists").
func removeStaleLock(pgdata string) error {
	err := os.Remove(filepath.Join(pgdata, "postmaster.pid"))
	if err == nil {
		logf("removed the lock file postmaster.pid of a server that was stopped without a shutdown")
	}
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// serverArgs are the server's command line: args (default: postgres), and with synchronous
// (DATABASE_SYNCHRONOUS_STANDBY_NAMES, e.g. "ANY 1 (*)") synchronous_standby_names set on the
// command line, which wins over the configuration file. Every member gets it: a replica ignores
// it until it is promoted.
func serverArgs(args []string, synchronous string) []string {
	if len(args) == 0 {
		args = []string{"postgres"}
	}
	if synchronous == "" {
		return args
	}
	return append(slices.Clone(args), "-c", "synchronous_standby_names="+synchronous)
}

// initialize runs initdb into PGDATA unless it holds a database already.
func initialize(c config) error {
	pgdata := c.pgdata
	if ok, err := exists(filepath.Join(pgdata, "PG_VERSION")); err != nil || ok {
		return err
	}
	user, password, err := credentials(c.credentialsDir)
	if err != nil {
		return err
	}
	// initdb reads the password from a file; it lives in the container's own /tmp only while
	// initdb runs.
	pwfile, err := writeSecret(c.tmpDir, "pwfile-", password+"\n")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(pwfile) }()
	staging := pgdata + ".init"
	if err := os.RemoveAll(staging); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "entrypoint: %s holds no database: initdb as %s\n", pgdata, user)
	initdb := exec.Command("initdb", "--pgdata="+staging, "--username="+user, "--pwfile="+pwfile,
		"--auth-local=scram-sha-256", "--auth-host=scram-sha-256", "--encoding=UTF8", "--locale=C", "--data-checksums")
	initdb.Stdout, initdb.Stderr = os.Stderr, os.Stderr
	if err := initdb.Run(); err != nil {
		return fmt.Errorf("initdb: %w", err)
	}
	return replace(pgdata, staging)
}

// replace makes the complete directory staging PGDATA. A directory left by a start that failed
// before this point holds no PG_VERSION (its callers made sure): it is replaced.
func replace(pgdata, staging string) error {
	if err := os.RemoveAll(pgdata); err != nil {
		return err
	}
	return os.Rename(staging, pgdata)
}

// exists reports whether path exists.
func exists(path string) (bool, error) {
	_, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// writeSecret writes content into a new file of dir, mode 0600, named from prefix, and returns
// its path.
func writeSecret(dir, prefix, content string) (string, error) {
	f, err := os.CreateTemp(dir, prefix)
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(content); err != nil {
		_ = f.Close()
		_ = os.Remove(f.Name())
		return "", err
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// credentials are the superuser's name and password (DATABASE_USERNAME and DATABASE_PASSWORD,
// or else the files of dir).
func credentials(dir string) (user, password string, err error) {
	if user, err = credential(dir, "DATABASE_USERNAME", "username"); err != nil {
		return "", "", err
	}
	if password, err = credential(dir, "DATABASE_PASSWORD", "password"); err != nil {
		return "", "", err
	}
	return user, password, nil
}

// credential is the environment variable env, or else the file name of the credentials
// directory dir, without a trailing newline.
func credential(dir, env, name string) (string, error) {
	if v := os.Getenv(env); v != "" {
		return v, nil
	}
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return "", fmt.Errorf("no %s: set %s or spec.credentials (%w)", name, env, err)
	}
	v := strings.TrimRight(string(data), "\r\n")
	if v == "" {
		return "", fmt.Errorf("%s is empty", filepath.Join(dir, name))
	}
	return v, nil
}

// exitLike ends this program as the server ended (err from its Wait): with its exit code, or
// 128 + the signal that killed it.
func exitLike(err error) error {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if code := exit.ExitCode(); code >= 0 {
			os.Exit(code)
		}
		os.Exit(128 + int(exit.Sys().(syscall.WaitStatus).Signal()))
	}
	return err
}
