package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/seed1b407122/database-operator/test/harness/proc"
)

func TestParseMachineCPU(t *testing.T) {
	stat := "cpu  100 20 30 400 50 6 7 8 9 10\ncpu0 1 2 3 4 5 6 7 8 9 10\n"
	busy, available, err := parseMachineCPU(stat)
	if err != nil {
		t.Fatal(err)
	}
	// busy: user nice system irq softirq steal = 100+20+30+6+7+8; available adds idle 400, iowait 50.
	if busy != 1.71 || available != 6.21 {
		t.Fatalf("busy, available = %v, %v; want 1.71, 6.21", busy, available)
	}
	if _, _, err := parseMachineCPU("intr 1 2 3\n"); err == nil {
		t.Error("a file without the cpu line did not fail")
	}
}

func TestDescends(t *testing.T) {
	procs := map[int]proc.Stat{
		1: {PPID: 0}, 10: {PPID: 1}, 20: {PPID: 10}, 30: {PPID: 20}, 40: {PPID: 1}, 50: {PPID: 99},
	}
	for pid, want := range map[int]bool{20: true, 30: true, 10: false, 40: false, 50: false, 77: false} {
		if got := descends(procs, pid, 10); got != want {
			t.Errorf("descends(%d, 10) = %v, want %v", pid, got, want)
		}
	}
}

func TestCPUMinus(t *testing.T) {
	base := cpuReading{byProcess: map[string]float64{"etcd": 1, "manager": 2}, busy: 10, available: 40}
	now := cpuReading{byProcess: map[string]float64{"etcd": 4, "manager": 2.5, "kwok": 1}, busy: 30, available: 80}
	want := map[string]float64{"etcd": 3, "manager": 0.5, "kwok": 1, machineBusy: 20, machineAvailable: 40}
	if got := now.minus(base); !reflect.DeepEqual(got, want) {
		t.Fatalf("minus = %v, want %v", got, want)
	}
}

// TestReadCPUSeesItself: this process has its row and the machine its totals.
func TestReadCPUSeesItself(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	r, err := readCPU()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.byProcess[selfName]; !ok || r.available <= 0 || r.busy <= 0 {
		t.Fatalf("readCPU = %+v: no row of this process or no machine totals", r)
	}
	if got := processName(os.Getpid(), "cut"); got != filepath.Base(os.Args[0]) {
		t.Errorf("processName(self) = %q, want the executable's name %q", got, filepath.Base(os.Args[0]))
	}
	if got := processName(-1, "cut"); got != "cut" {
		t.Errorf("processName of no process = %q, want the comm it was given", got)
	}
}
