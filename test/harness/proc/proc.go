// Package proc is the one process runner of the harness and the dev commands: the local control
// plane's components, the real node's containerd, kubelet and kube-proxy, OLM's controllers, the
// catalog server, the manager (tests, benchmark, "make run"). A child leads its own process
// group, its output goes to a log file, and (on Linux) the kernel kills it when the thread that
// started it dies, so nothing outlives a killed test.
package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

const (
	// StopTimeout is how long a child gets between its stop signal and SIGKILL.
	StopTimeout = 15 * time.Second
	// tailBytes and tailLines bound how much of a log an error message quotes.
	tailBytes = 4096
	tailLines = 30
)

// ErrKilled is wrapped by Stop's error when the process did not end on its signal in time and
// was killed.
var ErrKilled = errors.New("killed")

// Options are the settings of Start.
type Options struct {
	// LogPath receives the child's stdout and stderr (required unless Output is set).
	LogPath string
	// Output, when set, receives them instead of LogPath ("make run" passes the manager's
	// output through to the terminal).
	Output io.Writer
	// Append appends to LogPath instead of truncating it.
	Append bool
	// Env is added to this process's environment.
	Env []string
	// Dir is the working directory (default: the log's directory).
	Dir string
	// Detached starts the child in a session of its own and without a parent-death signal, so
	// that it outlives its starter (run-bundle's catalog server; StopPID stops it).
	Detached bool
	// Credential, when set, runs the child as that user and group: a harness running as root
	// starts a program that refuses root (PostgreSQL). Dir must be open to that user.
	Credential *syscall.Credential
}

// Process is one running child.
type Process struct {
	// Name is a short name for messages.
	Name string
	// LogPath is the file that holds its output.
	LogPath string

	cmd *exec.Cmd
	// done is closed once Wait has returned; waitErr holds its result.
	done    chan struct{}
	waitErr error
}

// Start starts bin with args.
func Start(name, bin string, args []string, o Options) (*Process, error) {
	out := o.Output
	if out == nil {
		logFile, err := openLog(o.LogPath, o.Append)
		if err != nil {
			return nil, fmt.Errorf("opening the log of %s: %w", name, err)
		}
		// The child has its own copy of the log's descriptor.
		defer func() { _ = logFile.Close() }()
		out = logFile
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = o.Dir
	if cmd.Dir == "" && o.LogPath != "" {
		cmd.Dir = filepath.Dir(o.LogPath)
	}
	cmd.Env = append(os.Environ(), o.Env...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = SysProcAttr()
	if o.Detached {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	cmd.SysProcAttr.Credential = o.Credential
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s (%s): %w", name, bin, err)
	}
	p := &Process{Name: name, LogPath: o.LogPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func openLog(path string, appendTo bool) (*os.File, error) {
	if path == "" {
		return nil, errors.New("no log path")
	}
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if appendTo {
		flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	return os.OpenFile(path, flags, 0o644)
}

// PID is the process id, which is also its process group id (not for a detached child, which
// leads a session of its own: the same number).
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has ended.
func (p *Process) Exited() bool { return Closed(p.done) }

// Closed reports, without blocking, whether done is closed: whether a process that closes it on
// exit (a Process, a manager's fake) has ended.
func Closed(done <-chan struct{}) bool {
	select {
	case <-done:
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
	status := "exit status 0"
	if p.waitErr != nil {
		status = p.waitErr.Error()
	}
	return fmt.Errorf("%s exited (%s); tail of %s:\n%s", p.Name, status, p.LogPath, Tail(p.LogPath))
}

// Stop sends sig (SIGTERM when none) to the process group, SIGKILL after StopTimeout, and
// waits. It returns nil when the process exited with status 0 or was ended by sig, the
// process's ExitError when it exited otherwise, and an error wrapping ErrKilled when it had to
// be killed.
// Stopping an exited process returns nil.
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
	case <-time.After(StopTimeout):
		_ = syscall.Kill(-p.PID(), syscall.SIGKILL)
		<-p.done
		return fmt.Errorf("%s did not stop within %s of %v and was %w", p.Name, StopTimeout, s, ErrKilled)
	}
	if p.waitErr == nil || endedBy(p.waitErr, s) {
		return nil
	}
	return p.ExitError()
}

// Signal sends sig to the process group without waiting.
func (p *Process) Signal(sig syscall.Signal) error { return syscall.Kill(-p.PID(), sig) }

// ExitCode is the exit code of an ended process, 128+n for a death by signal n; -1 while it
// runs.
func (p *Process) ExitCode() int {
	if !p.Exited() {
		return -1
	}
	var exit *exec.ExitError
	switch {
	case p.waitErr == nil:
		return 0
	case !errors.As(p.waitErr, &exit):
		return 1
	}
	if status, ok := exit.Sys().(syscall.WaitStatus); ok && status.Signaled() {
		return 128 + int(status.Signal())
	}
	return exit.ExitCode()
}

// endedBy reports whether a Wait error says that the process was killed by sig.
func endedBy(err error, sig syscall.Signal) bool {
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return false
	}
	status, ok := exit.Sys().(syscall.WaitStatus)
	return ok && status.Signaled() && status.Signal() == sig
}

// WhileRunning returns a context that is cancelled, with the process's ExitError as its cause,
// as soon as one of procs exits: waits on it stop at once instead of timing out when a child
// has died.
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

// WhileRunningWithin is WhileRunning bounded by timeout as well: the context ends when one of
// procs exits or when timeout has passed, whichever comes first.
func WhileRunningWithin(ctx context.Context, timeout time.Duration, procs ...*Process) (context.Context, context.CancelFunc) {
	ctx, cancelTimeout := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("timed out after %s", timeout))
	ctx, cancelGuard := WhileRunning(ctx, procs...)
	return ctx, func() { cancelGuard(); cancelTimeout() }
}

// Tail returns the last lines of a log (at most tailLines lines of its last tailBytes bytes),
// for error messages.
func Tail(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(cannot read: %v)", err)
	}
	defer func() { _ = f.Close() }()
	info, err := f.Stat()
	if err != nil {
		return fmt.Sprintf("(cannot stat: %v)", err)
	}
	offset := max(info.Size()-tailBytes, 0)
	buf := make([]byte, info.Size()-offset)
	if _, err := f.ReadAt(buf, offset); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Sprintf("(cannot read: %v)", err)
	}
	if offset > 0 {
		// Start at a line boundary.
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		}
	}
	lines := strings.Split(strings.TrimRight(string(buf), "\n"), "\n")
	if len(lines) > tailLines {
		lines = lines[len(lines)-tailLines:]
	}
	return strings.Join(lines, "\n")
}

// Alive reports whether pid is a live process whose command line contains every one of marks
// (so that a pid reused by another program is not taken for ours). A zombie is not alive. It
// reads /proc: Linux only.
func Alive(pid int, marks ...string) bool {
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
// through its pidfile): SIGTERM to its process group, SIGKILL after StopTimeout, and
// waits until it is gone. marks are as in Alive; a pid that is not alive with them is left
// alone.
func StopPID(ctx context.Context, pid int, marks ...string) error {
	if !Alive(pid, marks...) {
		return nil
	}
	if err := syscall.Kill(-pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signalling process %d: %w", pid, err)
	}
	deadline := time.Now().Add(StopTimeout)
	killed := false
	for Alive(pid, marks...) {
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

// FreePort asks the kernel for a TCP port on host that nothing listens on at the moment, for a
// child to listen on. Another process may take it before the child binds it; the child's start
// failure then says so in its log.
func FreePort(host string) (int, error) {
	ports, err := FreePorts(host, 1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}

// FreePorts is FreePort for n children at once. It holds every port until it has all of them,
// so that the n ports differ (FreePort called n times may return one port twice).
func FreePorts(host string, n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return nil, fmt.Errorf("finding a free port on %s: %w", host, err)
		}
		defer func() { _ = l.Close() }()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// StopAll stops procs in reverse start order and returns the errors of those that had to be
// killed. An exit status is no error here: kube-scheduler and kwok exit 1 on SIGTERM, as they
// always do.
func StopAll(procs []*Process) error {
	var errs []error
	for i := len(procs) - 1; i >= 0; i-- {
		if err := procs[i].Stop(); errors.Is(err, ErrKilled) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// PollWhileRunning calls done every interval, for at most timeout, until it reports true. It
// fails at once, with that process's exit error, as soon as one of procs has exited.
func PollWhileRunning(ctx context.Context, what string, procs []*Process, interval, timeout time.Duration,
	done func(context.Context) (bool, error),
) error {
	ctx, cancel := WhileRunningWithin(ctx, timeout, procs...)
	defer cancel()
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		ok, err := done(ctx)
		if err == nil && ok {
			return nil
		}
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, context.Cause(ctx))
		case <-ticker.C:
		}
	}
}
