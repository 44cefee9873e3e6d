// Command bench measures the operator at scale on the local control plane of
// test/harness/controlplane (kube-apiserver, etcd, kube-controller-manager, kube-scheduler and
// kwok's simulated nodes): the raw write rate of the API server, the time until N
// DatabaseClusters are Available, against a floor case without the operator (-floor), the API
// requests the operator makes per cluster (counted from kube-apiserver's audit log of the
// manager's own user, audit.go), the writes it makes while idle, its memory, and the CPU of
// every process of the case. Each case gets a fresh cluster and manager. With -leader, a leader
// case runs 2 managers with leader election on a cluster of its own and times the graceful
// hand-off (SIGTERM) and the crash takeover (SIGKILL) of the leader.
//
//	go build -o bin/bench ./hack/bench && bin/bench -n 100,1000 -concurrency 4,16 -qps 50,500 -burst 100,1000
//	bin/bench -leader-only -leader-repeat 5
//	bin/bench -render-docs docs/benchmarks.md -results docs/bench [-check]
//	bin/bench -tables docs/bench/<result>.json
//
// It writes every figure to bench-results/<UTC start>.json and prints the run's tables as
// markdown, as -tables does for a result file. With -render-docs it runs nothing: it renders
// the report's summary tables from the JSON results of -results and checks that its text quotes
// only figures they hold (-check: writes nothing, only tells whether the report is current).
// See docs/benchmarks.md.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// podsPerNode is a simulated node's pod capacity (kwok's nodes of test/harness/controlplane);
// nodes are sized for N pods with a 10% margin.
const podsPerNode = 110

// stampLayout names results and profiles by their UTC start.
const stampLayout = "20060102T150405Z"

// crdDir holds the operator's CRDs; the benchmark runs from the repository's root.
const crdDir = "config/crd/bases"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// report is the JSON file of one invocation.
type report struct {
	Started time.Time `json:"started"`
	// Finished is when the last case ended: the wall time of the invocation is Finished - Started.
	Finished time.Time         `json:"finished,omitzero"`
	Machine  map[string]string `json:"machine"`
	Settings map[string]string `json:"settings"`
	Results  []result          `json:"results"`
	Leader   *leaderResult     `json:"leader,omitempty"`
}

// options are the command's flags.
type options struct {
	ns, concs, qpss, bursts, out, managerArgs, apiServerArgs, schedulerArgs, renderDoc, resultsDir, tablesOf string
	verbose, failOnIdleWrites, leaderCase, leaderOnly, floor, check                                          bool
	leaderRepeat, repeat                                                                                     int
	s                                                                                                        settings
}

func run() error {
	o := parseFlags()
	if done, err := renderOnly(o); done || err != nil {
		return err
	}
	return runBench(o)
}

// parseFlags reads the command line.
func parseFlags() *options {
	o := &options{}
	flag.StringVar(&o.ns, "n", "100", "Numbers of DatabaseClusters, comma separated (one case each).")
	flag.StringVar(&o.concs, "concurrency", "16", "--max-concurrent-reconciles values of the manager, comma separated (16 is the manager's own default).")
	flag.StringVar(&o.qpss, "qps", "50", "--kube-api-qps values of the manager, comma separated, paired with -burst.")
	flag.StringVar(&o.bursts, "burst", "100", "--kube-api-burst values, comma separated, one per -qps value (or one for all).")
	flag.BoolVar(&o.floor, "floor", false, "Before each case, a floor case of the same N and nodes: no operator, a plain client creates "+
		"the children the operator would (its own builders) with -concurrency goroutines and waits until every StatefulSet is ready. "+
		"The overhead ratio is the operator's convergence divided by the floor's.")
	flag.IntVar(&o.repeat, "repeat", 1, "Run the list of cases this many times (with -floor: floor, operator, floor, operator, ...).")
	flag.DurationVar(&o.s.idle, "idle", 5*time.Minute, "Idle window after convergence, in which the operator should not write.")
	flag.DurationVar(&o.s.rawDuration, "raw-duration", 5*time.Second, "How long the raw write rate is measured.")
	flag.DurationVar(&o.s.timeout, "timeout", 30*time.Minute, "Bound on the convergence of one case.")
	flag.StringVar(&o.s.manager, "manager", "bin/manager", "Manager binary; several, comma separated, run each case once per binary, in turn (with -floor each after a floor case of its own): a before/after pair in one invocation.")
	flag.StringVar(&o.managerArgs, "manager-args", "", "Extra manager flags, space separated.")
	flag.StringVar(&o.apiServerArgs, "apiserver-args", "--service-cluster-ip-range=10.96.0.0/16",
		"Extra kube-apiserver flags, space separated (the default makes room for the ClusterIPs of more than ~250 clusters).")
	flag.StringVar(&o.schedulerArgs, "scheduler-args", "--kube-api-qps=1000 --kube-api-burst=2000",
		"Extra kube-scheduler flags, space separated (the default lifts its 50 QPS client limit, as kube-controller-manager's is).")
	flag.StringVar(&o.s.workDir, "workdir", "", "Keep each case's cluster directory (logs, manager.log) under this directory; default: a temporary one, removed.")
	flag.StringVar(&o.s.heapDir, "heap-profile-dir", "", "Keep each operator case's heap profile (end of the idle window, after a GC) in this directory, for go tool pprof.")
	flag.StringVar(&o.s.cpuProfileDir, "cpu-profile-dir", "", "Keep CPU profiles of kube-apiserver (every case) and of the manager (operator cases), taken from the first create for -cpu-profile-duration, in this directory, for go tool pprof.")
	flag.DurationVar(&o.s.cpuProfileDuration, "cpu-profile-duration", 30*time.Second, "Length of the CPU profile of -cpu-profile-dir (whole seconds).")
	flag.StringVar(&o.out, "out", "bench-results", "Directory of the JSON results.")
	flag.BoolVar(&o.failOnIdleWrites, "fail-on-idle-writes", false, "Exit 1 when the operator writes in the idle window (make bench-smoke sets it).")
	flag.BoolVar(&o.verbose, "v", false, "Print the local cluster's progress lines.")
	flag.BoolVar(&o.leaderCase, "leader", false, "Also run the leader case: 2 managers with leader election (default lease timings, "+
		"release on cancel); time the hand-off after SIGTERM and the takeover after SIGKILL of the leader.")
	flag.IntVar(&o.leaderRepeat, "leader-repeat", 3, "How many times the leader case stops the leader with each signal.")
	flag.BoolVar(&o.leaderOnly, "leader-only", false, "Run only the leader case (no scale case; -n and the like are ignored).")
	flag.StringVar(&o.renderDoc, "render-docs", "", "Run nothing; render the summary tables of these reports (comma separated; their "+blockPrefix+"KIND FILE..."+blockSuffix+
		" blocks) from the JSON results in -results, and check that its text quotes only figures they hold.")
	flag.StringVar(&o.tablesOf, "tables", "", "Run nothing; print every table of this JSON result as markdown.")
	flag.StringVar(&o.resultsDir, "results", "", "With -render-docs: the directory of the JSON results (every *.json, sorted by name).")
	flag.BoolVar(&o.check, "check", false, "With -render-docs: write nothing; exit 1 when the file differs from what would be rendered.")
	flag.Parse()
	return o
}

// renderOnly runs what runs no case (-tables, -render-docs) and refuses flags that do not go
// together; done says that nothing else runs.
func renderOnly(o *options) (done bool, err error) {
	switch {
	case o.tablesOf != "":
		f, err := readResult(o.tablesOf, filepath.Dir(o.tablesOf))
		if err == nil {
			_, err = io.WriteString(os.Stdout, renderRun(f))
		}
		return true, err
	case o.renderDoc != "" && o.resultsDir != "":
		return true, renderDocs(os.Stdout, o.renderDoc, o.resultsDir, o.check)
	case o.renderDoc != "" || o.resultsDir != "" || o.check:
		return true, errors.New("-render-docs, -results and -check go together (-check optional)")
	case o.leaderRepeat < 1 || o.repeat < 1:
		return true, errors.New("-leader-repeat and -repeat must be at least 1")
	case o.s.cpuProfileDir != "" && o.s.cpuProfileDuration < time.Second:
		return true, errors.New("-cpu-profile-duration must be at least 1s")
	}
	return false, nil
}

// runBench runs the scale cases and the leader case, and writes the report.
func runBench(o *options) error {
	o.s.managerArgs, o.s.apiServerArgs, o.s.schedulerArgs = strings.Fields(o.managerArgs), strings.Fields(o.apiServerArgs), strings.Fields(o.schedulerArgs)
	ctrllog.SetLogger(zap.New(zap.WriteTo(io.Discard))) // envtest logs through controller-runtime; its lines add nothing here.
	o.s.log = os.Stderr
	if !o.verbose {
		o.s.log = filteredLog{os.Stderr}
	}
	cases, err := buildCases(o.ns, o.concs, o.qpss, o.bursts, managerList(o.s.manager), o.floor, o.repeat)
	if err != nil {
		return err
	}
	for _, dir := range []string{o.s.heapDir, o.s.cpuProfileDir} {
		if dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
		}
	}
	if o.leaderOnly {
		cases, o.leaderCase = nil, true
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	rep := report{Started: time.Now().UTC(), Machine: machine(), Settings: map[string]string{
		"idle": o.s.idle.String(), "rawDuration": o.s.rawDuration.String(), "workers": strconv.Itoa(workers),
		"count": countAudit, "managerArgs": o.managerArgs, "scrapeInterval": scrapeInterval.String(),
		"apiserverArgs": o.apiServerArgs, "schedulerArgs": o.schedulerArgs,
		"floor": strconv.FormatBool(o.floor), "repeat": strconv.Itoa(o.repeat),
		"leader": strconv.FormatBool(o.leaderCase), "leaderRepeat": strconv.Itoa(o.leaderRepeat), "leaderOnly": strconv.FormatBool(o.leaderOnly),
	}}
	errs := runCases(ctx, cases, o.s, o.failOnIdleWrites, &rep)
	if o.leaderCase && ctx.Err() == nil {
		fmt.Fprintf(os.Stderr, "bench: leader case: %d managers, %d runs per signal\n", leaderManagers, o.leaderRepeat)
		res, err := runLeaderCase(ctx, o.s, o.leaderRepeat)
		if err != nil {
			res.Error = err.Error()
			errs = append(errs, fmt.Errorf("leader case: %w", err))
		}
		rep.Leader = &res
	}
	rep.Finished = time.Now().UTC()
	path, err := writeReport(o.out, rep)
	fmt.Print(renderRun(resultFile{Name: path, Link: filepath.Base(path), Rep: rep}))
	if err == nil {
		fmt.Printf("\nResults written to %s\n", path)
	}
	return errors.Join(append(errs, err)...)
}

// runCases runs the scale cases one after the other into rep, until ctx ends.
func runCases(ctx context.Context, cases []benchCase, s settings, failOnIdleWrites bool, rep *report) []error {
	var errs []error
	for i, bc := range cases {
		fmt.Fprintf(os.Stderr, "bench: case %d/%d: %s\n", i+1, len(cases), bc)
		res, err := runCase(ctx, bc, s)
		if err != nil {
			res.Error = err.Error()
			errs = append(errs, fmt.Errorf("case %s: %w", bc, err))
		}
		rep.Results = append(rep.Results, res)
		if failOnIdleWrites && err == nil && res.IdleWrites > 0 {
			errs = append(errs, fmt.Errorf("case %s: the operator made %d writes while idle: %v", bc, res.IdleWrites, res.Idle.ByVerbResource))
		}
		if ctx.Err() != nil {
			break
		}
	}
	return errs
}

// filteredLog drops the local cluster's progress lines, keeping the benchmark's.
type filteredLog struct{ w io.Writer }

func (f filteredLog) Write(p []byte) (int, error) {
	if strings.HasPrefix(string(p), "localcluster: ") {
		return len(p), nil
	}
	return f.w.Write(p)
}

// buildCases lists the cases of every combination of the lists, repeat times, each preceded by
// its floor case when floor is set: the cases alternate, so that a noisy machine treats both
// alike. Nodes are enough for N pods at podsPerNode per node +10%, at least 3.
func buildCases(ns, concs, qpss, bursts string, managers []string, floor bool, repeat int) ([]benchCase, error) {
	nList, err1 := parseList(ns, positive)
	cList, err2 := parseList(concs, positive)
	bList, err3 := parseList(bursts, positive)
	qList, err4 := parseList(qpss, func(s string) (float64, error) { return strconv.ParseFloat(s, 64) })
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return nil, fmt.Errorf("-n, -concurrency, -qps, -burst: %w", err)
	}
	if len(bList) != 1 && len(bList) != len(qList) {
		return nil, errors.New("-burst needs one value, or one per -qps value")
	}
	var cases []benchCase
	for _, n := range nList {
		nodes := max(3, (n*11/10+podsPerNode-1)/podsPerNode)
		for _, c := range cList {
			for i, q := range qList {
				for _, m := range managers {
					cases = append(cases, benchCase{N: n, Nodes: nodes, Concurrency: c, QPS: q, Burst: bList[min(i, len(bList)-1)], Manager: m})
				}
			}
		}
	}
	var out []benchCase
	for range repeat {
		for _, c := range cases {
			if floor {
				out = append(out, benchCase{Floor: true, N: c.N, Nodes: c.Nodes, Concurrency: c.Concurrency})
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// managerList is the -manager binaries of the cases: one binary is the settings' own (cases
// carry none, and their labels stay as they were), several are named by each case.
func managerList(flagValue string) []string {
	if list := strings.Split(flagValue, ","); len(list) > 1 {
		return list
	}
	return []string{""}
}

// parseList parses a comma-separated list.
func parseList[T any](list string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	for f := range strings.SplitSeq(list, ",") {
		v, err := parse(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func positive(s string) (int, error) {
	v, err := strconv.Atoi(s)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%q is not a positive integer", s)
	}
	return v, nil
}

// machine describes where the benchmark ran: absolute figures only compare on one machine.
func machine() map[string]string {
	m := map[string]string{
		"cpus": strconv.Itoa(runtime.NumCPU()), "goVersion": runtime.Version(), "os": runtime.GOOS + "/" + runtime.GOARCH,
	}
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		m["loadavgAtStart"] = strings.TrimSpace(string(data))
	}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m["cpu"] = strings.TrimSpace(v)
				break
			}
		}
	}
	if h, err := os.Hostname(); err == nil {
		m["hostname"] = h
	}
	return m
}

func writeReport(dir string, rep report) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// Results are local to a machine: keep them out of git.
	ignore := filepath.Join(dir, ".gitignore")
	if _, err := os.Stat(ignore); os.IsNotExist(err) {
		_ = os.WriteFile(ignore, []byte("*\n"), 0o644)
	}
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, rep.Started.Format(stampLayout)+".json")
	return path, os.WriteFile(path, data, 0o644)
}
