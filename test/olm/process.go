package olm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	// stopTimeout is how long a process gets between its stop signal and SIGKILL.
	stopTimeout = 15 * time.Second
	// tailLines bounds how much of a log an error message quotes.
	tailLines = 30
)

// Process is a program run beside a cluster: one of OLM's controllers, a catalog server, a
// manager. It leads its own process group; its output goes to LogPath.
type Process struct {
	// Name is a short name for messages.
	Name string
	// LogPath is the file that holds its stdout and stderr.
	LogPath string
	cmd     *exec.Cmd
	// done is closed once Wait has returned; waitErr holds its result.
	done    chan struct{}
	waitErr error
}

// ProcessOptions are the optional settings of StartProcess.
type ProcessOptions struct {
	// Env is added to this process's environment.
	Env []string
	// Dir is the working directory (default: the log's directory).
	Dir string
	// Detached starts the process in a session of its own and without a parent-death signal,
	// so that it outlives its starter (run-bundle's catalog server; StopPID stops it). Without
	// it, the process dies with the thread that started it (on Linux).
	Detached bool
}

// StartProcess starts bin with args, its output going to logPath (truncated).
func StartProcess(name, bin string, args []string, logPath string, o ProcessOptions) (*Process, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating the log of %s: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = o.Dir
	if cmd.Dir == "" {
		cmd.Dir = filepath.Dir(logPath)
	}
	cmd.Env = append(os.Environ(), o.Env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = childSysProcAttr()
	if o.Detached {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("starting %s (%s): %w", name, bin, err)
	}
	// The child has its own copy of the log's descriptor.
	_ = logFile.Close()
	p := &Process{Name: name, LogPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// PID is the process id, which is also its process group id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Err is Wait's result: nil while the process runs or after exit status 0.
func (p *Process) Err() error {
	if !p.Exited() {
		return nil
	}
	return p.waitErr
}

// ExitError describes how the process ended, with the tail of its log; nil while it runs.
func (p *Process) ExitError() error {
	if !p.Exited() {
		return nil
	}
	if p.waitErr == nil {
		return fmt.Errorf("%s exited (exit status 0); tail of %s:\n%s", p.Name, p.LogPath, Tail(p.LogPath))
	}
	return fmt.Errorf("%s exited (%w); tail of %s:\n%s", p.Name, p.waitErr, p.LogPath, Tail(p.LogPath))
}

// Stop sends sig (SIGTERM when none) to the process group, SIGKILL after 15 s, and waits. It
// returns the exit error of a process that ended on the signal (nil when it exited 0), or an
// error when it had to be killed. Stopping an exited process returns nil.
func (p *Process) Stop(sig ...syscall.Signal) error {
	if p == nil || p.Exited() {
		return nil
	}
	s := syscall.SIGTERM
	if len(sig) > 0 {
		s = sig[0]
	}
	_ = syscall.Kill(-p.PID(), s)
	select {
	case <-p.done:
		return p.waitErr
	case <-time.After(stopTimeout):
	}
	_ = syscall.Kill(-p.PID(), syscall.SIGKILL)
	<-p.done
	return fmt.Errorf("%s did not stop within %s of %v and was killed", p.Name, stopTimeout, s)
}

// WhileRunning returns a context that is cancelled, with the process's ExitError as its
// cause, as soon as one of procs exits: waits on it stop at once instead of timing out when
// OLM or a catalog server has died.
func WhileRunning(ctx context.Context, procs ...*Process) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	for _, p := range procs {
		go func() {
			select {
			case <-p.done:
				cancel(p.ExitError())
			case <-ctx.Done():
			}
		}()
	}
	return ctx, func() { cancel(context.Canceled) }
}

// Tail returns the last lines of a log, for error messages.
func Tail(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > tailLines {
		lines = lines[len(lines)-tailLines:]
	}
	return strings.Join(lines, "\n")
}

// ProcessAlive reports whether pid is a live process whose command line contains every one of
// marks (so that a pid reused by another program is not taken for ours). A zombie is not
// alive. It reads /proc: Linux only.
func ProcessAlive(pid int, marks ...string) bool {
	if pid <= 0 {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses and may contain spaces.
	if i := bytes.LastIndexByte(stat, ')'); i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	args := strings.ReplaceAll(string(cmdline), "\x00", " ")
	for _, m := range marks {
		if !strings.Contains(args, m) {
			return false
		}
	}
	return true
}

// StopPID stops a process that this program did not start (a detached catalog server found
// through its pidfile): SIGTERM to its process group, SIGKILL after 15 s, and waits until it
// is gone. marks are as in ProcessAlive; a pid that is not alive with them is left alone.
func StopPID(ctx context.Context, pid int, marks ...string) error {
	if !ProcessAlive(pid, marks...) {
		return nil
	}
	if err := syscall.Kill(-pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signalling process %d: %w", pid, err)
	}
	deadline := time.Now().Add(stopTimeout)
	killed := false
	for ProcessAlive(pid, marks...) {
		if !killed && time.Now().After(deadline) {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			killed = true
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for process %d to stop: %w", pid, context.Cause(ctx))
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// readPID reads a pidfile; a missing file is pid 0.
func readPID(path string) (int, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", path, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 0, fmt.Errorf("parsing %s: %w", path, err)
	}
	return pid, nil
}
