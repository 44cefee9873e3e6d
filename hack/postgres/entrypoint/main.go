// Command entrypoint is the entrypoint of the project's PostgreSQL image (hack/postgres/build.sh:
// Debian's PostgreSQL packages and this static program). It does what the Docker Hub image's
// docker-entrypoint.sh does for a DatabaseCluster, without a shell:
//
//   - On the first start, when PGDATA (default /var/lib/database/pgdata, under the claim's
//     mount) holds no PG_VERSION, it runs initdb as the superuser DATABASE_USERNAME with the
//     password of /etc/database/credentials/password (spec.credentials), with SCRAM
//     authentication and data checksums. initdb writes into PGDATA.init, which is renamed to
//     PGDATA once complete, so an interrupted first start is started over, never half used.
//   - It sets PGDATA's mode to 0700, which PostgreSQL insists on.
//   - Then it runs its arguments (default: postgres) as a child. SIGTERM, which the kubelet
//     sends to stop the container, becomes SIGINT for the server: PostgreSQL's fast shutdown
//     (clients disconnected, a checkpoint, a clean stop). Its own SIGTERM would be the smart
//     shutdown, which waits for every client to leave and so outlasts the grace period.
//     SIGINT, SIGQUIT and SIGHUP (reload) are passed on as they are.
//
// It exits with the server's exit code.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
)

const (
	defaultPGDATA  = "/var/lib/database/pgdata"
	credentialsDir = "/etc/database/credentials"
)

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
	if err := initialize(pgdata); err != nil {
		return err
	}
	// PostgreSQL refuses a data directory that its group may write, which the kubelet makes of a
	// volume whose root is not yet the pod's fsGroup's (it walks the volume once, adding g+rwx).
	if err := os.Chmod(pgdata, 0o700); err != nil {
		return err
	}
	if len(args) == 0 {
		args = []string{"postgres"}
	}
	return serve(args)
}

// initialize runs initdb into PGDATA unless it holds a database already.
func initialize(pgdata string) error {
	if _, err := os.Stat(filepath.Join(pgdata, "PG_VERSION")); err == nil {
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	user, err := credential("DATABASE_USERNAME", "username")
	if err != nil {
		return err
	}
	password, err := credential("DATABASE_PASSWORD", "password")
	if err != nil {
		return err
	}
	// initdb reads the password from a file; it lives in the container's own /tmp only while
	// initdb runs.
	pwfile, err := os.CreateTemp("", "pwfile-")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(pwfile.Name()) }()
	if _, err := pwfile.WriteString(password + "\n"); err != nil {
		return err
	}
	if err := pwfile.Close(); err != nil {
		return err
	}
	staging := pgdata + ".init"
	if err := os.RemoveAll(staging); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "entrypoint: %s holds no database: initdb as %s\n", pgdata, user)
	initdb := exec.Command("initdb", "--pgdata="+staging, "--username="+user, "--pwfile="+pwfile.Name(),
		"--auth-local=scram-sha-256", "--auth-host=scram-sha-256", "--encoding=UTF8", "--locale=C", "--data-checksums")
	initdb.Stdout, initdb.Stderr = os.Stderr, os.Stderr
	if err := initdb.Run(); err != nil {
		return fmt.Errorf("initdb: %w", err)
	}
	// A directory left by a start that failed before this point holds no PG_VERSION: it is
	// replaced.
	if err := os.RemoveAll(pgdata); err != nil {
		return err
	}
	return os.Rename(staging, pgdata)
}

// credential is the environment variable env, or else the file name of the credentials
// directory, without a trailing newline.
func credential(env, name string) (string, error) {
	if v := os.Getenv(env); v != "" {
		return v, nil
	}
	data, err := os.ReadFile(filepath.Join(credentialsDir, name))
	if err != nil {
		return "", fmt.Errorf("no %s: set %s or spec.credentials (%w)", name, env, err)
	}
	v := strings.TrimRight(string(data), "\r\n")
	if v == "" {
		return "", fmt.Errorf("%s is empty", filepath.Join(credentialsDir, name))
	}
	return v, nil
}

// serve runs args as a child, passing the stop signals on (SIGTERM as SIGINT), and returns when
// it exits; its exit code becomes this program's.
func serve(args []string) error {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGHUP)
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() {
		for sig := range signals {
			if sig == syscall.SIGTERM {
				sig = syscall.SIGINT
			}
			_ = cmd.Process.Signal(sig)
		}
	}()
	err := cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if code := exit.ExitCode(); code >= 0 {
			os.Exit(code)
		}
		os.Exit(128 + int(exit.Sys().(syscall.WaitStatus).Signal()))
	}
	return err
}
