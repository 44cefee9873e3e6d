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

// Package manager runs the operator's manager binary as a host process beside a local control
// plane, for the suites that need the real binary (test/e2e, test/ha, test/olme2e, hack/bench):
// a free loopback port for its probes and a wait until /readyz answers, on top of test/harness/proc's
// Process (its output in a log file, its own process group, a parent-death signal so that it
// never outlives the test).
package manager

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"syscall"
	"time"

	"github.com/seed1b407122/database-operator/test/harness/proc"
)

// defaultReadyTimeout bounds the wait for /readyz when Options.ReadyTimeout is 0.
const defaultReadyTimeout = time.Minute

// ErrStillRunning is returned by WaitExit when the process did not exit in time.
var ErrStillRunning = errors.New("the manager is still running")

// The manager's address flags that harnesses give a port of their own (Options.PortFlags).
const (
	MetricsFlag = "--metrics-bind-address"
	PprofFlag   = "--pprof-bind-address"
)

// Options describe one manager process.
type Options struct {
	// Binary is the manager binary (bin/manager).
	Binary string
	// Kubeconfig is the manager's KUBECONFIG.
	Kubeconfig string
	// LogPath receives the manager's output; it is created or truncated.
	LogPath string
	// Args are the manager's flags; Start adds --health-probe-bind-address on a free
	// loopback port.
	Args []string
	// PortFlags are address flags (e.g. "--metrics-bind-address") that Start sets to a free
	// loopback port each. The ports are chosen together with the probe's, so no two are alike:
	// ports chosen one at a time may repeat, and the manager then fails to bind.
	PortFlags []string
	// Env is added to this process's environment.
	Env []string
	// ReadyTimeout bounds the wait for /readyz (default one minute).
	ReadyTimeout time.Duration
}

// Process is one running manager.
type Process struct {
	LogPath   string
	ProbePort int
	// Ports are the ports Start gave Options.PortFlags, by flag.
	Ports map[string]int

	proc process
}

// process is what Process needs of a running program: a *proc.Process, or fakeProcess.
type process interface {
	PID() int
	Done() <-chan struct{}
	Err() error
}

// Start runs the manager and waits until /readyz answers 200. A manager that exits or does not
// get ready in time is an error naming its log; it is killed in the latter case.
func Start(ctx context.Context, o Options) (*Process, error) {
	free, err := proc.FreePorts("127.0.0.1", 1+len(o.PortFlags))
	if err != nil {
		return nil, err
	}
	probePort := free[0]
	args := []string{fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", probePort)}
	ports := map[string]int{}
	for i, flag := range o.PortFlags {
		ports[flag] = free[1+i]
		args = append(args, fmt.Sprintf("%s=127.0.0.1:%d", flag, free[1+i]))
	}
	args = append(args, o.Args...)
	env := append([]string{"KUBECONFIG=" + o.Kubeconfig}, o.Env...)
	childProc, err := proc.Start("manager", o.Binary, args, proc.Options{LogPath: o.LogPath, Env: env})
	if err != nil {
		return nil, fmt.Errorf("%w (build it with 'make build')", err)
	}
	p := &Process{LogPath: o.LogPath, ProbePort: probePort, Ports: ports, proc: childProc}
	timeout := o.ReadyTimeout
	if timeout == 0 {
		timeout = defaultReadyTimeout
	}
	if err := p.waitReady(ctx, timeout); err != nil {
		p.Kill()
		return nil, err
	}
	return p, nil
}

func (p *Process) waitReady(ctx context.Context, timeout time.Duration) error {
	url := fmt.Sprintf("http://127.0.0.1:%d/readyz", p.ProbePort)
	probe := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-p.proc.Done():
			return fmt.Errorf("the manager exited (%w); see %s", p.proc.Err(), p.LogPath)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		resp, err := probe.Get(url)
		if err != nil {
			continue
		}
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return nil
		}
	}
	return fmt.Errorf("the manager was not ready within %s; see %s", timeout, p.LogPath)
}

// Pid is the manager's process id.
func (p *Process) Pid() int { return p.proc.PID() }

// Running reports whether the process has not exited yet.
func (p *Process) Running() bool { return !proc.Closed(p.proc.Done()) }

// Done is closed when the manager has exited.
func (p *Process) Done() <-chan struct{} { return p.proc.Done() }

// ExitErr is the process's exit error (nil for exit code 0), once it has exited.
func (p *Process) ExitErr() error { return p.proc.Err() }

// Signal sends sig to the manager (and only to it: it runs in its own process group).
func (p *Process) Signal(sig syscall.Signal) error {
	return syscall.Kill(p.Pid(), sig)
}

// WaitExit waits up to timeout for the manager to exit. It returns ErrStillRunning when it did
// not, otherwise nil and the process's exit error.
func (p *Process) WaitExit(timeout time.Duration) (exitErr, err error) {
	select {
	case <-p.proc.Done():
		return p.proc.Err(), nil
	case <-time.After(timeout):
		return nil, fmt.Errorf("the manager (pid %d) did not exit within %s: %w", p.Pid(), timeout, ErrStillRunning)
	}
}

// Stop sends SIGINT and waits up to timeout for a clean exit; a manager still running then is
// killed. The error is the exit error, or says that it had to be killed.
func (p *Process) Stop(timeout time.Duration) error {
	if !p.Running() {
		return p.ExitErr()
	}
	_ = p.Signal(syscall.SIGINT)
	exitErr, err := p.WaitExit(timeout)
	if err != nil {
		p.Kill()
		return fmt.Errorf("%w; killed", err)
	}
	if exitErr != nil {
		return fmt.Errorf("the manager exited with %w on SIGINT; see %s", exitErr, p.LogPath)
	}
	return nil
}

// Kill kills the manager if it still runs and waits (up to 30 s) until it is gone.
func (p *Process) Kill() {
	if p.Running() {
		_ = p.Signal(syscall.SIGKILL)
	}
	_, _ = p.WaitExit(30 * time.Second)
}

// Fake returns a Process that runs nothing, for unit tests of code that watches managers: it
// counts as running until exit is called, and its log is logPath.
func Fake(logPath string) (p *Process, exit func()) {
	f := &fakeProcess{done: make(chan struct{})}
	return &Process{LogPath: logPath, proc: f}, func() { close(f.done) }
}

// fakeProcess is a process without a program; it exits with status 0 when done is closed.
type fakeProcess struct{ done chan struct{} }

func (f *fakeProcess) PID() int              { return 0 }
func (f *fakeProcess) Done() <-chan struct{} { return f.done }
func (f *fakeProcess) Err() error            { return nil }
