package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/ptr"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	apischeme "github.com/seed1b407122/database-operator/api/scheme"
	"github.com/seed1b407122/database-operator/test/harness/controlplane"
	"github.com/seed1b407122/database-operator/test/harness/manager"
)

const (
	benchNamespace = "bench"
	rawNamespace   = "bench-raw"
	// workers create the raw ConfigMaps and the DatabaseClusters.
	workers = 8
	// scrapeInterval is how often the manager's /metrics is read for its heap while the clusters
	// converge: as often as Prometheus scrapes it, not more, since every scrape builds every
	// series and so changes what it measures.
	scrapeInterval = 30 * time.Second
	heapAlloc      = "go_memstats_heap_alloc_bytes"
)

// benchCase is one configuration: a fresh local cluster, one manager (none for a floor case),
// N DatabaseClusters. Manager is the case's binary when -manager names several.
type benchCase struct {
	Floor       bool    `json:"floor,omitempty"`
	N           int     `json:"n"`
	Nodes       int     `json:"nodes"`
	Concurrency int     `json:"maxConcurrentReconciles"`
	QPS         float64 `json:"kubeAPIQPS"`
	Burst       int     `json:"kubeAPIBurst"`
	Manager     string  `json:"manager,omitempty"`
}

func (c benchCase) String() string { return fmt.Sprintf("%s, %d nodes", caseLabel(c), c.Nodes) }

// settings are the flags shared by every case.
type settings struct {
	idle, rawDuration, timeout, cpuProfileDuration time.Duration
	manager, heapDir, cpuProfileDir                string
	apiServerArgs, schedulerArgs                   []string
}

// result is what one case measured; older results lack the fields added since (0 or absent).
type result struct {
	Case             benchCase `json:"case"`
	Error            string    `json:"error,omitempty"`
	RawWritesPerSec  float64   `json:"rawWritesPerSec"`
	ClusterStartSec  float64   `json:"clusterStartSeconds"`
	ManagerStartSec  float64   `json:"managerStartSeconds"`
	ConvergenceSec   float64   `json:"convergenceSeconds"`
	Available        int       `json:"available"`
	LatencyP50Sec    float64   `json:"latencyP50Seconds"`
	LatencyP90Sec    float64   `json:"latencyP90Seconds"`
	LatencyP99Sec    float64   `json:"latencyP99Seconds"`
	LatencyMaxSec    float64   `json:"latencyMaxSeconds"`
	FirstPassP50Sec  float64   `json:"firstPassP50Seconds,omitempty"` // create returned → StatefulSet seen
	FirstPassP99Sec  float64   `json:"firstPassP99Seconds,omitempty"`
	CreateSpreadSec  float64   `json:"createSpreadSeconds"`
	OperatorWrites   int64     `json:"operatorWrites"` // the floor's: the children it created
	OperatorReads    int64     `json:"operatorReads"`
	OperatorWatches  int64     `json:"operatorWatches"`
	WritesPerCluster float64   `json:"writesPerCluster"`
	ReadsPerCluster  float64   `json:"readsPerCluster"`
	SystemWrites     float64   `json:"systemWrites"` // every client's, from kube-apiserver's metrics
	IdleSec          float64   `json:"idleSeconds"`
	IdleWrites       int64     `json:"idleWrites"`
	IdleReads        int64     `json:"idleReads"`
	BaselineRSS      int64     `json:"baselineRSSBytes"`
	PeakRSS          int64     `json:"peakRSSBytes"`
	EndRSS           int64     `json:"endRSSBytes"`
	RSSPer1000       float64   `json:"rssPer1000ClustersBytes"`
	PeakHeap         float64   `json:"peakHeapAllocBytes"`
	EndHeap          float64   `json:"endHeapAllocBytes"`
	ManagerSeries    int       `json:"managerSeries"`  // of its /metrics at the end of the idle window
	OperatorSeries   int       `json:"operatorSeries"` // of them, database_operator_*
	ReconcilesPerDC  float64   `json:"reconcilesPerCluster"`
	ReconcileErrors  float64   `json:"reconcileErrors"`
	// Converge and Idle are the manager's requests, counted from the audit log (audit.go).
	Converge requestCounts `json:"convergeRequests"`
	Idle     requestCounts `json:"idleRequests"`
	// ManagerRESTByVerb is the manager's rest_client_requests_total: a cross-check of the audit.
	ManagerRESTByVerb map[string]float64    `json:"managerRestClientRequestsByMethodCode"`
	SystemByResource  map[string]float64    `json:"systemWritesByVerbResource"`
	Stages            map[string][2]float64 `json:"stagesP50P99Seconds"` // stageBreakdown
	ManagerCPUSec     float64               `json:"managerCPUSeconds,omitempty"`
	ManagerGCs        float64               `json:"managerGCs,omitempty"`
	HeapTop           []heapEntry           `json:"heapTopInuse,omitempty"` // at the end of the idle window
	HeapInuse         int64                 `json:"heapInuseBytes,omitempty"`
	CPUByProcess      map[string]float64    `json:"cpuSecondsByProcess,omitempty"` // readCPU
	// IdleCPUByProcess is the CPU of the idle window: what the converged clusters cost while
	// nothing changes, to tell the work of a case from the time it ran.
	IdleCPUByProcess map[string]float64 `json:"idleCPUSecondsByProcess,omitempty"`
	// MemoryParts is what the manager's RSS is made of, at the baseline and at the end of the idle
	// window (memoryParts), since 2026-11-29.
	MemoryParts map[string]float64 `json:"memoryPartsBytes,omitempty"`
}

// memstatsParts are the Go runtime's figures of the manager's /metrics that memoryParts records:
// the heap's spans (sys, released to the kernel, in use, idle), the stacks and the collector's
// own metadata.
var memstatsParts = []string{"go_memstats_heap_sys_bytes", "go_memstats_heap_released_bytes", "go_memstats_heap_inuse_bytes",
	"go_memstats_heap_idle_bytes", "go_memstats_stack_sys_bytes", "go_memstats_gc_sys_bytes"}

// memoryParts adds to parts, each name prefixed with when ("baseline", "end"), what snapshot s
// read of the manager's memory: its anonymous and file-backed RSS (RssAnon: heap, stacks, the
// runtime's; RssFile: the pages of its binary, which the figure per 1,000 clusters subtracts
// with the baseline) and memstatsParts of its /metrics.
func memoryParts(parts map[string]float64, when string, s snapshot) {
	for _, name := range []string{"RssAnon", "RssFile"} {
		parts[when+" "+name] = float64(s.proc[name])
	}
	for _, name := range memstatsParts {
		parts[when+" "+name] = sum(s.manager, name, nil)
	}
}

func logf(format string, args ...any) { _, _ = fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...) }

// runCase runs one case from cluster start to cluster stop.
func runCase(ctx context.Context, bc benchCase, s settings) (res result, err error) {
	res.Case = bc
	// Every case gets the audit policy, the floor too (it logs nothing there): both pay its cost.
	auditDir, err := os.MkdirTemp("", "bench-audit-")
	if err != nil {
		return res, err
	}
	defer func() { _ = os.RemoveAll(auditDir) }()
	auditFlags, auditLog, err := auditArgs(auditDir)
	if err != nil {
		return res, err
	}
	began := time.Now()
	cluster, err := controlplane.Start(ctx, controlplane.Options{
		Nodes: bc.Nodes, CRDDirectoryPaths: []string{crdDir},
		APIServerArgs: append(slices.Clone(s.apiServerArgs), auditFlags...), SchedulerArgs: s.schedulerArgs,
	})
	if err != nil {
		return res, fmt.Errorf("starting the local cluster: %w", err)
	}
	defer func() { err = errors.Join(err, cluster.Stop()) }()
	res.ClusterStartSec = time.Since(began).Seconds()
	c, err := newClient(ctx, unlimited(cluster.Config), rawNamespace, benchNamespace)
	if err != nil {
		return res, err
	}
	logf("measuring the raw write rate: %d workers creating ConfigMaps for %s", workers, s.rawDuration)
	if res.RawWritesPerSec, err = measureRawWrites(ctx, c, s.rawDuration); err != nil {
		return res, err
	}
	logf("raw write rate: %.0f creates/s", res.RawWritesPerSec)
	deleting := time.Now()
	if err := deleteRawConfigMaps(ctx, c); err != nil {
		return res, err
	}
	logf("deleted the ConfigMaps of the raw write rate in %.1fs", time.Since(deleting).Seconds())
	if bc.Floor {
		return res, measureFloor(ctx, c, cluster.Config, bc, s, &res)
	}
	began = time.Now()
	m, err := startManager(ctx, cluster, bc, s, auditLog)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, m.Stop(30*time.Second)) }()
	res.ManagerStartSec = time.Since(began).Seconds()
	logf("manager ready in %.1fs (pid %d, log %s)", res.ManagerStartSec, m.Pid(), m.LogPath)
	return res, measure(ctx, c, m, bc, s, &res)
}

// measure runs the convergence and idle phases against a running manager.
func measure(ctx context.Context, c client.Client, m *benchManager, bc benchCase, s settings, res *result) error {
	time.Sleep(3 * time.Second) // the manager's informers finish their initial lists before the baseline
	base, err := m.snapshot(ctx)
	if err != nil {
		return err
	}
	res.BaselineRSS = base.rss
	res.MemoryParts = map[string]float64{}
	memoryParts(res.MemoryParts, "baseline", base)
	peakHeap := sampleHeap(ctx, m.metricsURL)
	defer peakHeap()
	tr, err := startTracker(ctx, m.admin, bc.N, &databasev1alpha1.DatabaseCluster{}, clusterAvailable)
	if err != nil {
		return err
	}
	defer tr.stop()
	logf("creating %d DatabaseClusters", bc.N)
	waitErr := converge(ctx, c, m.admin, m, bc, s, res, tr, func() error { return createClusters(ctx, c, bc.N, tr) })
	conv, err := m.snapshot(ctx)
	if err != nil {
		return err
	}
	fillConverge(res, base, conv, bc.N)
	logf("converged in %.1fs: %d operator writes (%.2f per cluster)", res.ConvergenceSec, res.OperatorWrites, res.WritesPerCluster)
	if waitErr != nil {
		return waitErr
	}

	logf("idle window of %s", s.idle)
	idleStart := time.Now()
	cpuBase, cpuErr := readCPU()
	select {
	case <-time.After(s.idle):
	case <-ctx.Done():
		return ctx.Err()
	}
	res.IdleCPUByProcess = cpuSince(cpuBase, cpuErr)
	idle, err := m.snapshot(ctx)
	if err != nil {
		return err
	}
	res.IdleSec = time.Since(idleStart).Seconds()
	res.Idle = idle.requests.minus(conv.requests)
	res.IdleWrites, res.IdleReads, _ = res.Idle.totals()
	res.PeakHeap, res.EndHeap, res.EndRSS = max(peakHeap(), idle.heap, conv.heap), idle.heap, idle.rss
	res.ManagerSeries, res.OperatorSeries = seriesCounts(idle.manager)
	memoryParts(res.MemoryParts, "end", idle)
	keep := ""
	if s.heapDir != "" {
		keep = filepath.Join(s.heapDir, fmt.Sprintf("heap-%s-n%d-c%d-q%g.pb.gz", idleStart.UTC().Format(stampLayout), bc.N, bc.Concurrency, bc.QPS))
	}
	if res.HeapTop, res.HeapInuse, err = heapTop(ctx, m.pprofURL, keep); err != nil {
		logf("no heap profile: %v", err)
	}
	_, res.PeakRSS, _ = procMemory(m.Pid())
	res.RSSPer1000 = float64(res.PeakRSS-res.BaselineRSS) * 1000 / float64(bc.N)
	logf("idle: %d operator writes, %d reads in %.0fs; peak RSS %.1f MiB", res.IdleWrites, res.IdleReads, res.IdleSec,
		mib(float64(res.PeakRSS)))
	return nil
}

// converge creates the clusters with create and waits until the tracker has seen every one
// converge (or the manager m exits; nil in the floor case), filling the convergence figures of
// res: latencies, steps and the CPU by process. It returns why they did not all converge, if so.
func converge(ctx context.Context, c client.Client, admin *rest.Config, m *benchManager, bc benchCase, s settings,
	res *result, tr *tracker, create func() error,
) error {
	cpuBase, cpuErr := readCPU()
	profiled := startCPUProfiles(ctx, admin, m, bc, s)
	start := time.Now()
	if err := create(); err != nil {
		return err
	}
	res.CreateSpreadSec = time.Since(start).Seconds()
	logf("created in %.1fs; waiting until all %d converge", res.CreateSpreadSec, bc.N)
	var exited <-chan struct{}
	if m != nil {
		exited = m.Done()
	}
	err := tr.wait(ctx, s.timeout, exited)
	res.CPUByProcess = cpuSince(cpuBase, cpuErr)
	profiled()
	lat, last := tr.durations(stageCreated, stageConverged)
	res.ConvergenceSec = cmp.Or(last, time.Now()).Sub(start).Seconds()
	res.Available = len(lat)
	res.LatencyP50Sec, res.LatencyP90Sec = percentile(lat, 0.50), percentile(lat, 0.90)
	res.LatencyP99Sec, res.LatencyMaxSec = percentile(lat, 0.99), percentile(lat, 1)
	first, _ := tr.durations(stageCreated, stageFirstPass)
	res.FirstPassP50Sec, res.FirstPassP99Sec = percentile(first, 0.50), percentile(first, 0.99)
	res.Stages = stageBreakdown(ctx, c, tr)
	time.Sleep(2 * time.Second) // so that writes the last clusters caused (events) land in this window
	return err
}

// fillConverge computes the request figures of the convergence window.
func fillConverge(res *result, base, conv snapshot, n int) {
	res.Converge = conv.requests.minus(base.requests)
	res.OperatorWrites, res.OperatorReads, res.OperatorWatches = res.Converge.totals()
	res.WritesPerCluster = float64(res.OperatorWrites) / float64(n)
	res.ReadsPerCluster = float64(res.OperatorReads) / float64(n)
	res.SystemWrites = systemWrites(conv.apiserver) - systemWrites(base.apiserver)
	res.SystemByResource = minus(apiserverWrites(conv.apiserver), apiserverWrites(base.apiserver))
	b, c := base.manager, conv.manager
	res.ManagerRESTByVerb = deltaBy(b, c, "rest_client_requests_total", nil, "method", "code")
	ours := map[string]string{"controller": "databasecluster"}
	res.ReconcilesPerDC = delta(b, c, "controller_runtime_reconcile_total", ours) / float64(n)
	errs := map[string]string{"controller": "databasecluster", "result": "error"}
	res.ReconcileErrors = delta(b, c, "controller_runtime_reconcile_total", errs)
	res.ManagerCPUSec = delta(b, c, "process_cpu_seconds_total", nil)
	res.ManagerGCs = delta(b, c, "go_gc_duration_seconds_count", nil)
}

// unlimited returns a copy of cfg whose client never waits for a rate limiter.
func unlimited(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, 0
	cfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	cfg.UserAgent = "database-operator-bench"
	return cfg
}

// newClient returns a client of cfg, having created the namespaces.
func newClient(ctx context.Context, cfg *rest.Config, namespaces ...string) (client.Client, error) {
	c, err := client.New(cfg, client.Options{Scheme: apischeme.Must()})
	if err != nil {
		return nil, fmt.Errorf("creating the client: %w", err)
	}
	for _, ns := range namespaces {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return nil, fmt.Errorf("creating namespace %s: %w", ns, err)
		}
	}
	return c, nil
}

// deleteRawConfigMaps deletes the ConfigMaps of the raw write rate and waits until they are
// gone, before the case starts: the manager's cache of the pods' inputs holds the metadata of
// every ConfigMap it may read (cachecfg.InputsOptions), and the 7,000 to 10,000 of the raw write
// rate (the count follows the rate) put a few MiB, different in each case, into the manager's
// baseline, into its collector's target and into the RSS per 1,000 clusters (2026-11-30).
// (kube-controller-manager's kube-root-ca.crt, which it puts back at once, is left alone.)
func deleteRawConfigMaps(ctx context.Context, c client.Client) error {
	if err := c.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(rawNamespace), client.MatchingLabels(rawLabels)); err != nil {
		return fmt.Errorf("deleting the ConfigMaps of the raw write rate: %w", err)
	}
	err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		left := &metav1.PartialObjectMetadataList{}
		left.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
		err := c.List(ctx, left, client.InNamespace(rawNamespace), client.MatchingLabels(rawLabels), client.Limit(1))
		return err == nil && len(left.Items) == 0, err
	})
	if err != nil {
		return fmt.Errorf("waiting until the ConfigMaps of the raw write rate are gone: %w", err)
	}
	return nil
}

// rawLabels mark the ConfigMaps of the raw write rate.
var rawLabels = map[string]string{"bench.database.seed1b407122.io/raw-write": "true"}

// measureRawWrites creates small ConfigMaps with workers goroutines for d and returns how many
// were created per second.
func measureRawWrites(ctx context.Context, c client.Client, d time.Duration) (float64, error) {
	var created atomic.Int64
	start := time.Now()
	err := forEach(workers, workers, func(w string) error {
		for i := 0; time.Since(start) < d && ctx.Err() == nil; i++ {
			cm := &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Namespace: rawNamespace, Name: fmt.Sprintf("raw-%s-%d", w, i), Labels: rawLabels},
				Data:       map[string]string{"key": "raw write"},
			}
			if err := c.Create(ctx, cm); err != nil {
				return fmt.Errorf("creating ConfigMaps: %w", err)
			}
			created.Add(1)
		}
		return nil
	})
	return float64(created.Load()) / time.Since(start).Seconds(), err
}

// newDatabaseCluster is the smallest valid cluster: one replica on StorageClass standard.
func newDatabaseCluster(name string) *databasev1alpha1.DatabaseCluster {
	return &databasev1alpha1.DatabaseCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: name},
		Spec: databasev1alpha1.DatabaseClusterSpec{
			Replicas: ptr.To[int32](1),
			Image:    "bench.local/database:1",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("10m"),
				corev1.ResourceMemory: resource.MustParse("16Mi"),
			}},
			Storage: databasev1alpha1.StorageSpec{StorageClassName: "standard", Size: "1Gi"},
		},
	}
}

// createClusters creates n DatabaseClusters, telling tr when each create returned.
func createClusters(ctx context.Context, c client.Client, n int, tr *tracker) error {
	return forEach(n, workers, func(name string) error { return createCluster(ctx, c, name, tr) })
}

func createCluster(ctx context.Context, c client.Client, name string, tr *tracker) error {
	if err := c.Create(ctx, newDatabaseCluster(name)); err != nil {
		return fmt.Errorf("creating DatabaseCluster %s: %w", name, err)
	}
	tr.mark(stageCreated, name)
	return nil
}

// forEach calls do with the names of n clusters (db-00000...) from workers goroutines, and
// returns the first error, after which each goroutine stops.
func forEach(n, workers int, do func(name string) error) error {
	names := make(chan string, n)
	for i := range n {
		names <- fmt.Sprintf("db-%05d", i)
	}
	close(names)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for name := range names {
				if err := do(name); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// The stages of a cluster the tracker records.
const (
	stageCreated   = iota // its create returned
	stageFirstPass        // its StatefulSet was first seen
	stageConverged        // it was first seen converged
)

// tracker records when each cluster reached each stage, from informers that both cases run
// alike, so that the tracker costs them alike.
type tracker struct {
	n    int
	stop context.CancelFunc // ends the informers
	mu   sync.Mutex
	at   [3]map[string]time.Time // by stage, by cluster
	done chan struct{}           // closed once n clusters converged
}

// startTracker runs informers of obj's kind and of StatefulSets in the bench namespace and
// returns once they have synced; converged names the cluster of an object that has converged (a
// DatabaseCluster Available, or in the floor case a StatefulSet ready).
func startTracker(ctx context.Context, admin *rest.Config, n int, obj client.Object,
	converged func(any) (string, bool),
) (*tracker, error) {
	t := &tracker{n: n, done: make(chan struct{})}
	for i := range t.at {
		t.at[i] = map[string]time.Time{}
	}
	informers, err := crcache.New(unlimited(admin), crcache.Options{Scheme: apischeme.Must(),
		DefaultNamespaces: map[string]crcache.Config{benchNamespace: {}}})
	if err != nil {
		return nil, err
	}
	for kind, observe := range map[client.Object]func(any){
		obj: func(o any) {
			if name, ok := converged(o); ok {
				t.mark(stageConverged, name)
			}
		},
		&appsv1.StatefulSet{}: func(o any) { t.mark(stageFirstPass, o.(client.Object).GetName()) }, // named like its cluster
	} {
		inf, err := informers.GetInformer(ctx, kind)
		if err != nil {
			return nil, err
		}
		handler := toolscache.ResourceEventHandlerFuncs{AddFunc: observe, UpdateFunc: func(_, o any) { observe(o) }}
		if _, err := inf.AddEventHandler(handler); err != nil {
			return nil, err
		}
	}
	ctx, t.stop = context.WithCancel(ctx)
	go func() { _ = informers.Start(ctx) }()
	if !informers.WaitForCacheSync(ctx) {
		t.stop()
		return nil, fmt.Errorf("watching %T: not synced", obj)
	}
	return t, nil
}

// mark records that the cluster name reached stage now, unless it had before.
func (t *tracker) mark(stage int, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, seen := t.at[stage][name]; seen {
		return
	}
	t.at[stage][name] = time.Now()
	if stage == stageConverged && len(t.at[stage]) == t.n {
		close(t.done)
	}
}

// durations returns, sorted, the seconds from stage from to stage to of every cluster that
// reached both, and when the last cluster reached to.
func (t *tracker) durations(from, to int) (out []float64, last time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for name, at := range t.at[to] {
		if at.After(last) {
			last = at
		}
		if start, ok := t.at[from][name]; ok {
			out = append(out, max(0, at.Sub(start).Seconds()))
		}
	}
	sort.Float64s(out)
	return out, last
}

func (t *tracker) count(stage int) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.at[stage])
}

// clusterAvailable names a DatabaseCluster whose Available condition is True.
func clusterAvailable(obj any) (string, bool) {
	dc, ok := obj.(*databasev1alpha1.DatabaseCluster)
	if !ok || !meta.IsStatusConditionTrue(dc.Status.Conditions, databasev1alpha1.ConditionAvailable) {
		return "", false
	}
	return dc.Name, true
}

// wait waits until every cluster has converged, logging progress every 10 s, for at most
// timeout. exited is closed when the manager exits (nil: no manager), which ends the wait at
// once: nothing would converge any more.
func (t *tracker) wait(ctx context.Context, timeout time.Duration, exited <-chan struct{}) error {
	deadline := time.After(timeout)
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-t.done:
			return nil
		case <-tick.C:
			logf("%d/%d converged", t.count(stageConverged), t.n)
		case <-deadline:
			return fmt.Errorf("only %d of %d clusters converged after %s", t.count(stageConverged), t.n, timeout)
		case <-exited:
			return fmt.Errorf("the manager exited with %d of %d DatabaseClusters Available", t.count(stageConverged), t.n)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// percentile returns the q-quantile (nearest rank) of sorted values.
func percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*q+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// stageBreakdown tells where the time of create→Available goes, from the timestamps of each
// cluster's pod (named <cluster>-0): cluster created → StatefulSet created → pod created → pod
// scheduled → pod Ready → cluster seen Available. API timestamps have a resolution of one second.
func stageBreakdown(ctx context.Context, c client.Client, tr *tracker) map[string][2]float64 {
	var dcs databasev1alpha1.DatabaseClusterList
	var pods corev1.PodList
	var sets appsv1.StatefulSetList
	for _, l := range []client.ObjectList{&dcs, &pods, &sets} {
		if c.List(ctx, l, client.InNamespace(benchNamespace)) != nil {
			return nil
		}
	}
	created := map[string]time.Time{} // by "<kind> <name>"
	for _, dc := range dcs.Items {
		created["dc "+dc.Name] = dc.CreationTimestamp.Time
	}
	for _, sts := range sets.Items {
		created["sts "+sts.Name] = sts.CreationTimestamp.Time
	}
	for _, pod := range pods.Items {
		created["pod "+pod.Name] = pod.CreationTimestamp.Time
		created["scheduled "+pod.Name] = conditionTime(&pod, corev1.PodScheduled)
		created["ready "+pod.Name] = conditionTime(&pod, corev1.PodReady)
	}
	steps := map[string][]float64{}
	add := func(step string, from, to time.Time) {
		if !from.IsZero() && !to.IsZero() {
			steps[step] = append(steps[step], max(0, to.Sub(from).Seconds()))
		}
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for name := range tr.at[stageCreated] {
		pod := name + "-0"
		if created["pod "+pod].IsZero() {
			continue
		}
		if sts := created["sts "+name]; !sts.IsZero() {
			add("0 cluster created→StatefulSet created", created["dc "+name], sts)
			add("1 StatefulSet created→pod created", sts, created["pod "+pod])
		}
		add("2 pod created→scheduled", created["pod "+pod], created["scheduled "+pod])
		add("3 pod scheduled→Ready", created["scheduled "+pod], created["ready "+pod])
		add("4 pod Ready→cluster Available", created["ready "+pod], tr.at[stageConverged][name].Truncate(time.Second))
	}
	out := map[string][2]float64{}
	for step, v := range steps {
		sort.Float64s(v)
		out[step] = [2]float64{percentile(v, 0.5), percentile(v, 0.99)}
	}
	return out
}

func conditionTime(pod *corev1.Pod, t corev1.PodConditionType) time.Time {
	for _, c := range pod.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

// benchManager is the running manager binary of an operator case.
type benchManager struct {
	*manager.Process
	admin                          *rest.Config
	metricsURL, pprofURL, auditLog string
}

// startManager runs the manager against the cluster as auditUser and waits until /readyz
// answers.
func startManager(ctx context.Context, cluster *controlplane.Cluster, bc benchCase, s settings, auditLog string,
) (*benchManager, error) {
	kubeconfig, err := auditUserKubeconfig(cluster)
	if err != nil {
		return nil, err
	}
	binary := cmp.Or(bc.Manager, s.manager)
	if err := cacheBinary(binary); err != nil {
		return nil, err
	}
	p, err := manager.Start(ctx, manager.Options{
		Binary:     binary,
		Kubeconfig: kubeconfig,
		LogPath:    filepath.Join(cluster.WorkDir, "manager.log"),
		PortFlags:  []string{manager.MetricsFlag, manager.PprofFlag},
		Args: []string{"--leader-elect=false", "--metrics-secure=false", fmt.Sprintf("--max-concurrent-reconciles=%d", bc.Concurrency),
			fmt.Sprintf("--kube-api-qps=%g", bc.QPS), fmt.Sprintf("--kube-api-burst=%d", bc.Burst)},
	})
	if err != nil {
		return nil, err
	}
	return &benchManager{Process: p, admin: cluster.Config, auditLog: auditLog,
		metricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", p.Ports[manager.MetricsFlag]),
		pprofURL:   fmt.Sprintf("http://127.0.0.1:%d", p.Ports[manager.PprofFlag]),
	}, nil
}

// cacheBinary reads the file at path whole, so that the page cache holds all of it when it
// starts: the kernel maps the cached pages around a page fault of a mapped file, so a binary
// partly evicted from the page cache (by the control plane of an earlier case) starts with
// less file-backed RSS (fincore, 2026-11-30: 26, 58 and 73 MB of 77 cached). A binary written
// just before still starts with several MiB more than one written long before, read whole or
// not: build or copy the binaries of a before/after pair together (docs/benchmarks.md).
func cacheBinary(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("reading the manager binary into the page cache: %w", err)
	}
	defer func() { _ = f.Close() }()
	if _, err := io.Copy(io.Discard, f); err != nil {
		return fmt.Errorf("reading the manager binary into the page cache: %w", err)
	}
	return nil
}

// snapshot is the state of the counters at one moment.
type snapshot struct {
	requests           requestCounts
	manager, apiserver []sample
	// proc is the manager's /proc/PID/status memory (procMemoryParts); rss its VmRSS.
	proc map[string]int64
	rss  int64
	heap float64
}

// snapshot reads the counters; an error means a figure of the case would be wrong.
func (m *benchManager) snapshot(ctx context.Context) (snapshot, error) {
	var s snapshot
	var errs [4]error
	s.requests, errs[0] = readAudit(m.auditLog)
	s.manager, errs[1] = scrape(ctx, m.metricsURL)
	s.heap = sum(s.manager, heapAlloc, nil)
	s.proc, errs[2] = procMemoryParts(m.Pid())
	s.rss = s.proc["VmRSS"]
	s.apiserver, errs[3] = scrapeAPIServer(ctx, m.admin)
	if err := errors.Join(errs[:]...); err != nil {
		return s, fmt.Errorf("reading the counters: %w", err)
	}
	return s, nil
}

// sampleHeap reads the manager's heap from its /metrics every scrapeInterval until the
// returned func is first called, which returns the peak (peak RSS comes from VmHWM, which needs
// no sampling).
func sampleHeap(ctx context.Context, url string) (stop func() float64) {
	ctx, cancel := context.WithCancel(ctx)
	peak := make(chan float64, 1)
	go func() {
		highest := 0.0
		t := time.NewTicker(scrapeInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				peak <- highest
				return
			case <-t.C:
				if samples, err := scrape(ctx, url); err == nil {
					highest = max(highest, sum(samples, heapAlloc, nil))
				}
			}
		}
	}()
	return sync.OnceValue(func() float64 {
		cancel()
		return <-peak
	})
}
