//go:build linux

// Command pause is the CRI sandbox ("pause") image of the real-node tests: the first process of
// every pod, which holds the pod's namespaces open. Upstream's pause is a small C program in an
// image that cannot be pulled here, so this is its Go equivalent, built static (CGO_ENABLED=0)
// into database-operator.test/pause:v1 (make node-images); containerd's sandbox_image names it.
//
// As PID 1 of the pod's PID namespace (shareProcessNamespace) it must reap the orphans that are
// reparented to it, so it waits for SIGCHLD as well as for SIGTERM/SIGINT, on which it exits 0.
// PID 1 gets no default signal dispositions: without these handlers SIGTERM would be ignored.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// version is printed by -v, like upstream's pause.
const version = "database-operator.test/pause v1"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-v" {
		fmt.Println(version)
		return
	}
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "Warning: pause should be the first process")
	}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for sig := range sigs {
		if sig == syscall.SIGCHLD {
			reap()
			continue
		}
		fmt.Fprintf(os.Stderr, "Shutting down, got signal: %v\n", sig)
		os.Exit(0)
	}
}

// reap collects every exited child. Signals coalesce, so one SIGCHLD may stand for many exits:
// loop until no child is left to wait for.
func reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
	}
}
