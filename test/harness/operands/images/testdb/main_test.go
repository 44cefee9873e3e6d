package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed1b407122/database-operator/test/harness/operands/testdb"
)

// The binary as the image runs it: flags, the start log, SIGTERM exits 0, data survives a restart.
func TestBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "testdb")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	data := t.TempDir()

	addr, logs, stop := run(t, bin, data)
	if !strings.Contains(logs(), "Loaded 0 keys") {
		t.Errorf("start log %q does not say how many keys were loaded", logs())
	}
	c, err := testdb.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Put("greeting", "hello node"); err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	stop()

	addr, logs, stop = run(t, bin, data)
	defer stop()
	if !strings.Contains(logs(), "Loaded 1 keys (1 records)") {
		t.Errorf("restart log %q, want it to report the 1 key loaded", logs())
	}
	c, err = testdb.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if v, ok, err := c.Get("greeting"); err != nil || !ok || v != "hello node" {
		t.Fatalf("Get after restart = %q, %v, %v", v, ok, err)
	}
}

// PORT sets the default of --listen (checked through -h, without binding every interface).
func TestPortEnv(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "testdb")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-h")
	cmd.Env = append(os.Environ(), "PORT=19123")
	out, _ := cmd.CombinedOutput() // -h exits 0 or 2 depending on the Go version
	if !strings.Contains(string(out), `(default ":19123")`) {
		t.Fatalf("-h with PORT=19123:\n%s", out)
	}
}

// run starts bin on a free loopback port with dataDir and waits for "Listening on"; it returns
// the address, the start log and a stop function that sends SIGTERM and expects exit 0.
func run(t *testing.T, bin, dataDir string) (string, func() string, func()) {
	t.Helper()
	cmd := exec.Command(bin, "--listen", "127.0.0.1:0", "--data-dir", dataDir)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	type started struct{ addr, logs string }
	ready := make(chan started, 1)
	go func() {
		var logs strings.Builder
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logs.WriteString(sc.Text() + "\n")
			if _, a, ok := strings.Cut(sc.Text(), "Listening on "); ok {
				ready <- started{addr: a, logs: logs.String()}
			}
		}
	}()
	var st started
	select {
	case st = <-ready:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("testdb did not listen within 10s")
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("testdb exited with %v after SIGTERM, want 0", err)
			}
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			t.Error("testdb did not exit within 10s of SIGTERM")
		}
	}
	t.Cleanup(stop)
	return st.addr, func() string { return st.logs }, stop
}
