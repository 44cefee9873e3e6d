// Package operands runs the databases the tests put behind the operator's agents, as processes of
// the test on 127.0.0.1 (through proc): a real etcd (StartEtcd, the binary of envtest's assets)
// and a real PostgreSQL 15 (PostgreSQLHost, the Debian package's binaries), each stopped and its
// data removed when the test ends, its log printed when the test failed. A test that lacks the
// binaries is skipped, saying which. The packages below hold the real node's operands: testdb and
// the images' programs.
package operands

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/seed1b407122/database-operator/test/harness/proc"
)

// readyTimeout bounds the wait for a process to serve.
const readyTimeout = 30 * time.Second

// start runs bin with args as name until the test ends, its output in logPath; o adds to the
// options. When the test ends the process gets stop (SIGKILL after proc.StopTimeout), and if the
// test failed its log is printed.
func start(t testing.TB, name, bin string, args []string, logPath string, stop syscall.Signal, o proc.Options) *proc.Process {
	t.Helper()
	o.LogPath = logPath
	p, err := proc.Start(name, bin, args, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.Stop(stop)
		if t.Failed() {
			log, _ := os.ReadFile(logPath)
			t.Logf("%s's log (%s):\n%s", name, logPath, log)
		}
	})
	return p
}

// waitReady polls ready every 100 ms, up to readyTimeout, until it returns nil; it fails the test
// then, or at once when one of procs exits, with ready's last error.
func waitReady(t testing.TB, what string, procs []*proc.Process, ready func(context.Context) error) {
	t.Helper()
	var last error
	err := proc.PollWhileRunning(context.Background(), what, procs, 100*time.Millisecond, readyTimeout,
		func(ctx context.Context) (bool, error) {
			last = ready(ctx)
			return last == nil, nil
		})
	if err != nil {
		t.Fatalf("%v (last error: %v)", err, last)
	}
}
