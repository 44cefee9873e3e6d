package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/seed1b407122/database-operator/test/harness/proc"
)

// Where the machine's CPU goes while the clusters converge. Every process of a case is this
// benchmark's descendant (kube-apiserver, etcd, kube-controller-manager, kube-scheduler, kwok,
// the manager) or the benchmark itself (its clients, the CSI simulator), so
// reading /proc for the descendants at both ends of the window splits the CPU by process, and
// /proc/stat says how much of the machine was busy. On a machine whose cores are saturated,
// that split is where an operator's overhead against the floor comes from.

// selfName is the row of the benchmark's own process: its clients and the CSI simulator.
const selfName = "bench (clients, CSI)"

// Rows of the machine's totals in cpuSecondsByProcess; the parentheses sort them first.
const (
	machineBusy      = "(machine busy)"
	machineAvailable = "(machine available)"
)

// cpuReading is the CPU time used so far, in seconds: by process name, and by the whole
// machine (busy, and available: busy plus idle).
type cpuReading struct {
	byProcess map[string]float64
	busy      float64
	available float64
}

// readCPU reads the CPU times of this process and its descendants, summed by name, and the
// machine's. A process that exited within a window loses its time; the components of a case
// live through it.
func readCPU() (cpuReading, error) {
	r := cpuReading{byProcess: map[string]float64{}}
	procs, err := readProcStats()
	if err != nil {
		return r, err
	}
	self := os.Getpid()
	for pid, p := range procs {
		if pid == self {
			r.byProcess[selfName] += p.CPUSeconds
		} else if descends(procs, pid, self) {
			r.byProcess[processName(pid, p.Name)] += p.CPUSeconds
		}
	}
	r.busy, r.available, err = readMachineCPU()
	return r, err
}

// processName is the base name of pid's executable (kube-controller-manager), or comm, which the
// kernel cuts to 15 characters (kube-controller), when the link cannot be read.
func processName(pid int, comm string) string {
	if exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe")); err == nil {
		return filepath.Base(strings.TrimSuffix(exe, " (deleted)"))
	}
	return comm
}

// minus is the CPU used between base and r. A process absent from base started in between.
func (r cpuReading) minus(base cpuReading) map[string]float64 {
	out := map[string]float64{machineBusy: r.busy - base.busy, machineAvailable: r.available - base.available}
	for name, v := range r.byProcess {
		out[name] = v - base.byProcess[name]
	}
	return out
}

// readProcStats reads /proc/PID/stat of every process.
func readProcStats() (map[int]proc.Stat, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	out := map[int]proc.Stat{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := proc.ReadStat(pid); err == nil { // an error: it exited meanwhile
			out[pid] = st
		}
	}
	return out, nil
}

// descends tells whether pid is a descendant of root.
func descends(procs map[int]proc.Stat, pid, root int) bool {
	for range len(procs) { // bounded: a cycle cannot happen, but a torn read must not loop
		p, ok := procs[pid]
		if !ok || p.PPID == 0 {
			return false
		}
		if p.PPID == root {
			return true
		}
		pid = p.PPID
	}
	return false
}

// readMachineCPU reads the machine's busy and available CPU seconds from /proc/stat's "cpu"
// line (user nice system idle iowait irq softirq steal ...): available is all of them, busy all
// but idle and iowait.
func readMachineCPU() (busy, available float64, err error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	return parseMachineCPU(string(data))
}

func parseMachineCPU(stat string) (busy, available float64, err error) {
	line, _, _ := strings.Cut(stat, "\n")
	fields := strings.Fields(line)
	if len(fields) < 9 || fields[0] != "cpu" {
		return 0, 0, fmt.Errorf("unexpected first line of /proc/stat: %q", line)
	}
	for i, f := range fields[1:9] { // guest times are already in user and nice
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("unexpected first line of /proc/stat: %q", line)
		}
		available += v
		if i != 3 && i != 4 {
			busy += v
		}
	}
	return busy / proc.UserHZ, available / proc.UserHZ, nil
}

// cpuProfile reads a CPU profile of d from the pprof endpoint at base (the manager's, or
// kube-apiserver's with an admin client) and writes it to path, for "go tool pprof".
func cpuProfile(ctx context.Context, hc *http.Client, base string, d time.Duration, path string) error {
	raw, err := httpGet(ctx, hc, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, int(d.Seconds())))
	if err != nil {
		return fmt.Errorf("reading the CPU profile: %w", err)
	}
	return os.WriteFile(path, raw, 0o644)
}

// cpuSince is the CPU used since base (by readCPU), or nil when either reading failed.
func cpuSince(base cpuReading, baseErr error, logf func(string, ...any)) map[string]float64 {
	now, err := readCPU()
	if err = errors.Join(baseErr, err); err != nil {
		logf("no CPU split by process: %v", err)
		return nil
	}
	return now.minus(base)
}

// startCPUProfiles starts reading the CPU profiles of kube-apiserver and, in an operator case
// (m not nil), of the manager when s asks for them; wait returns once they are written (a
// failure is logged).
func startCPUProfiles(ctx context.Context, admin *rest.Config, m *benchManager, bc benchCase, s settings,
	logf func(string, ...any),
) (wait func()) {
	var wg sync.WaitGroup
	if s.cpuProfileDir == "" {
		return wg.Wait
	}
	now := time.Now()
	profile := func(who string, hc *http.Client, base string) {
		wg.Go(func() {
			path := filepath.Join(s.cpuProfileDir, cpuProfileName(who, bc, now))
			if err := cpuProfile(ctx, hc, base, s.cpuProfileDuration, path); err != nil {
				logf("no CPU profile of %s: %v", who, err)
				return
			}
			logf("CPU profile of %s's first %s: %s", who, s.cpuProfileDuration, path)
		})
	}
	if hc, err := rest.HTTPClientFor(admin); err != nil {
		logf("no CPU profile of kube-apiserver: %v", err)
	} else {
		profile("kube-apiserver", hc, strings.TrimSuffix(admin.Host, "/"))
	}
	if m != nil {
		profile("manager", http.DefaultClient, m.pprofURL)
	}
	return wg.Wait
}

// cpuProfileName names the kept CPU profile of who in case bc whose convergence began at start.
func cpuProfileName(who string, bc benchCase, start time.Time) string {
	kind := ""
	if bc.Floor {
		kind = "-floor"
	}
	return fmt.Sprintf("cpu-%s-%s-n%d%s-c%d-q%g.pb.gz", who, start.UTC().Format(stampLayout), bc.N, kind, bc.Concurrency, bc.QPS)
}
