package localcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

const (
	// stopTimeout is how long a child gets between SIGTERM and SIGKILL.
	stopTimeout = 10 * time.Second
	// logTailBytes bounds how much of a log an error message quotes.
	logTailBytes = 3000
)

// Process is one child of the cluster (kube-controller-manager, kube-scheduler, kwok), or of a
// harness built on it (StartProcess).
type Process struct {
	name string
	// LogPath is the file the child's output goes to.
	LogPath string
	cmd     *exec.Cmd
	logFile *os.File
	// done is closed once Wait has returned; waitErr holds its result.
	done    chan struct{}
	waitErr error
}

// StartProcess starts bin with args in its own process group, its output appended to
// workDir/<name>.log. The child is not tied to any context: it lives until Stop, or until the
// thread that started it dies (ChildSysProcAttr).
func StartProcess(name, bin string, args []string, workDir string, env []string) (*Process, error) {
	logPath := filepath.Join(workDir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the log of %s: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = workDir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = ChildSysProcAttr()
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Process{name: name, LogPath: logPath, cmd: cmd, logFile: logFile, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		_ = logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Pid returns the child's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// ExitError describes an unexpected exit, with the tail of the log.
func (p *Process) ExitError() error {
	return fmt.Errorf("%s exited early (%w); tail of %s:\n%s", p.name, p.waitErr, p.LogPath, tailFile(p.LogPath))
}

// Stop sends SIGTERM to the process group, then SIGKILL after stopTimeout, and waits for the
// child in both cases. It is safe to call on a process that has already exited.
func (p *Process) Stop() error {
	if p.Exited() {
		return nil
	}
	// The child leads its own process group (Setpgid): signal the group so that anything it
	// spawned goes too.
	_ = syscall.Kill(-p.Pid(), syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(stopTimeout):
	}
	_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
	<-p.done
	return fmt.Errorf("%s did not stop within %s after SIGTERM and was killed", p.name, stopTimeout)
}

// tailFile returns the last logTailBytes of a file, starting at a line boundary.
func tailFile(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(cannot read: %v)", err)
	}
	defer func() { _ = f.Close() }()
	info, err := f.Stat()
	if err != nil {
		return fmt.Sprintf("(cannot stat: %v)", err)
	}
	offset := max(info.Size()-logTailBytes, 0)
	buf := make([]byte, info.Size()-offset)
	if _, err := f.ReadAt(buf, offset); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Sprintf("(cannot read: %v)", err)
	}
	if offset > 0 {
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		}
	}
	return string(buf)
}

// WaitWhileRunning polls done every interval, for at most timeout, until it reports true. It
// fails at once, with that process's exit error, as soon as one of procs has exited.
func WaitWhileRunning(ctx context.Context, what string, procs []*Process, interval, timeout time.Duration,
	done func(context.Context) (bool, error),
) error {
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(ctx context.Context) (bool, error) {
		for _, p := range procs {
			if p.Exited() {
				return false, p.ExitError()
			}
		}
		return done(ctx)
	})
	if err != nil {
		return fmt.Errorf("waiting for %s: %w", what, err)
	}
	return nil
}
