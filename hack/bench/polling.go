package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/databasecluster"
	"github.com/seed1b407122/database-operator/controllers/memberagent"
	"github.com/seed1b407122/database-operator/controllers/operator"
	"github.com/seed1b407122/database-operator/test/harness/proc"
)

// The polling case (-polling; issue 51, docs/benchmarks.md's *Member-agent polling*) measures
// what the operator's reads of the member agents cost the manager at N clusters of M members,
// with no control plane. The manager's side is the operator's own read path as far as it is
// exported: databasecluster.AgentMembers.Observe (one memberagent.Client per cluster, its CA
// Secret read again once a minute, a new TLS 1.3 connection per read, resumed sessions), called
// as readMembers calls it (a cluster's members at once, each read bounded by
// pollingAgentTimeout) by as many workers as the manager has reconciles at once. The agents are
// memberagent.Serve with a SimEngine, one 127.0.0.1 listener per member, in a child process
// (this binary with -polling-agents), so that getrusage of this process is the manager's side
// alone.
//
// The CA Secret's GETs are AgentMembers' own, through the APIReader it is given (secretReader):
// the figures count them, and -polling-api-qps puts client-go's token bucket, the manager's
// client-side limit, in front of them. That last sweep runs with AgentMembers' clock moved past
// its CA recheck (pollingCARecheck), so that every cluster's CA is read again in it.
//
// Not in the figures: the CA Secret's GET is answered from memory (the manager's goes to
// kube-apiserver), and the rest of the reconcile pass that each read comes with.

// pollingAgentTimeout bounds each member read, as agentTimeout does in controllers/databasecluster.
const pollingAgentTimeout = 2 * time.Second

// pollingCARecheck is how long AgentMembers uses a cluster's client before it reads the CA
// Secret again (caRecheck in controllers/databasecluster): the limited sweep moves the clock of
// AgentMembers this far, and a second, ahead, so that every cluster's CA is due in it.
const pollingCARecheck = time.Minute + time.Second

// pollingNamespace is the namespace of the simulated clusters.
const pollingNamespace = "bench"

// pollingOptions are the flags of the polling case.
type pollingOptions struct {
	clusters, members, workers, sweeps, rounds, apiBurst, liveHeapMiB int
	intervals                                                         string
	apiQPS                                                            float64
	agents                                                            string // the child's mode: serve the agents of this file
}

// pollingResult is the polling case's part of the JSON report.
type pollingResult struct {
	Clusters          int     `json:"clusters"`
	MembersPerCluster int     `json:"membersPerCluster"`
	Workers           int     `json:"workers"`
	AgentTimeoutSec   float64 `json:"agentTimeoutSec"`
	Listeners         int     `json:"listeners"`
	GCPercent         int     `json:"gcPercent"`
	// LiveHeapBytes is this process's heap after the first sweep and a GC: about
	// -polling-live-heap-mib (a manager's at N clusters, whose heap sets how often its collector
	// runs; a ballast fills it up to that) and ClientsHeapBytes, what the first sweep added (a
	// client per cluster, their TLS sessions).
	LiveHeapBytes    int64   `json:"liveHeapBytes"`
	ClientsHeapBytes int64   `json:"clientsHeapBytes"`
	SetupSec         float64 `json:"setupSec"`
	// LoadavgAtEnd is the machine's /proc/loadavg after the last case (the report's machine
	// has it at the start): other work on the machine shows in the rates and wall times first.
	LoadavgAtEnd string        `json:"loadavgAtEnd,omitempty"`
	Cases        []pollingCase `json:"cases"`
	Error        string        `json:"error,omitempty"`
}

// pollingCase is one way of reading every member: a sweep (every cluster at once, by the
// workers, as fast as they go) or a paced case (every cluster every IntervalSec, the clusters
// spread over the interval) for Rounds rounds.
type pollingCase struct {
	Name        string  `json:"name"`
	IntervalSec float64 `json:"intervalSec,omitempty"`
	Rounds      int     `json:"rounds"`
	// APIQPS and APIBurst limit the CA Secret's GETs as the manager's client limits its
	// requests (0: no limit).
	APIQPS   float64 `json:"apiQPS,omitempty"`
	APIBurst int     `json:"apiBurst,omitempty"`
	// ClockAheadSec is how far AgentMembers' clock had been moved ahead of the real one when
	// the case began (past the CA recheck: every cluster's CA Secret is read again in it).
	ClockAheadSec float64 `json:"clockAheadSec,omitempty"`
	WallSec       float64 `json:"wallSec"`
	MemberReads   int64   `json:"memberReads"`
	ReadErrors    int64   `json:"readErrors"`
	FirstError    string  `json:"firstError,omitempty"`
	SecretGets    int64   `json:"secretGets"`
	ClientCPUSec  float64 `json:"clientCPUSec"`
	AgentCPUSec   float64 `json:"agentCPUSec"`
	GCs           uint32  `json:"gcs"`
	// ClusterReadP50Sec and P99 are a cluster's read (its members at once); MaxLagSec is how
	// late a paced read started at worst, the workers being busy.
	ClusterReadP50Sec float64 `json:"clusterReadP50Sec"`
	ClusterReadP99Sec float64 `json:"clusterReadP99Sec"`
	MaxLagSec         float64 `json:"maxLagSec,omitempty"`
}

// agentSpec is one simulated member, as the parent hands it to the child.
type agentSpec struct {
	Name    string `json:"name"`
	Role    string `json:"role"`
	CAPEM   []byte `json:"ca"`
	CertPEM []byte `json:"cert"`
	KeyPEM  []byte `json:"key"`
	// caKey is the CA's key, for the parent's Secret only: the child never sees it.
	caKey []byte
}

// pollCluster is one simulated cluster: the DatabaseCluster the reads name and its pods.
type pollCluster struct {
	dc   *databasev1alpha1.DatabaseCluster
	pods []corev1.Pod
}

// runPolling runs the polling case, writes its report and prints its table.
func runPolling(o *options) error {
	p := o.polling
	intervals, err := parseList(p.intervals, func(s string) (time.Duration, error) { return time.ParseDuration(s) })
	if err != nil || p.clusters < 1 || p.members < 1 || p.workers < 1 || p.rounds < 1 {
		return fmt.Errorf("-polling: -polling-intervals, -polling-clusters, -polling-members, -polling-workers, -polling-rounds: %w",
			cmp0(err, errors.New("must be positive")))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep := report{Started: time.Now().UTC(), Machine: machine(), Settings: map[string]string{}}
	flag.VisitAll(func(f *flag.Flag) { rep.Settings[f.Name] = f.Value.String() })
	res, err := pollingRun(ctx, p, intervals)
	if err != nil {
		res.Error = err.Error()
	}
	rep.Polling, rep.Finished = &res, time.Now().UTC()
	path, werr := writeReport(o.out, rep)
	fmt.Print(renderRun(resultFile{Name: path, Link: filepath.Base(path), Rep: rep}))
	if werr == nil {
		fmt.Printf("\nResults written to %s\n", path)
	}
	return errors.Join(err, werr)
}

func cmp0(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// pollingRun sets up the clusters and their agents and runs the cases: the first sweep (every
// client made, every handshake in full), -polling-sweeps sweeps, a paced case per interval, and
// with -polling-api-qps a sweep with the CA Secret's GETs limited.
func pollingRun(ctx context.Context, p pollingOptions, intervals []time.Duration) (pollingResult, error) {
	res := pollingResult{Clusters: p.clusters, MembersPerCluster: p.members, Workers: p.workers,
		AgentTimeoutSec: pollingAgentTimeout.Seconds(), Listeners: p.clusters * p.members,
		GCPercent: operator.SetGCPercent(os.LookupEnv)}
	start := time.Now()
	clusters, specs, reader, err := pollingClusters(p.clusters, p.members)
	if err != nil {
		return res, err
	}
	agents, err := startAgentProcess(specs)
	if err != nil {
		return res, err
	}
	defer agents.stop()
	addrs := map[string]string{}
	for i, s := range specs {
		addrs[s.Name] = agents.addrs[i]
	}
	clk := &aheadClock{}
	poll := &poller{clusters: clusters, workers: p.workers, reader: reader, members: &databasecluster.AgentMembers{
		APIReader: reader, Address: func(pod *corev1.Pod) string { return addrs[pod.Name] }, Clock: clk}}
	res.SetupSec = time.Since(start).Seconds()
	logf("polling: %d clusters of %d members, %d agents in process %d, setup %.1f s",
		p.clusters, p.members, len(specs), agents.pid, res.SetupSec)

	type pollRun struct {
		name     string
		interval time.Duration
		rounds   int
		qps      float64
	}
	runs := []pollRun{{name: "first sweep", rounds: 1}, {name: "sweep", rounds: p.sweeps}}
	for _, iv := range intervals {
		runs = append(runs, pollRun{name: "every " + iv.String(), interval: iv, rounds: p.rounds})
	}
	if p.apiQPS > 0 {
		runs = append(runs, pollRun{name: "sweep, every CA due", rounds: 1, qps: p.apiQPS})
	}
	clear(specs) // the agents' certificates are the child's; the heap holds what a manager would
	ballast := growHeap(p.liveHeapMiB << 20)
	before := liveHeap()
	for i, r := range runs {
		if i == 1 { // every cluster's client is made
			res.LiveHeapBytes = liveHeap()
			res.ClientsHeapBytes = res.LiveHeapBytes - before
			logf("polling: live heap %.1f MiB, %.1f MiB of it the clients", mib(float64(res.LiveHeapBytes)), mib(float64(res.ClientsHeapBytes)))
		}
		if ctx.Err() != nil || r.rounds < 1 {
			continue
		}
		reader.limit(r.qps, p.apiBurst)
		if r.qps > 0 { // every cluster's CA is due: the GETs the limit holds back are AgentMembers' own
			clk.advance(pollingCARecheck)
		}
		c := poll.measure(ctx, agents.pid, r.interval, r.rounds)
		c.Name, c.APIQPS, c.ClockAheadSec = r.name, r.qps, clk.ahead().Seconds()
		if r.qps > 0 {
			c.APIBurst = p.apiBurst
		}
		logf("polling: %s: %d reads in %.1f s, %d errors, %.0f µs of client CPU a read", c.Name, c.MemberReads, c.WallSec,
			c.ReadErrors, 1e6*c.ClientCPUSec/float64(max(c.MemberReads, 1)))
		res.Cases = append(res.Cases, c)
	}
	runtime.KeepAlive(ballast)
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		res.LoadavgAtEnd = strings.TrimSpace(string(data))
	}
	return res, ctx.Err()
}

// pollingClusters makes n clusters of m members, each with its CA (in the Secret the reader
// answers) and each member's serving certificate for its name in the headless Service.
func pollingClusters(n, m int) ([]pollCluster, []agentSpec, *secretReader, error) {
	clusters := make([]pollCluster, n)
	specs := make([]agentSpec, n*m)
	reader := &secretReader{secrets: map[types.NamespacedName]*corev1.Secret{}}
	errs := make([]error, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.NumCPU())
	for i := range n {
		dc := &databasev1alpha1.DatabaseCluster{ObjectMeta: metav1.ObjectMeta{Namespace: pollingNamespace,
			Name: fmt.Sprintf("poll-%04d", i), UID: types.UID(fmt.Sprintf("uid-%04d", i))}}
		clusters[i].dc = dc
		for j := range m {
			name := dc.Name + "-" + strconv.Itoa(j)
			clusters[i].pods = append(clusters[i].pods, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: pollingNamespace,
				Name: name, UID: types.UID(dc.Name + "-pod-" + strconv.Itoa(j))}, Status: corev1.PodStatus{PodIP: "127.0.0.1"}})
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = clusterCerts(clusters[i], specs[i*m:(i+1)*m])
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, nil, nil, err
	}
	for i, c := range clusters {
		reader.secrets[types.NamespacedName{Namespace: pollingNamespace, Name: c.dc.CASecretName()}] = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: pollingNamespace, Name: c.dc.CASecretName()},
			Data:       map[string][]byte{corev1.TLSCertKey: specs[i*m].CAPEM, corev1.TLSPrivateKeyKey: specs[i*m].caKey}}
	}
	for i := range specs {
		specs[i].caKey = nil
	}
	return clusters, specs, reader, nil
}

// clusterCerts issues c's CA and its members' serving certificates into specs.
func clusterCerts(c pollCluster, specs []agentSpec) error {
	now := time.Now()
	ca, err := newPollingCA(c.dc.Name+"-ca", now)
	if err != nil {
		return err
	}
	for j, pod := range c.pods {
		// The name AgentMembers verifies: the member's name in the cluster's headless Service.
		serving, err := newPollingServing(ca, pod.Name+"."+c.dc.HeadlessServiceName()+"."+pod.Namespace+".svc", now)
		if err != nil {
			return err
		}
		role := memberagent.RoleReplica
		if j == 0 {
			role = memberagent.RolePrimary
		}
		specs[j] = agentSpec{Name: pod.Name, Role: role, CAPEM: ca.certPEM, CertPEM: serving.certPEM, KeyPEM: serving.keyPEM, caKey: ca.keyPEM}
	}
	return nil
}

// aheadClock is the real clock moved ahead by what advance added: AgentMembers' clock, which the
// limited sweep moves past the CA recheck.
type aheadClock struct{ by atomic.Int64 }

var _ clock.PassiveClock = (*aheadClock)(nil)

func (c *aheadClock) advance(d time.Duration)         { c.by.Add(int64(d)) }
func (c *aheadClock) ahead() time.Duration            { return time.Duration(c.by.Load()) }
func (c *aheadClock) Now() time.Time                  { return time.Now().Add(c.ahead()) }
func (c *aheadClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// secretReader answers the CA Secrets' GETs from memory, as a copy the way a client decodes a
// fresh object, counts them and, with a limiter (client-go's token bucket), waits for it as
// client-go's requests do. It is AgentMembers' APIReader: every GET it counts is one of
// AgentMembers' CA reads.
type secretReader struct {
	secrets map[types.NamespacedName]*corev1.Secret
	limiter atomic.Pointer[flowcontrol.RateLimiter]
	gets    atomic.Int64
}

var _ client.Reader = (*secretReader)(nil)

// limit sets the limiter of the next GETs: qps and burst, none for qps 0.
func (s *secretReader) limit(qps float64, burst int) {
	if qps <= 0 {
		s.limiter.Store(nil)
		return
	}
	l := flowcontrol.NewTokenBucketRateLimiter(float32(qps), burst)
	s.limiter.Store(&l)
}

func (s *secretReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	if l := s.limiter.Load(); l != nil {
		if err := (*l).Wait(ctx); err != nil {
			return err
		}
	}
	s.gets.Add(1)
	secret, ok := s.secrets[key]
	out, isSecret := obj.(*corev1.Secret)
	switch {
	case !isSecret:
		return fmt.Errorf("the polling case reads Secrets only, not %T", obj)
	case !ok:
		return apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, key.Name)
	}
	secret.DeepCopyInto(out)
	return nil
}

func (s *secretReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("the polling case lists nothing")
}

// poller reads the clusters' members through AgentMembers with a pool of workers.
type poller struct {
	clusters []pollCluster
	workers  int
	members  *databasecluster.AgentMembers
	reader   *secretReader

	reads, readErrors atomic.Int64
	mu                sync.Mutex
	firstError        string
	durations         []time.Duration
}

// readCluster reads a cluster's members as readMembers does: all at once, each bounded by
// pollingAgentTimeout.
func (p *poller) readCluster(ctx context.Context, c *pollCluster) {
	start := time.Now()
	var wg sync.WaitGroup
	for i := range c.pods {
		wg.Go(func() {
			readCtx, cancel := context.WithTimeout(ctx, pollingAgentTimeout)
			defer cancel()
			_, err := p.members.Observe(readCtx, c.dc, &c.pods[i])
			p.reads.Add(1)
			if err != nil {
				p.readErrors.Add(1)
				p.mu.Lock()
				if p.firstError == "" {
					p.firstError = fmt.Sprintf("%s: %v", c.pods[i].Name, err)
				}
				p.mu.Unlock()
			}
		})
	}
	wg.Wait()
	p.mu.Lock()
	p.durations = append(p.durations, time.Since(start))
	p.mu.Unlock()
}

// sweepCPU is this process's CPU seconds, the agents' and the collector's cycles so far.
type sweepCPU struct {
	client, agents float64
	gcs            uint32
}

func readSweepCPU(agentPID int) sweepCPU {
	var u syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &u) // cannot fail for RUSAGE_SELF
	st, _ := proc.ReadStat(agentPID)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return sweepCPU{client: time.Duration(u.Utime.Nano() + u.Stime.Nano()).Seconds(), agents: st.CPUSeconds, gcs: ms.NumGC}
}

// measure runs rounds of reads of every cluster (interval 0: a sweep) and returns their figures.
func (p *poller) measure(ctx context.Context, agentPID int, interval time.Duration, rounds int) pollingCase {
	p.reads.Store(0)
	p.readErrors.Store(0)
	p.reader.gets.Store(0)
	p.firstError, p.durations = "", nil
	runtime.GC()
	before, start := readSweepCPU(agentPID), time.Now()
	lag := p.run(ctx, interval, rounds)
	wall, after := time.Since(start), readSweepCPU(agentPID)
	slices.Sort(p.durations)
	return pollingCase{IntervalSec: interval.Seconds(), Rounds: rounds, WallSec: wall.Seconds(), MemberReads: p.reads.Load(),
		ReadErrors: p.readErrors.Load(), FirstError: p.firstError, SecretGets: p.reader.gets.Load(),
		ClientCPUSec: after.client - before.client, AgentCPUSec: after.agents - before.agents, GCs: after.gcs - before.gcs,
		ClusterReadP50Sec: percentileOf(p.durations, 50).Seconds(), ClusterReadP99Sec: percentileOf(p.durations, 99).Seconds(),
		MaxLagSec: lag.Seconds()}
}

// percentileOf is the pth percentile of sorted (nearest rank), 0 for none.
func percentileOf(sorted []time.Duration, pth float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, max(0, int(math.Ceil(pth/100*float64(len(sorted))))-1))]
}

// run hands the clusters to the workers, rounds times: at once (interval 0), or cluster i of
// round k at k×interval + i×interval/N from the start, as the clusters' requeues spread them.
// It returns how late a paced read was handed out at worst.
func (p *poller) run(ctx context.Context, interval time.Duration, rounds int) time.Duration {
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range p.workers {
		wg.Go(func() {
			for i := range jobs {
				p.readCluster(ctx, &p.clusters[i])
			}
		})
	}
	defer wg.Wait()
	defer close(jobs)
	n, total := len(p.clusters), rounds*len(p.clusters)
	if interval == 0 {
		for k := range total {
			select {
			case jobs <- k % n:
			case <-ctx.Done():
				return 0
			}
		}
		return 0
	}
	start, lag := time.Now(), time.Duration(0)
	due := func(k int) time.Time {
		return start.Add(time.Duration(k/n)*interval + time.Duration(k%n)*interval/time.Duration(n))
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for k := 0; k < total; {
		for ; k < total && !time.Now().Before(due(k)); k++ {
			select {
			case jobs <- k % n:
				lag = max(lag, time.Since(due(k)))
			case <-ctx.Done():
				return lag
			}
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return lag
		}
	}
	return lag
}

// growHeap allocates pointer-holding objects until the live heap is about target bytes, so
// that the collector runs as often as in a manager with that live heap.
func growHeap(target int) []*heapNode {
	type node = heapNode
	var out []*node
	for missing := int64(target) - liveHeap(); missing > 0; missing -= 64 * 1024 {
		chunk := make([]node, 1024) // 64 KiB of 64-byte nodes
		for i := range chunk[1:] {
			chunk[i].next = &chunk[i+1]
		}
		out = append(out, &chunk[0])
	}
	return out
}

// heapNode is 64 bytes of pointers, as much of the manager's heap is.
type heapNode struct {
	next *heapNode
	_    [7]*byte
}

// liveHeap is the heap in use after two collections (what a sync.Pool held is freed by the
// second).
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// agentProcess is the child that serves the agents.
type agentProcess struct {
	cmd   *exec.Cmd
	stdin io.Closer
	pid   int
	addrs []string
}

// startAgentProcess runs this binary with -polling-agents on a file of specs, and reads the
// address of each agent, in the order of specs, from its first line of output.
func startAgentProcess(specs []agentSpec) (*agentProcess, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "bench-polling-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	data, err := json.Marshal(specs)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "agents.json"), data, 0o600)
	}
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-polling-agents", filepath.Join(dir, "agents.json"))
	cmd.Stderr = os.Stderr
	stdin, err1 := cmd.StdinPipe()
	stdout, err2 := cmd.StdoutPipe()
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	a := &agentProcess{cmd: cmd, stdin: stdin, pid: cmd.Process.Pid}
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err == nil {
		err = json.Unmarshal(line, &a.addrs)
	}
	if err == nil && len(a.addrs) != len(specs) {
		err = fmt.Errorf("the agents' process answered %d addresses for %d agents", len(a.addrs), len(specs))
	}
	if err != nil {
		a.stop()
		return nil, fmt.Errorf("starting the agents' process: %w", err)
	}
	return a, nil
}

// stop closes the child's input, on which it exits, and waits for it (kills it after 10 s).
func (a *agentProcess) stop() {
	_ = a.stdin.Close()
	done := make(chan struct{})
	go func() { _ = a.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = a.cmd.Process.Kill()
		<-done
	}
}

// serveAgents is the child's mode (-polling-agents FILE): it serves each agent of FILE on a
// listener of its own, prints their addresses as one JSON line and serves until its input ends.
func serveAgents(file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var specs []agentSpec
	if err := json.Unmarshal(data, &specs); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrs, err := startAgents(ctx, specs)
	if err != nil {
		return err
	}
	line, _ := json.Marshal(addrs) // strings always marshal
	if _, err := fmt.Println(string(line)); err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}

// startAgents serves each spec's SimEngine with memberagent.Serve on a 127.0.0.1 listener of its
// own until ctx ends, and returns their addresses in the order of specs.
func startAgents(ctx context.Context, specs []agentSpec) ([]string, error) {
	addrs := make([]string, len(specs))
	for i, s := range specs {
		cfg, err := memberagent.ServerConfig(s.CAPEM, s.CertPEM, s.KeyPEM)
		if err != nil {
			return nil, fmt.Errorf("agent %s: %w", s.Name, err)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("agent %s (%d of %d): %w", s.Name, i+1, len(specs), err)
		}
		addrs[i] = l.Addr().String()
		go func() { _ = memberagent.Serve(ctx, l, memberagent.NewSimEngine(s.Name, s.Role), cfg) }()
	}
	return addrs, nil
}

// pollingTable is a row per case of the polling results: the reads' rate, the manager's CPU per
// read, per member and minute and as a share of one core, and the agents' CPU per read.
func pollingTable(files []resultFile) mdTable {
	t := mdTable{header: []string{colRun, colCase, "clusters × members", "interval s", "wall s", "member reads/s",
		"CA Secret GETs/s", "errors", "client CPU µs/read", "client CPU ms/member/min", "client share of one core",
		"agents' CPU µs/read", "cluster read p50 / p99 ms"}}
	for _, f := range files {
		p := f.Rep.Polling
		if p == nil {
			continue
		}
		for _, c := range p.Cases {
			reads := float64(max(c.MemberReads, 1))
			members := float64(p.Clusters * p.MembersPerCluster)
			interval, perMember := "—", "—" // a sweep has no interval: its rate is the workers'
			if c.IntervalSec > 0 {
				interval, perMember = fixed(c.IntervalSec, 0), fixed(1e3*c.ClientCPUSec/members/(c.WallSec/60), 1)
			}
			t.add(runLink(f), pollingCaseLabel(c), fmt.Sprintf("%d × %d", p.Clusters, p.MembersPerCluster), interval,
				fixed(c.WallSec, 1), fixed(float64(c.MemberReads)/c.WallSec, 0), fixed(float64(c.SecretGets)/c.WallSec, 0),
				strconv.FormatInt(c.ReadErrors, 10), fixed(1e6*c.ClientCPUSec/reads, 0),
				perMember, fixed(c.ClientCPUSec/c.WallSec, 2),
				fixed(1e6*c.AgentCPUSec/reads, 0), fixed(1e3*c.ClusterReadP50Sec, 1)+" / "+fixed(1e3*c.ClusterReadP99Sec, 1))
		}
	}
	return t
}

// pollingCaseLabel names a case with its rounds and its limit of the CA read.
func pollingCaseLabel(c pollingCase) string {
	parts := []string{fmt.Sprintf("%s ×%d", c.Name, c.Rounds)}
	if c.APIQPS > 0 {
		parts = append(parts, fmt.Sprintf("%g QPS / %d burst", c.APIQPS, c.APIBurst))
	}
	return strings.Join(parts, ", ")
}
