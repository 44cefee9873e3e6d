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

package agentcmd

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWaitFile: with --member-wait-file the agents do not listen until the file is there and
// holds something (an empty file is not an announcement); then they do, at once.
func TestWaitFile(t *testing.T) {
	a := newAuthority(t, "db-ca")
	member := freeAddress(t)
	announcement := filepath.Join(t.TempDir(), "etcd-initial-cluster")
	cmd := start(t, "--engine=etcd", "--member-listen="+member, "--member-tls-dir="+writeTLSDir(t, a),
		"--member-name=db-0", "--database-url=http://127.0.0.1:1", "--member-wait-file="+announcement)

	refusedFor := func(d time.Duration) {
		t.Helper()
		for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if conn, err := net.DialTimeout("tcp", member, time.Second); err == nil {
				_ = conn.Close()
				t.Fatalf("the member agent listens on %s before the announcement", member)
			}
		}
	}
	refusedFor(time.Second)
	if err := os.WriteFile(announcement, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	refusedFor(time.Second)

	if err := os.WriteFile(announcement, []byte("db-0=https://db-0.db-headless.ns.svc:2380"), 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", member, time.Second)
		if err == nil {
			_ = conn.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the member agent does not listen 3s after the announcement: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.stop()
	select {
	case code := <-cmd.done:
		if code != 0 {
			t.Fatalf("the command stopped with %d: %q", code, cmd.stderr.String())
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the command did not return within 2s of its stop")
	}
	if said := cmd.stderr.String(); !strings.Contains(said, "waiting for "+announcement) {
		t.Errorf("stderr = %q, want it to say what it waits for", said)
	}
}
