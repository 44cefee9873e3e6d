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

package manager

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Start gives the probe and every port flag a loopback port of its own, and says which. (Ports
// chosen one at a time once gave the metrics server the probe's port: the manager exited with
// "address already in use" and the benchmark waited for clusters nobody reconciled.)
func TestStartGivesEveryPortFlagItsOwnPort(t *testing.T) {
	dir := t.TempDir()
	argsFile := filepath.Join(dir, "args")
	script := filepath.Join(dir, "manager")
	// A stand-in manager that records its flags and exits: Start then reports the exit.
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$@\" > "+argsFile+"\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	flags := []string{MetricsFlag, PprofFlag}
	_, err := Start(context.Background(), Options{
		Binary: script, LogPath: filepath.Join(dir, "log"), PortFlags: flags, Args: []string{"--x"},
		ReadyTimeout: 10 * time.Second,
	})
	if err == nil || !strings.Contains(err.Error(), "the manager exited") {
		t.Fatalf("Start of a binary that exits: err %v, want 'the manager exited'", err)
	}
	raw, err := os.ReadFile(argsFile)
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Fields(string(raw))
	seen := map[string]string{}
	for _, flag := range append([]string{"--health-probe-bind-address"}, flags...) {
		value := ""
		for _, a := range args {
			if v, ok := strings.CutPrefix(a, flag+"="); ok {
				value = v
			}
		}
		if !strings.HasPrefix(value, "127.0.0.1:") {
			t.Errorf("%s=%q, want a loopback address; args %q", flag, value, args)
		}
		if other, dup := seen[value]; dup {
			t.Errorf("%s and %s share %s", flag, other, value)
		}
		seen[value] = flag
	}
	if args[len(args)-1] != "--x" {
		t.Errorf("Options.Args come last: %q", args)
	}
}
