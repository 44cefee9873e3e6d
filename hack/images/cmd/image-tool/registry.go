package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"github.com/seed1b407122/database-operator/hack/images"
)

// runRegistry is "image-tool registry": an in-memory OCI registry on --addr with the --push
// layouts in it. With a command after the flags it runs the command with REGISTRY=host:port in
// its environment and stops when the command ends (exit status passed on); without one it serves
// until SIGTERM or SIGINT. --ready names a file written once every layout is pushed: the address
// on the first line, then "<repo@digest>" per pushed layout.
//
//	image-tool registry --addr 10.89.0.1:0 --ready /tmp/registry --push bin/opm=operator-framework/opm:v1.74.0
//	image-tool registry --push bundle-0.3.0=seed1b407122/database-operator-bundle -- sh -c 'opm render --use-http $REGISTRY/...'
func runRegistry(args []string) error {
	fs := flag.NewFlagSet("registry", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:0", "host:port to listen on (port 0: any free port)")
	ready := fs.String("ready", "", "file to write once every layout is pushed: the address, then the pushed references")
	logFile := fs.String("log", "", "file to append a line per request to (default: none)")
	var pushes listFlag
	fs.Var(&pushes, "push", "LAYOUT=REPO[:TAG], an OCI layout directory and the repository to push it to; repeatable")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var logs io.Writer
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		logs = f
	}
	reg, err := images.ServeRegistry(*addr, logs)
	if err != nil {
		return err
	}
	err = pushAndRun(reg, pushes, *ready, fs.Args())
	return errors.Join(err, reg.Close())
}

func pushAndRun(reg *images.Registry, pushes []string, ready string, command []string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	lines := []string{reg.Addr}
	for _, p := range pushes {
		layout, repo, ok := strings.Cut(p, "=")
		if !ok || layout == "" || repo == "" {
			return fmt.Errorf("--push %q: want LAYOUT=REPO[:TAG]", p)
		}
		ref, err := reg.PushLayout(ctx, layout, repo)
		if err != nil {
			return err
		}
		lines = append(lines, ref)
	}
	fmt.Fprintf(os.Stderr, "registry on %s holds %d images\n", reg.Addr, len(pushes))
	if ready != "" {
		if err := os.WriteFile(ready+".tmp", []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			return err
		}
		if err := os.Rename(ready+".tmp", ready); err != nil {
			return err
		}
	}
	if len(command) == 0 {
		<-ctx.Done()
		return nil
	}
	cmd := exec.CommandContext(ctx, command[0], command[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "REGISTRY="+reg.Addr)
	return cmd.Run()
}
