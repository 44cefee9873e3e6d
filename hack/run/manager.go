package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/seed1b407122/database-operator/test/harness/proc"
)

const (
	// managerStopTimeout is how long the manager may take to stop after the first signal;
	// controller-runtime's own graceful shutdown timeout is 30 s.
	managerStopTimeout = 45 * time.Second
	// buildStopDelay is how long "go build" may take to stop after an interrupt.
	buildStopDelay = 10 * time.Second
)

// buildManager builds the root package into out. An interrupt stops the build.
func buildManager(ctx context.Context, out string) error {
	logf("Building the manager: go build -o %s .", out)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, ".")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	// SIGINT lets go stop its compilers; SIGKILL (the default) would leave them running.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = buildStopDelay
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building the manager: %w", err)
	}
	return nil
}

// startManager starts the manager with KUBECONFIG set, its output passed through. It leads its
// own process group, which keeps a terminal's Ctrl-C from reaching the manager directly: this
// command forwards exactly one signal (controller-runtime exits at once on a second one). It
// also dies with this command.
func startManager(bin string, args []string, kubeconfig string) (*proc.Process, error) {
	var env []string
	if kubeconfig != "" {
		env = append(env, clientcmd.RecommendedConfigPathEnvVar+"="+kubeconfig)
	}
	p, err := proc.Start("manager", bin, args, proc.Options{Output: os.Stdout, Env: env})
	if err != nil {
		return nil, err
	}
	logf("Manager started (pid %d): %s %v", p.PID(), bin, args)
	return p, nil
}

// superviseManager waits for the manager. The first signal is forwarded to it; a second one,
// or managerStopTimeout, kills it. It returns 0 after a signal, else the manager's exit code.
func superviseManager(p *proc.Process, signals <-chan os.Signal) int {
	select {
	case <-p.Done():
		logf("Manager exited with code %d.", p.ExitCode())
		return p.ExitCode()
	case sig := <-signals:
		logf("%v received: stopping the manager.", sig)
		if s, ok := sig.(syscall.Signal); ok {
			_ = p.Signal(s)
		}
	}
	select {
	case <-p.Done():
		logf("Manager stopped (exit code %d).", p.ExitCode())
		return 0
	case sig := <-signals:
		logf("%v received again: killing the manager.", sig)
	case <-time.After(managerStopTimeout):
		logf("The manager did not stop within %s: killing it.", managerStopTimeout)
	}
	_ = p.Signal(syscall.SIGKILL)
	<-p.Done()
	logf("Manager killed (exit code %d).", p.ExitCode())
	return 0
}
