package proc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStopAllIgnoresExitStatus: a component that exits 1 on SIGTERM, as kube-scheduler and
// kwok do, is stopped without an error, like one that dies of the signal.
func TestStopAllIgnoresExitStatus(t *testing.T) {
	dir := t.TempDir()
	scripts := map[string]string{
		"exits-1": "trap 'exit 1' TERM; echo ready; while :; do sleep 0.05; done",
		"dies":    "echo ready; sleep 60",
	}
	var procs []*Process
	for _, name := range []string{"exits-1", "dies"} {
		p, err := Start(name, "/bin/sh", []string{"-c", scripts[name]}, Options{LogPath: filepath.Join(dir, name+".log"), Append: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Stop() })
		procs = append(procs, p)
		waitReady(t, p)
	}
	if err := StopAll(procs); err != nil {
		t.Fatalf("StopAll = %v, want nil", err)
	}
	for _, p := range procs {
		if !p.Exited() {
			t.Fatalf("%s still runs", p.Name)
		}
	}
	if err := procs[0].Err(); err == nil || !strings.Contains(err.Error(), "exit status 1") {
		t.Fatalf("exits-1: Err = %v, want exit status 1", err)
	}
}

// waitReady waits for a script to say "ready": a signal before its trap is set would end it
// differently.
func waitReady(t *testing.T, p *Process) {
	t.Helper()
	for range 200 {
		if data, _ := os.ReadFile(p.LogPath); strings.Contains(string(data), "ready") {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("%s did not get ready; log %s", p.Name, filepath.Base(p.LogPath))
}
