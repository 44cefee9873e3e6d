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

package leader

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/seed1b407122/database-operator/test/harness/manager"
)

func TestSummarize(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name string
		in   []time.Duration
		want Summary
	}{
		{"none", nil, Summary{}},
		{"one", []time.Duration{1500 * time.Millisecond}, Summary{Runs: 1, MinSec: 1.5, MedianSec: 1.5, MaxSec: 1.5}},
		{"odd count, unsorted", []time.Duration{17 * s, 15 * s, 16 * s}, Summary{Runs: 3, MinSec: 15, MedianSec: 16, MaxSec: 17}},
		{"even count: mean of the middle two", []time.Duration{4 * s, 1 * s, 3 * s, 2 * s}, Summary{Runs: 4, MinSec: 1, MedianSec: 2.5, MaxSec: 4}},
		{"repeated values", []time.Duration{2 * s, 2 * s, 9 * s}, Summary{Runs: 3, MinSec: 2, MedianSec: 2, MaxSec: 9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]time.Duration(nil), tc.in...)
			if got := Summarize(tc.in); got != tc.want {
				t.Errorf("Summarize(%v) = %+v, want %+v", tc.in, got, tc.want)
			}
			for i := range in {
				if in[i] != tc.in[i] {
					t.Fatalf("Summarize reordered its input: %v", tc.in)
				}
			}
		})
	}
}

func TestLogged(t *testing.T) {
	log := `I1122 some klog line that is not JSON
{"level":"info","ts":1,"msg":"Attempting to acquire leader lease...","lease":"x"}
{"level":"info","ts":2,"msg":"Starting workers","controller":"echo","worker count":16}
{"level":"info","ts":3,"msg":"Starting workers","controller":"databasecluster","worker count":16}
{"level":"info","ts":4, broken json
`
	p, _ := manager.Fake(filepath.Join(t.TempDir(), "manager-t.log"))
	m := &Manager{Process: p, Name: "t"}
	if m.Logged(MsgAttemptingLease) {
		t.Error("a missing log counts as logged")
	}
	if err := os.WriteFile(m.LogPath, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		msg  string
		kv   []string
		want bool
	}{
		{MsgAttemptingLease, nil, true},
		{MsgAcquiredLease, nil, false},
		{MsgStartingWorkers, []string{"controller", "echo"}, true},
		{MsgStartingWorkers, []string{"controller", "databasecluster", "worker count", "16"}, true},
		{MsgStartingWorkers, []string{"controller", "voteconfig"}, false},
	} {
		if got := m.Logged(tc.msg, tc.kv...); got != tc.want {
			t.Errorf("Logged(%q, %v) = %v, want %v", tc.msg, tc.kv, got, tc.want)
		}
	}
	if !m.Reconciling() {
		t.Error("Reconciling() = false after the databasecluster workers started")
	}
	if got := len(mustEntries(t, m)); got != 3 {
		t.Errorf("%d JSON entries, want 3 (the klog line and the broken one skipped)", got)
	}
}

func mustEntries(t *testing.T, m *Manager) []map[string]any {
	t.Helper()
	entries, err := m.LogEntries()
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

func TestSigName(t *testing.T) {
	for sig, want := range map[syscall.Signal]string{
		syscall.SIGTERM: "SIGTERM", syscall.SIGKILL: "SIGKILL", syscall.SIGHUP: "hangup",
	} {
		if got := sigName(sig); got != want {
			t.Errorf("sigName(%d) = %q, want %q", sig, got, want)
		}
	}
}

func TestFailoverString(t *testing.T) {
	f := Failover{Total: 1234567 * time.Microsecond, LeaseMoved: time.Second, Workers: 1100 * time.Millisecond,
		Changed: 900 * time.Millisecond, Applied: 1234567 * time.Microsecond}
	want := "1.235s (Lease moved after 1s, workers started after 1.1s; change made after 900ms, applied after 1.235s)"
	if got := f.String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
