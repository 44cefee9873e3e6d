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

// Package leader runs manager processes with leader election on the local control plane, finds
// the one that holds the Lease, stops it (SIGTERM: the Lease is released; SIGKILL: it expires)
// and measures how long until another process holds the Lease and has reconciled a change made
// while no manager led. test/ha asserts on these measurements, hack/bench reports them.
package leader

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/seed1b407122/database-operator/test/harness/manager"
)

// The manager's defaults that the managers run with: the Lease (--leader-election-id, in the
// namespace given by --leader-election-namespace) and its timings
// (--leader-election-lease-duration, -renew-deadline, -retry-period).
const (
	LeaseNamespace = "database-operator-system"
	LeaseName      = "database-operator.seed1b407122.io"
	LeaseDuration  = 15 * time.Second
	RenewDeadline  = 10 * time.Second
	RetryPeriod    = 2 * time.Second
)

// Log lines of controller-runtime and client-go that tell where a manager stands.
const (
	// MsgAttemptingLease: the manager waits for the Lease.
	MsgAttemptingLease = "Attempting to acquire leader lease..."
	// MsgAcquiredLease: the manager holds the Lease (a process acquires it at most once: a
	// leader that loses it exits).
	MsgAcquiredLease = "Successfully acquired lease"
	// MsgStartingCtrl and MsgStartingWorkers: controllers start only once the manager leads.
	MsgStartingCtrl    = "Starting Controller"
	MsgStartingWorkers = "Starting workers"
)

// Options describe one manager process.
type Options struct {
	// Binary is the manager binary (bin/manager).
	Binary string
	// Name tells the managers apart in logs; the log file is LogDir/manager-<Name>.log.
	Name   string
	LogDir string
	// Kubeconfig is the manager's KUBECONFIG.
	Kubeconfig string
	// Args are appended to the leader election, probe and metrics flags.
	Args []string
}

// Manager is one running manager process with leader election on and the default timings.
type Manager struct {
	*manager.Process
	Name        string
	MetricsPort int
}

// ErrStillRunning is returned by WaitExit when the process did not exit in time.
var ErrStillRunning = manager.ErrStillRunning

// Start runs the manager binary with leader election on (release on cancel, default timings)
// and waits until its probes answer. It does not wait for leadership. The process gets a
// parent-death signal, so it does not outlive the caller.
func Start(ctx context.Context, opts Options) (*Manager, error) {
	p, err := manager.Start(ctx, manager.Options{
		Binary:     opts.Binary,
		Kubeconfig: opts.Kubeconfig,
		LogPath:    filepath.Join(opts.LogDir, "manager-"+opts.Name+".log"),
		PortFlags:  []string{manager.MetricsFlag},
		Args: append([]string{
			"--leader-elect",
			"--leader-election-namespace=" + LeaseNamespace,
			"--leader-election-release-on-cancel=true",
			"--metrics-secure=false",
			"--zap-log-level=info",
		}, opts.Args...),
	})
	if err != nil {
		return nil, fmt.Errorf("manager %s: %w", opts.Name, err)
	}
	return &Manager{Process: p, Name: opts.Name, MetricsPort: p.Ports[manager.MetricsFlag]}, nil
}

// LogEntries parses the manager's JSON log lines (zap's production encoding); other lines are
// skipped.
func (m *Manager) LogEntries() ([]map[string]any, error) {
	data, err := os.ReadFile(m.LogPath)
	if err != nil {
		return nil, err
	}
	return parseLog(data), nil
}

func parseLog(data []byte) []map[string]any {
	var entries []map[string]any
	scanner := bufio.NewScanner(bytes.NewReader(data))
	scanner.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for scanner.Scan() {
		line := scanner.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var entry map[string]any
		if json.Unmarshal(line, &entry) == nil {
			entries = append(entries, entry)
		}
	}
	return entries
}

// Logged reports whether the manager logged a message msg with the given key/value pairs. An
// unreadable log counts as not logged.
func (m *Manager) Logged(msg string, keysAndValues ...string) bool {
	entries, err := m.LogEntries()
	return err == nil && containsEntry(entries, msg, keysAndValues...)
}

func containsEntry(entries []map[string]any, msg string, keysAndValues ...string) bool {
	for _, e := range entries {
		if e["msg"] != msg {
			continue
		}
		matches := true
		for i := 0; i+1 < len(keysAndValues); i += 2 {
			if fmt.Sprint(e[keysAndValues[i]]) != keysAndValues[i+1] {
				matches = false
			}
		}
		if matches {
			return true
		}
	}
	return false
}

// Reconciling reports whether the manager started the workers of the databasecluster
// controller, which controller-runtime does only once the manager leads.
func (m *Manager) Reconciling() bool {
	return m.Logged(MsgStartingWorkers, "controller", "databasecluster")
}

// WaitLogged waits up to timeout until the manager logs msg (with the key/value pairs).
func (m *Manager) WaitLogged(ctx context.Context, timeout time.Duration, msg string, keysAndValues ...string) error {
	deadline := time.Now().Add(timeout)
	for !m.Logged(msg, keysAndValues...) {
		if !m.Running() {
			return fmt.Errorf("manager %s exited (%w) before logging %q; see %s", m.Name, m.ExitErr(), msg, m.LogPath)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("manager %s did not log %q within %s; see %s", m.Name, msg, timeout, m.LogPath)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}

// LogTail is the end of the manager's log, at most n bytes.
func (m *Manager) LogTail(n int) string {
	data, err := os.ReadFile(m.LogPath)
	if err != nil {
		return err.Error()
	}
	if len(data) > n {
		data = data[len(data)-n:]
	}
	return string(data)
}
