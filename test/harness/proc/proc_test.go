package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func start(t *testing.T, name, script string, o Options, extra ...string) *Process {
	t.Helper()
	if o.LogPath == "" {
		o.LogPath = filepath.Join(t.TempDir(), name+".log")
	}
	p, err := Start(name, "/bin/sh", append([]string{"-c", script}, extra...), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop(syscall.SIGKILL) })
	return p
}

func waitDone(t *testing.T, p *Process) {
	t.Helper()
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not exit", p.Name)
	}
}

func TestExitErrorQuotesTheLog(t *testing.T) {
	p := start(t, "failing", "echo it went wrong; exit 3", Options{})
	waitDone(t, p)
	err := p.ExitError()
	if err == nil || !strings.Contains(err.Error(), "failing exited (exit status 3)") || !strings.Contains(err.Error(), "it went wrong") {
		t.Fatalf("ExitError = %v", err)
	}
	if p.Err() == nil {
		t.Fatal("Err is nil after exit status 3")
	}
	if err := p.Stop(); err != nil {
		t.Fatalf("stopping an exited process: %v, want nil", err)
	}
}

func TestNoExitErrorWhileRunning(t *testing.T) {
	p := start(t, "sleeper", "sleep 60", Options{})
	if p.Exited() || p.Err() != nil || p.ExitError() != nil {
		t.Fatalf("running process: Exited %v, Err %v, ExitError %v", p.Exited(), p.Err(), p.ExitError())
	}
}

func TestStop(t *testing.T) {
	tests := []struct {
		name    string
		script  string
		sig     []syscall.Signal
		wantErr string
	}{
		// "ready" first: dash loses a SIGINT that comes while it starts (4 of 60 starts here).
		{name: "ended by SIGTERM", script: "echo ready; exec sleep 60"},
		{name: "ended by the signal given", script: "echo ready; exec sleep 60", sig: []syscall.Signal{syscall.SIGINT}},
		{name: "exits 0 on SIGTERM", script: "trap 'exit 0' TERM; echo ready; while :; do sleep 0.05; done"},
		{name: "exits 1 on SIGTERM", script: "trap 'echo cleanup failed; exit 1' TERM; echo ready; while :; do sleep 0.05; done",
			wantErr: "exits-1-on-SIGTERM exited (exit status 1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := start(t, strings.ReplaceAll(tt.name, " ", "-"), tt.script, Options{})
			waitLog(t, p, tt.script)
			err := p.Stop(tt.sig...)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Stop = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "cleanup failed") {
				t.Fatalf("Stop = %v, want %q and the log", err, tt.wantErr)
			}
		})
	}
}

// waitLog waits for a script to say "ready": a signal before a trap is set would end the shell
// instead, and one while dash starts may be lost.
func waitLog(t *testing.T, p *Process, script string) {
	t.Helper()
	if !strings.Contains(script, "echo ready") {
		return
	}
	for range 200 {
		if data, _ := os.ReadFile(p.LogPath); strings.Contains(string(data), "ready") {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("%s did not get ready", p.Name)
}

func TestLogAppendOrTruncate(t *testing.T) {
	for _, tt := range []struct {
		appendTo bool
		want     string
	}{{false, "second\n"}, {true, "old\nsecond\n"}} {
		log := filepath.Join(t.TempDir(), "x.log")
		if err := os.WriteFile(log, []byte("old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		p := start(t, "writer", "echo second", Options{LogPath: log, Append: tt.appendTo})
		waitDone(t, p)
		got, _ := os.ReadFile(log)
		if string(got) != tt.want {
			t.Errorf("Append %v: log %q, want %q", tt.appendTo, got, tt.want)
		}
	}
}

func TestRunsInTheLogsDirectoryWithEnv(t *testing.T) {
	dir := t.TempDir()
	p := start(t, "pwd", `echo "$PWD $CHILD_TEST"`, Options{LogPath: filepath.Join(dir, "pwd.log"), Env: []string{"CHILD_TEST=yes"}})
	waitDone(t, p)
	got, _ := os.ReadFile(p.LogPath)
	if want := dir + " yes\n"; string(got) != want {
		t.Fatalf("output %q, want %q", got, want)
	}
}

func TestRunsAsTheCredential(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root runs a child as another user")
	}
	// Outside the test's temporary directory, which only root may enter.
	dir, err := os.MkdirTemp("", "proc-credential-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := start(t, "id", "id -u; id -g", Options{LogPath: filepath.Join(dir, "id.log"), Credential: &syscall.Credential{Uid: 65534, Gid: 65534}})
	waitDone(t, p)
	got, _ := os.ReadFile(p.LogPath)
	if want := "65534\n65534\n"; string(got) != want || p.ExitCode() != 0 {
		t.Fatalf("output %q, exit %d; want %q, 0", got, p.ExitCode(), want)
	}
}

func TestOwnProcessGroup(t *testing.T) {
	p := start(t, "group", "sleep 60", Options{})
	pgid, err := syscall.Getpgid(p.PID())
	if err != nil || pgid != p.PID() {
		t.Fatalf("pgid %d (%v), want %d", pgid, err, p.PID())
	}
}

func TestWhileRunningEndsWhenAProcessExits(t *testing.T) {
	p := start(t, "short", "sleep 0.2", Options{})
	ctx, cancel := WhileRunning(context.Background(), p)
	defer cancel()
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the context was not cancelled")
	}
	if err := context.Cause(ctx); err == nil || !strings.Contains(err.Error(), "short exited (exit status 0)") {
		t.Fatalf("cause %v", err)
	}
}

func TestTailIsBounded(t *testing.T) {
	log := filepath.Join(t.TempDir(), "big.log")
	var b strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	if err := os.WriteFile(log, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(Tail(log), "\n")
	if len(lines) != tailLines || lines[0] != "line 970" || lines[len(lines)-1] != "line 999" {
		t.Fatalf("Tail: %d lines, %q ... %q", len(lines), lines[0], lines[len(lines)-1])
	}
	if got := Tail(filepath.Join(t.TempDir(), "missing.log")); !strings.Contains(got, "cannot read") {
		t.Fatalf("Tail of a missing file: %q", got)
	}
}

func TestStopPIDOnlyStopsAMarkedProcess(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "catalog")
	// "sh -c SCRIPT NAME": NAME is $0, so the mark is on the command line.
	p := start(t, "detached", "sleep 60", Options{Detached: true}, mark)
	// Until the child has called exec, /proc shows the test's own command line.
	for i := 0; !Alive(p.PID(), mark); i++ {
		if i == 200 {
			t.Fatal("Alive does not find the mark on the command line")
		}
		time.Sleep(25 * time.Millisecond)
	}
	if Alive(p.PID(), mark, "something-else") {
		t.Fatal("Alive matches a mark that is not on the command line")
	}
	if err := StopPID(context.Background(), p.PID(), "/not/our/catalog"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
		t.Fatal("a process without the mark was stopped")
	case <-time.After(200 * time.Millisecond):
	}
	if err := StopPID(context.Background(), p.PID(), mark); err != nil {
		t.Fatal(err)
	}
	if Alive(p.PID(), mark) {
		t.Fatal("still alive after StopPID")
	}
	waitDone(t, p)
}

func TestStopKillsAProcessThatIgnoresItsSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("waits StopTimeout")
	}
	p := start(t, "stubborn", "trap '' TERM; echo ready; while :; do sleep 0.05; done", Options{})
	waitLog(t, p, "echo ready")
	began := time.Now()
	err := p.Stop()
	if !errors.Is(err, ErrKilled) || !strings.Contains(err.Error(), "stubborn did not stop within 15s of terminated") {
		t.Fatalf("Stop = %v, want ErrKilled", err)
	}
	if waited := time.Since(began); waited < StopTimeout {
		t.Fatalf("killed after %s, before StopTimeout", waited)
	}
}

func TestWhileRunningWithinEndsAtItsTimeout(t *testing.T) {
	p := start(t, "long", "sleep 60", Options{})
	ctx, cancel := WhileRunningWithin(context.Background(), 100*time.Millisecond, p)
	defer cancel()
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the context was not cancelled")
	}
	if err := context.Cause(ctx); err == nil || err.Error() != "timed out after 100ms" {
		t.Fatalf("cause %v", err)
	}
	if p.Exited() {
		t.Fatal("the process exited")
	}
}
