// Command bench measures the operator with N DatabaseClusters on the local control plane of
// test/harness/controlplane, each case on a fresh cluster with a fresh manager: convergence
// against a floor case without the operator (-floor, floor.go), the operator's requests
// (audit.go), the CPU of every process (probe.go, cost.go), the manager's memory, the idle
// window, and with -leader the leader hand-off and takeover (leader.go). It writes every figure
// to bench-results/<UTC start>.json and prints the run's tables. With -tables or -render-docs
// it runs nothing: it renders tables from JSON results (render.go). See docs/benchmarks.md.
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

const (
	// podsPerNode is a simulated node's pod capacity; nodes are sized for N pods + 10%.
	podsPerNode = 110
	// stampLayout names results and profiles by their UTC start.
	stampLayout = "20060102T150405Z"
	// crdDir holds the operator's CRDs; the benchmark runs from the repository's root.
	crdDir = "config/crd/bases"
)

// report is the JSON file of one invocation.
type report struct {
	Started  time.Time         `json:"started"`
	Finished time.Time         `json:"finished,omitzero"`
	Machine  map[string]string `json:"machine"`
	Settings map[string]string `json:"settings"` // the flags, and how requests were counted ("count")
	Results  []result          `json:"results"`
	Leader   *leaderResult     `json:"leader,omitempty"`
	Polling  *pollingResult    `json:"polling,omitempty"` // -polling (polling.go)
}

// options are the command's flags.
type options struct {
	ns, concs, qpss, bursts, out, apiServerArgs, schedulerArgs, renderDocs, results, tables string
	failOnIdleWrites, leader, leaderOnly, floor, check                                      bool
	leaderRepeat, repeat                                                                    int
	s                                                                                       settings
	polling                                                                                 pollingOptions
	runPolling                                                                              bool
}

func main() {
	o := parseFlags()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

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
	flag.StringVar(&o.apiServerArgs, "apiserver-args", "--service-cluster-ip-range=10.96.0.0/16",
		"Extra kube-apiserver flags, space separated (the default makes room for the ClusterIPs of more than ~250 clusters).")
	flag.StringVar(&o.schedulerArgs, "scheduler-args", "--kube-api-qps=1000 --kube-api-burst=2000",
		"Extra kube-scheduler flags, space separated (the default lifts its 50 QPS client limit, as kube-controller-manager's is).")
	flag.StringVar(&o.s.heapDir, "heap-profile-dir", "", "Keep each operator case's heap profile (end of the idle window, after a GC) in this directory, for go tool pprof.")
	flag.StringVar(&o.s.cpuProfileDir, "cpu-profile-dir", "", "Keep CPU profiles of kube-apiserver (every case) and of the manager (operator cases), taken from the first create for -cpu-profile-duration, in this directory, for go tool pprof.")
	flag.DurationVar(&o.s.cpuProfileDuration, "cpu-profile-duration", 30*time.Second, "Length of the CPU profile of -cpu-profile-dir (whole seconds).")
	flag.StringVar(&o.out, "out", "bench-results", "Directory of the JSON results.")
	flag.BoolVar(&o.failOnIdleWrites, "fail-on-idle-writes", false, "Exit 1 when the operator writes in the idle window (make bench-smoke sets it).")
	flag.BoolVar(&o.leader, "leader", false, "Also run the leader case: 2 managers with leader election (default lease timings, "+
		"release on cancel); time the hand-off after SIGTERM and the takeover after SIGKILL of the leader.")
	flag.IntVar(&o.leaderRepeat, "leader-repeat", 3, "How many times the leader case stops the leader with each signal.")
	flag.BoolVar(&o.leaderOnly, "leader-only", false, "Run only the leader case (no scale case; -n and the like are ignored).")
	flag.StringVar(&o.renderDocs, "render-docs", "", "Run nothing; render the summary tables of these reports (comma separated; their "+blockPrefix+"KIND FILE..."+blockSuffix+
		" blocks) from the JSON results in -results, and check that their text quotes only figures they hold.")
	flag.StringVar(&o.tables, "tables", "", "Run nothing; print every table of this JSON result as markdown.")
	flag.StringVar(&o.results, "results", "", "With -render-docs: the directory of the JSON results (every *.json, sorted by name).")
	flag.BoolVar(&o.check, "check", false, "With -render-docs: write nothing; exit 1 when the file differs from what would be rendered.")
	pollingFlags(o)
	flag.Parse()
	return o
}

// pollingFlags are the flags of the polling case (polling.go).
func pollingFlags(o *options) {
	p := &o.polling
	flag.BoolVar(&o.runPolling, "polling", false, "Run only the polling case (no control plane): the manager's reads of the member agents "+
		"(databasecluster.AgentMembers, real mutual TLS) of -polling-clusters clusters of -polling-members simulated members, "+
		"served by a child process; a sweep of every member, then every cluster read every -polling-intervals.")
	flag.IntVar(&p.clusters, "polling-clusters", 1000, "With -polling: clusters.")
	flag.IntVar(&p.members, "polling-members", 3, "With -polling: members per cluster (one agent and listener each).")
	flag.IntVar(&p.workers, "polling-workers", 16, "With -polling: clusters read at once (the manager's --max-concurrent-reconciles default).")
	flag.IntVar(&p.sweeps, "polling-sweeps", 3, "With -polling: sweeps of every cluster as fast as the workers go, after the first.")
	flag.StringVar(&p.intervals, "polling-intervals", "10s,2s,1s", "With -polling: intervals between two reads of a cluster, comma separated, one paced case each "+
		"(10s is the operator's observe interval, 2s while a member is unknown, 1s during a switchover).")
	flag.IntVar(&p.rounds, "polling-rounds", 6, "With -polling: rounds of every cluster in each paced case.")
	flag.Float64Var(&p.apiQPS, "polling-api-qps", 50, "With -polling: a last sweep with the CA Secret's GETs limited to this rate, as the manager's "+
		"--kube-api-qps limits its client (0: none).")
	flag.IntVar(&p.apiBurst, "polling-api-burst", 100, "With -polling: the burst of -polling-api-qps (the manager's --kube-api-burst).")
	flag.IntVar(&p.liveHeapMiB, "polling-live-heap-mib", 24, "With -polling: grow this process's live heap to about this many MiB (a manager's at "+
		"N=1,000), so that its collector, at the manager's target, runs as often as the manager's.")
	flag.StringVar(&p.agents, "polling-agents", "", "Internal: the child process of -polling, serving the agents of this file.")
}

func run(o *options) error {
	switch {
	case o.polling.agents != "":
		return serveAgents(o.polling.agents)
	case o.runPolling:
		return runPolling(o)
	}
	if done, err := renderOnly(o); done || err != nil {
		return err
	}
	return runBench(o)
}

// renderOnly runs what runs no case (-tables, -render-docs) and refuses flags that do not go
// together; done says that nothing else runs.
func renderOnly(o *options) (done bool, err error) {
	switch {
	case o.tables != "":
		f, err := readResult(o.tables, filepath.Dir(o.tables))
		if err == nil {
			_, err = io.WriteString(os.Stdout, renderRun(f))
		}
		return true, err
	case o.renderDocs != "" && o.results != "":
		return true, renderDocs(os.Stdout, o.renderDocs, o.results, o.check)
	case o.renderDocs != "" || o.results != "" || o.check:
		return true, errors.New("-render-docs, -results and -check go together (-check optional)")
	case o.leaderRepeat < 1 || o.repeat < 1:
		return true, errors.New("-leader-repeat and -repeat must be at least 1")
	case o.s.cpuProfileDir != "" && o.s.cpuProfileDuration < time.Second:
		return true, errors.New("-cpu-profile-duration must be at least 1s")
	}
	return false, nil
}

// runBench runs the scale cases and the leader case, writes the report and prints its tables.
func runBench(o *options) error {
	cases, err := buildCases(o)
	if err != nil {
		return err
	}
	if o.leaderOnly {
		cases, o.leader = nil, true
	}
	for _, dir := range []string{o.s.heapDir, o.s.cpuProfileDir} {
		if dir == "" {
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	o.s.apiServerArgs, o.s.schedulerArgs = strings.Fields(o.apiServerArgs), strings.Fields(o.schedulerArgs)
	ctrllog.SetLogger(zap.New(zap.WriteTo(io.Discard))) // envtest logs through controller-runtime; its lines add nothing here
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	rep := report{Started: time.Now().UTC(), Machine: machine(), Settings: map[string]string{
		"count": countAudit, "workers": strconv.Itoa(workers), "scrapeInterval": scrapeInterval.String()}}
	flag.VisitAll(func(f *flag.Flag) { rep.Settings[f.Name] = f.Value.String() })
	var errs []error
	for i, bc := range cases {
		logf("case %d/%d: %s", i+1, len(cases), bc)
		res, err := runCase(ctx, bc, o.s)
		if err != nil {
			res.Error = err.Error()
			errs = append(errs, fmt.Errorf("case %s: %w", bc, err))
		} else if o.failOnIdleWrites && res.IdleWrites > 0 {
			errs = append(errs, fmt.Errorf("case %s: the operator made %d writes while idle: %v", bc, res.IdleWrites, res.Idle.ByVerbResource))
		}
		rep.Results = append(rep.Results, res)
		if ctx.Err() != nil {
			break
		}
	}
	if o.leader && ctx.Err() == nil {
		logf("leader case: %d managers, %d runs per signal", leaderManagers, o.leaderRepeat)
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

// buildCases lists the cases of every combination of the lists, -repeat times, each preceded by
// its floor case with -floor: the cases alternate, so that a noisy machine treats both alike.
// Nodes are enough for N pods at podsPerNode per node +10%, at least 3.
func buildCases(o *options) ([]benchCase, error) {
	nList, err1 := parseList(o.ns, positive)
	cList, err2 := parseList(o.concs, positive)
	bList, err3 := parseList(o.bursts, positive)
	qList, err4 := parseList(o.qpss, func(s string) (float64, error) { return strconv.ParseFloat(s, 64) })
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return nil, fmt.Errorf("-n, -concurrency, -qps, -burst: %w", err)
	}
	if len(bList) != 1 && len(bList) != len(qList) {
		return nil, errors.New("-burst needs one value, or one per -qps value")
	}
	// One binary is the settings' own (the cases name none); several are named by each case.
	managers := strings.Split(o.s.manager, ",")
	if len(managers) == 1 {
		managers = []string{""}
	}
	var cases []benchCase
	for range o.repeat {
		for _, n := range nList {
			nodes := max(3, (n*11/10+podsPerNode-1)/podsPerNode)
			for _, c := range cList {
				for i, q := range qList {
					for _, m := range managers {
						if o.floor {
							cases = append(cases, benchCase{Floor: true, N: n, Nodes: nodes, Concurrency: c})
						}
						cases = append(cases, benchCase{N: n, Nodes: nodes, Concurrency: c, QPS: q, Burst: bList[min(i, len(bList)-1)], Manager: m})
					}
				}
			}
		}
	}
	return cases, nil
}

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
	m := map[string]string{"cpus": strconv.Itoa(runtime.NumCPU()), "goVersion": runtime.Version(),
		"os": runtime.GOOS + "/" + runtime.GOARCH}
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
	m["hostname"], _ = os.Hostname()
	return m
}

// writeReport writes rep to dir/<UTC start>.json. Results are local to a machine: dir gets a
// .gitignore that keeps them out of git.
func writeReport(dir string, rep report) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(dir, ".gitignore")); os.IsNotExist(err) {
		_ = os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*\n"), 0o644)
	}
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, rep.Started.Format(stampLayout)+".json")
	return path, os.WriteFile(path, data, 0o644)
}
