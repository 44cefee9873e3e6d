package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/seed1b407122/database-operator/test/child"
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

// startManager starts the manager with KUBECONFIG set, its output passed through.
func startManager(bin string, args []string, kubeconfig string) (*exec.Cmd, error) {
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Env = os.Environ()
	if kubeconfig != "" {
		cmd.Env = append(cmd.Env, clientcmd.RecommendedConfigPathEnvVar+"="+kubeconfig)
	}
	// Its own process group keeps a terminal's Ctrl-C from reaching the manager directly: this
	// command forwards exactly one signal (controller-runtime exits at once on a second one).
	// It also dies with this command.
	cmd.SysProcAttr = child.SysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the manager %s: %w", bin, err)
	}
	logf("Manager started (pid %d): %s %v", cmd.Process.Pid, bin, args)
	return cmd, nil
}

// superviseManager waits for the manager. The first signal is forwarded to it; a second one,
// or managerStopTimeout, kills it. It returns 0 after a signal, else the manager's exit code.
func superviseManager(cmd *exec.Cmd, signals <-chan os.Signal) int {
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		code := exitCode(err)
		logf("Manager exited with code %d.", code)
		return code
	case sig := <-signals:
		logf("%v received: stopping the manager.", sig)
		_ = cmd.Process.Signal(sig)
	}
	select {
	case err := <-exited:
		logf("Manager stopped (exit code %d).", exitCode(err))
		return 0
	case sig := <-signals:
		logf("%v received again: killing the manager.", sig)
	case <-time.After(managerStopTimeout):
		logf("The manager did not stop within %s: killing it.", managerStopTimeout)
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	logf("Manager killed (exit code %d).", exitCode(<-exited))
	return 0
}

// exitCode maps the result of Wait to an exit code, 128+n for a death by signal n.
func exitCode(err error) int {
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		if err != nil {
			return 1
		}
		return 0
	}
	if status, ok := exitErr.Sys().(syscall.WaitStatus); ok && status.Signaled() {
		return 128 + int(status.Signal())
	}
	return exitErr.ExitCode()
}
