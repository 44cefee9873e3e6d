package proc

import (
	"bytes"
	"context"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPollWhileRunningFailsWhenAProcessExits: the wait stops at once with the exit error, long
// before its timeout.
func TestPollWhileRunningFailsWhenAProcessExits(t *testing.T) {
	p := start(t, "dies", "echo dying; exit 3", Options{})
	began := time.Now()
	err := PollWhileRunning(context.Background(), "nothing", []*Process{p}, 10*time.Millisecond, time.Minute,
		func(context.Context) (bool, error) { return false, nil })
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "dying") {
		t.Fatalf("err = %v, want the exit status and the log's tail", err)
	}
	if d := time.Since(began); d > 10*time.Second {
		t.Fatalf("took %s", d)
	}
}

// TestPollWhileRunningEndsWhenDone and at its timeout otherwise.
func TestPollWhileRunningEndsWhenDone(t *testing.T) {
	p := start(t, "runs", "sleep 60", Options{})
	calls := 0
	err := PollWhileRunning(context.Background(), "three calls", []*Process{p}, 10*time.Millisecond, time.Minute,
		func(context.Context) (bool, error) { calls++; return calls == 3, nil })
	if err != nil || calls != 3 {
		t.Fatalf("err = %v after %d calls, want nil after 3", err, calls)
	}
	err = PollWhileRunning(context.Background(), "never", []*Process{p}, 10*time.Millisecond, 100*time.Millisecond,
		func(context.Context) (bool, error) { return false, nil })
	if err == nil || !strings.Contains(err.Error(), "waiting for never: timed out after 100ms") {
		t.Fatalf("err = %v, want a timeout", err)
	}
}

// TestOutputSignalExitCode: output goes to Options.Output, Signal reaches the process and
// ExitCode reports exit codes and deaths by signal as a shell would.
func TestOutputSignalExitCode(t *testing.T) {
	var out bytes.Buffer
	p, err := Start("echo", "/bin/sh", []string{"-c", "echo hello; exit 4"}, Options{Output: &out})
	if err != nil {
		t.Fatal(err)
	}
	if p.ExitCode() != -1 && !p.Exited() {
		t.Fatalf("ExitCode of a running process = %d, want -1", p.ExitCode())
	}
	waitDone(t, p)
	if out.String() != "hello\n" || p.ExitCode() != 4 {
		t.Fatalf("output %q, exit code %d; want hello and 4", out.String(), p.ExitCode())
	}
	q := start(t, "sleeps", "sleep 60", Options{})
	if err := q.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitDone(t, q)
	if q.ExitCode() != 128+int(syscall.SIGTERM) {
		t.Fatalf("exit code %d, want %d", q.ExitCode(), 128+int(syscall.SIGTERM))
	}
}
