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

package main

// Stepping down. A primary is demoted by the member agent (its Fence), which creates the file
// demote.signal in PGDATA through the server (the agent runs in another container, and reaches
// the server only over SQL). The entrypoint, which polls for it while a primary runs, then:
//
//  1. stops the server with the fast shutdown: its last WAL record is the shutdown checkpoint,
//     and the server ends only once its WAL senders have sent everything up to it to the
//     replicas connected, and they have confirmed it. Nothing is written on the old timeline
//     after that point, so the replica the operator promotes next (once it holds that position)
//     forks the new timeline after it, and every other replica can follow the new primary
//     without a rewind. A primary that stayed up read-only would go on writing WAL (a
//     checkpoint, a snapshot of running transactions every 15 s, its own shutdown's checkpoint
//     later) that a replica still streaming from it receives, and that replica could then not
//     follow the new primary's timeline;
//  2. makes PGDATA a standby of the announced primary address (NAME-rw) and starts the server
//     again, in the same container.
//
// Every replica's primary_conninfo carries target_session_attrs=read-write, so that a standby
// never streams from a server that takes no writes: not from itself while NAME-rw still selects
// its pod, not from a primary fenced read-only. It retries until NAME-rw reaches the new primary.

import (
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

const (
	// demoteSignal in PGDATA asks the running primary to step down.
	demoteSignal = "demote.signal"
	// demotePollInterval is how often a running server's PGDATA is checked for demoteSignal.
	demotePollInterval = 100 * time.Millisecond
)

// serverEnd is how one run of the server ended.
type serverEnd struct {
	err error
	// demoted: it was stopped to step down, and stopped cleanly.
	demoted bool
}

// serve runs args as a child, passing the stop signals on (SIGTERM as SIGINT), until it exits;
// its exit code becomes this program's. With an announcement (c.roleDir), a primary asked to
// step down is stopped and started again as a standby, as often as it is asked.
func serve(c config, args []string) error {
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGHUP)
	for {
		end, err := runServer(c, args, signals)
		if err != nil {
			return err
		}
		if !end.demoted {
			return exitLike(end.err)
		}
		if err := stepDown(c); err != nil {
			return err
		}
		logf("starting the server again, as a standby")
	}
}

// runServer runs the server once, until it exits.
func runServer(c config, args []string, signals <-chan os.Signal) (serverEnd, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = serveAttr
	if err := cmd.Start(); err != nil {
		return serverEnd{}, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var tick <-chan time.Time
	if c.roleDir != "" {
		ticker := time.NewTicker(c.demotePoll)
		defer ticker.Stop()
		tick = ticker.C
	}
	stopping, demoting := false, false
	for {
		select {
		case sig := <-signals:
			if sig == syscall.SIGTERM {
				sig = syscall.SIGINT
			}
			stopping = stopping || sig == syscall.SIGINT || sig == syscall.SIGQUIT
			_ = cmd.Process.Signal(sig)
		case <-tick:
			if demoting || stopping || !demoteRequested(c.pgdata) {
				continue
			}
			logf("asked to step down (%s): stopping the server (fast shutdown), to start it again as a standby", demoteSignal)
			demoting = true
			_ = cmd.Process.Signal(syscall.SIGINT)
		case err := <-exited:
			return serverEnd{err: err, demoted: demoting && !stopping && err == nil}, nil
		}
	}
}

// demoteRequested tells whether PGDATA asks a primary to step down: demoteSignal is there, and
// standby.signal is not (a standby has nothing to step down from).
func demoteRequested(pgdata string) bool {
	asked, err := exists(filepath.Join(pgdata, demoteSignal))
	if err != nil || !asked {
		return false
	}
	standby, err := exists(filepath.Join(pgdata, standbySignal))
	return err == nil && !standby
}

// stepDown makes the stopped PGDATA a standby of the announced primary address, and removes
// demoteSignal last: a restart in between finds the request still there, or the standby.
func stepDown(c config) error {
	if err := pointAtPrimary(c); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(c.pgdata, standbySignal), ""); err != nil {
		return err
	}
	if err := writeReplicationPassfile(c); err != nil {
		return err
	}
	logf("stepped down: %s is a standby", c.pgdata)
	return removeDemoteSignal(c.pgdata)
}

// pointAtPrimary sets PGDATA's primary_conninfo to the announced primary address (primary-host
// and primary-port, which every member is announced), when there is one. Without it the
// standby waits in recovery until its next start as a replica points it.
func pointAtPrimary(c config) error {
	a, ok, err := readPrimaryAddress(c.roleDir)
	if err != nil || !ok {
		return err
	}
	a.role = roleReplica
	src, _, err := replicaSource(c, a)
	if err != nil {
		return err
	}
	_, err = setPrimaryConninfo(c.pgdata, replicaConninfo(c, src))
	return err
}

// stepDownIfAsked honours, before the server starts, a request to step down that a stop came
// before (the container restarted meanwhile); a request left in a standby's PGDATA (copied by a
// clone, or late) is removed.
func stepDownIfAsked(c config) error {
	if c.roleDir == "" {
		return nil
	}
	if demoteRequested(c.pgdata) {
		logf("asked to step down (%s) before the server started", demoteSignal)
		return stepDown(c)
	}
	return removeDemoteSignal(c.pgdata)
}

// removeDemoteSignal removes PGDATA's demoteSignal, if it is there.
func removeDemoteSignal(pgdata string) error {
	if err := os.Remove(filepath.Join(pgdata, demoteSignal)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// writeFile writes content to path, mode 0600.
func writeFile(path, content string) error {
	return os.WriteFile(path, []byte(content), 0o600)
}
