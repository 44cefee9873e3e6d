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

// The database-operator manager: one controller-runtime manager running the operator's
// controllers, with leader election, secure metrics and health probes.
package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/seed1b407122/database-operator/api/scheme"
	"github.com/seed1b407122/database-operator/controllers/cachecfg"
	"github.com/seed1b407122/database-operator/controllers/databasebackup"
	"github.com/seed1b407122/database-operator/controllers/databasecluster"
	"github.com/seed1b407122/database-operator/controllers/echo"
	"github.com/seed1b407122/database-operator/controllers/leaderlock"
	"github.com/seed1b407122/database-operator/controllers/monitoringobjects"
	"github.com/seed1b407122/database-operator/controllers/operator"
	"github.com/seed1b407122/database-operator/controllers/scheduleddatabasebackup"
	"github.com/seed1b407122/database-operator/controllers/scheduledecho"
	"github.com/seed1b407122/database-operator/controllers/voteconfig"
)

// watchNamespaceEnv names the namespaces to watch, comma separated; empty means all. OLM sets it
// to the OperatorGroup's target namespaces.
const watchNamespaceEnv = "WATCH_NAMESPACE"

// echoImageEnv names the image of the Jobs of Echos and ScheduledEchos; defaultEchoImage is
// used when it is empty. The image needs /bin/sh and printf.
const (
	echoImageEnv     = "ECHO_IMAGE"
	defaultEchoImage = "busybox"
)

// defaultGCPercent is the Go collector's target when GOGC is not set: a collection starts once
// the heap has grown by a quarter of what was live after the last one, not by all of it (Go's
// default, 100). An operator's heap is mostly its caches, and what decides its pod's memory is
// the peak while many objects change at once: at 1,000 new DatabaseClusters the peak RSS above
// the idle manager's was 92 MiB with 100, 68 MiB with 50 and 53 MiB with 25, converging as
// fast; the extra collections cost CPU only while objects change (docs/benchmarks.md, *The
// garbage collector's target*). GOGC in the environment wins.
const defaultGCPercent = 25

// setGCPercent sets the collector's target to defaultGCPercent unless lookup (os.LookupEnv)
// finds GOGC set, and returns the target in effect: -1 when GOGC turns the collector off.
func setGCPercent(lookup func(string) (string, bool)) int {
	if _, set := lookup("GOGC"); set {
		previous := debug.SetGCPercent(100)
		debug.SetGCPercent(previous)
		return previous
	}
	debug.SetGCPercent(defaultGCPercent)
	return defaultGCPercent
}

// podNamespaceEnv names the manager's own namespace (set from the downward API), where
// --monitoring-objects creates the ServiceMonitor and PrometheusRule.
const podNamespaceEnv = "POD_NAMESPACE"

// controllerNames are the controllers --controllers can select.
var controllerNames = []string{"databasecluster", "databasebackup", "scheduleddatabasebackup", "echo", "scheduledecho", "voteconfig"}

// options are the command-line settings of the manager.
type options struct {
	metricsAddr             string
	metricsSecure           bool
	enableHTTP2             bool
	probeAddr               string
	leaderElect             bool
	leaderElectionID        string
	leaderElectionNamespace string
	leaseDuration           time.Duration
	renewDeadline           time.Duration
	retryPeriod             time.Duration
	releaseOnCancel         bool
	maxConcurrentReconciles int
	podReadyTimeout         time.Duration
	controllers             string
	qps                     float64
	burst                   int
	monitoringObjects       bool
	deploymentName          string
	pprofAddr               string
}

func parseFlags() (options, zap.Options) {
	var o options
	flag.StringVar(&o.metricsAddr, "metrics-bind-address", ":8443",
		"Address of the metrics endpoint (HTTPS unless --metrics-secure=false); 0 disables it.")
	flag.BoolVar(&o.metricsSecure, "metrics-secure", true,
		"Serve metrics over HTTPS and require an authenticated, authorized client.")
	flag.BoolVar(&o.enableHTTP2, "enable-http2", false,
		"Serve the metrics endpoint over HTTP/2 too. Off by default: HTTP/2 Rapid Reset and Stream "+
			"Cancellation (CVE-2023-44487, CVE-2023-39325) let a client exhaust the server.")
	flag.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "Address of /healthz and /readyz.")
	flag.StringVar(&o.pprofAddr, "pprof-bind-address", "",
		"Address of Go's /debug/pprof endpoints (heap and CPU profiles, unauthenticated: bind it to localhost); empty disables them. make bench reads the heap profile through it.")
	flag.BoolVar(&o.leaderElect, "leader-elect", false,
		"Elect a leader with a Lease so that only one of several replicas reconciles.")
	flag.StringVar(&o.leaderElectionID, "leader-election-id", "database-operator.seed1b407122.io",
		"Name of the leader election Lease.")
	flag.StringVar(&o.leaderElectionNamespace, "leader-election-namespace", "",
		"Namespace of the Lease (default: the pod's namespace in-cluster).")
	flag.DurationVar(&o.leaseDuration, "leader-election-lease-duration", 15*time.Second,
		"How long non-leaders wait before taking over a Lease that was not renewed.")
	flag.DurationVar(&o.renewDeadline, "leader-election-renew-deadline", 10*time.Second,
		"How long the leader retries renewing before giving up leadership.")
	flag.DurationVar(&o.retryPeriod, "leader-election-retry-period", 2*time.Second,
		"How often candidates try to acquire or renew the Lease.")
	flag.BoolVar(&o.releaseOnCancel, "leader-election-release-on-cancel", true,
		"Release the Lease on a graceful stop, so that another replica takes over at once.")
	flag.DurationVar(&o.podReadyTimeout, "pod-ready-timeout", databasecluster.DefaultPodReadyTimeout,
		"How long a database pod may stay not Ready before its cluster is reported Degraded.")
	// 16: at 1,000 DatabaseClusters the work queue, not the API server, limited 4 workers
	// (docs/benchmarks.md: convergence -10%).
	flag.IntVar(&o.maxConcurrentReconciles, "max-concurrent-reconciles", 16,
		"How many objects of one kind are reconciled at the same time.")
	flag.StringVar(&o.controllers, "controllers", strings.Join(controllerNames, ","),
		"Comma-separated controllers to run; one of: "+strings.Join(controllerNames, ", ")+".")
	flag.BoolVar(&o.monitoringObjects, "monitoring-objects", false,
		"Create the operator's ServiceMonitor and PrometheusRule (config/prometheus) in the namespace "+
			podNamespaceEnv+" names, controlled by the Deployment --deployment-name, whenever the "+
			"Prometheus Operator's API is served. The OLM bundle sets it; make deploy and the chart ship those objects themselves.")
	flag.StringVar(&o.deploymentName, "deployment-name", "database-operator-controller-manager",
		"Name of the manager's own Deployment: the owner of the objects of --monitoring-objects.")
	flag.Float64Var(&o.qps, "kube-api-qps", 50, "Queries per second the client may send to the API server.")
	flag.IntVar(&o.burst, "kube-api-burst", 100, "Burst of queries the client may send to the API server.")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	return o, zapOpts
}

func main() {
	o, zapOpts := parseFlags()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	ctrl.Log.Info("Set the garbage collector's target", "gcPercent", setGCPercent(os.LookupEnv))
	if err := run(o); err != nil {
		ctrl.Log.Error(err, "Manager stopped with an error")
		os.Exit(1)
	}
}

func run(o options) error {
	enabled, err := selectControllers(o.controllers)
	if err != nil {
		return err
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading the kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = float32(o.qps), o.burst
	if err := withoutCompression(cfg); err != nil {
		return err
	}
	kinds, err := scheme.New()
	if err != nil {
		return err
	}
	opts := managerOptions(o, kinds)
	if opts.Cache, err = withSnapshotCache(cfg, opts.Cache); err != nil {
		return err
	}
	stopLockEvents, err := withLeaderLock(cfg, o, &opts)
	if err != nil {
		return err
	}
	defer stopLockEvents()
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	deps, err := operator.DepsFrom(mgr, o.maxConcurrentReconciles)
	if err != nil {
		return err
	}
	if err := setupControllers(mgr, deps, o, enabled); err != nil {
		return err
	}
	if err := setupMonitoringObjects(mgr, deps.Recorder, o); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("adding the health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("adding the readiness check: %w", err)
	}
	ctrl.Log.Info("Starting the manager", "controllers", enabled, "namespaces", watchNamespaces())
	return mgr.Start(ctrl.SetupSignalHandler())
}

// selectControllers parses --controllers, refusing names it does not know.
func selectControllers(list string) ([]string, error) {
	var enabled []string
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !slices.Contains(controllerNames, name) {
			return nil, fmt.Errorf("unknown controller %q in --controllers; known: %s", name, strings.Join(controllerNames, ", "))
		}
		enabled = append(enabled, name)
	}
	if len(enabled) == 0 {
		return nil, errors.New("--controllers selects no controller")
	}
	return enabled, nil
}

// reconciler is what every controller package offers the manager.
type reconciler interface {
	SetupWithManager(ctrl.Manager) error
}

// newReconcilers returns the reconciler of each controller, by the name --controllers uses.
func newReconcilers(deps operator.Deps, o options) map[string]reconciler {
	return map[string]reconciler{
		"databasecluster":         &databasecluster.Reconciler{Deps: deps, PodReadyTimeout: o.podReadyTimeout},
		"databasebackup":          &databasebackup.Reconciler{Deps: deps},
		"scheduleddatabasebackup": &scheduleddatabasebackup.Reconciler{Deps: deps, Now: time.Now},
		"echo":                    &echo.Reconciler{Deps: deps, Image: echoImage()},
		"scheduledecho":           &scheduledecho.Reconciler{Deps: deps, Image: echoImage()},
		"voteconfig":              &voteconfig.Reconciler{Deps: deps},
	}
}

// setupControllers registers the enabled controllers, in the order of controllerNames.
func setupControllers(mgr ctrl.Manager, deps operator.Deps, o options, enabled []string) error {
	reconcilers := newReconcilers(deps, o)
	for _, name := range controllerNames {
		if !slices.Contains(enabled, name) {
			continue
		}
		if err := reconcilers[name].SetupWithManager(mgr); err != nil {
			return fmt.Errorf("setting up the %s controller: %w", name, err)
		}
	}
	return nil
}

// setupMonitoringObjects adds the Installer of the operator's ServiceMonitor and PrometheusRule
// when --monitoring-objects is set. It reads and writes them with a client of its own, without
// a cache (two objects in one namespace, looked at twice a minute).
func setupMonitoringObjects(mgr ctrl.Manager, rec recorder.EventRecorder, o options) error {
	if !o.monitoringObjects {
		return nil
	}
	namespace := strings.TrimSpace(os.Getenv(podNamespaceEnv))
	if namespace == "" {
		return fmt.Errorf("--monitoring-objects needs %s, the manager's namespace (the downward API's metadata.namespace)", podNamespaceEnv)
	}
	direct, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return fmt.Errorf("creating the client of the monitoring objects: %w", err)
	}
	return mgr.Add(&monitoringobjects.Installer{Client: direct, Mapper: mgr.GetRESTMapper(),
		Recorder: rec, Namespace: namespace, Deployment: o.deploymentName})
}

// echoImage is the image of the Echo Jobs: ECHO_IMAGE, or busybox when it is not set.
func echoImage() string {
	if image := strings.TrimSpace(os.Getenv(echoImageEnv)); image != "" {
		return image
	}
	return defaultEchoImage
}

func managerOptions(o options, kinds *runtime.Scheme) ctrl.Options {
	metrics := metricsserver.Options{BindAddress: o.metricsAddr, SecureServing: o.metricsSecure,
		TLSOpts: metricsTLSOptions(o.enableHTTP2)}
	if o.metricsSecure {
		// Only clients whose token passes a TokenReview and a SubjectAccessReview for
		// GET /metrics may read them.
		metrics.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	return ctrl.Options{
		Scheme:                        kinds,
		Metrics:                       metrics,
		HealthProbeBindAddress:        o.probeAddr,
		PprofBindAddress:              o.pprofAddr,
		LeaderElection:                o.leaderElect,
		LeaderElectionID:              o.leaderElectionID,
		LeaderElectionNamespace:       o.leaderElectionNamespace,
		LeaderElectionReleaseOnCancel: o.releaseOnCancel,
		LeaseDuration:                 &o.leaseDuration,
		RenewDeadline:                 &o.renewDeadline,
		RetryPeriod:                   &o.retryPeriod,
		Cache:                         cachecfg.Options(watchNamespaces()),
		// A replica that does not lead still starts its controllers' watches, so that its cache
		// is full when it takes over: the new leader reconciles at once instead of listing
		// everything first. It reconciles nothing until it leads.
		Controller: config.Controller{EnableWarmup: ptr.To(true)},
	}
}

// inClusterNamespaceFile holds the pod's namespace, the Lease's default one.
const inClusterNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// withLeaderLock gives the manager the watched Lease lock (controllers/leaderlock: a follower
// takes over a released or expired Lease at once instead of at its next poll) when it elects a
// leader, and returns what stops the lock's events.
// withoutCompression turns off gzip between the manager and the API server, as
// kube-controller-manager and kube-scheduler have it (kubernetes#80919): in a cluster,
// compressing every list and every watch-list stream costs the API server CPU and the manager a
// decompressor per watch, and saves nothing a cluster network would notice. client-go gives a
// config without TLS (a plain-HTTP server such as "kubectl proxy") Go's shared default transport,
// which ignores DisableCompression; setting the proxy function (the default one) makes it build
// its own.
func withoutCompression(cfg *rest.Config) error {
	cfg.DisableCompression = true
	tlsConfig, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return fmt.Errorf("reading the kubeconfig's TLS settings: %w", err)
	}
	if tlsConfig == nil && cfg.Proxy == nil && cfg.Dial == nil {
		cfg.Proxy = http.ProxyFromEnvironment
	}
	return nil
}

func withLeaderLock(cfg *rest.Config, o options, opts *ctrl.Options) (func(), error) {
	if !o.leaderElect {
		return func() {}, nil
	}
	namespace := o.leaderElectionNamespace
	if namespace == "" {
		data, err := os.ReadFile(inClusterNamespaceFile)
		if err != nil {
			return nil, fmt.Errorf("the Lease's namespace: set --leader-election-namespace outside a cluster (%w)", err)
		}
		namespace = strings.TrimSpace(string(data))
	}
	lock, stop, err := leaderlock.New(cfg, leaderlock.Options{Namespace: namespace, Name: o.leaderElectionID,
		LeaseDuration: o.leaseDuration, RenewDeadline: o.renewDeadline})
	if err != nil {
		return nil, fmt.Errorf("creating the leader election lock: %w", err)
	}
	opts.LeaderElectionResourceLockInterface = lock
	return stop, nil
}

// metricsTLSOptions are the metrics endpoint's TLS settings, set explicitly rather than left to
// Go's defaults: TLS 1.2 at least, and HTTP/1.1 only unless enableHTTP2 (as kubebuilder's
// scaffold does, against the HTTP/2 Rapid Reset and Stream Cancellation attacks).
func metricsTLSOptions(enableHTTP2 bool) []func(*tls.Config) {
	opts := []func(*tls.Config){func(c *tls.Config) { c.MinVersion = tls.VersionTLS12 }}
	if !enableHTTP2 {
		opts = append(opts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}
	return opts
}

// watchNamespaces parses WATCH_NAMESPACE; nil means every namespace.
func watchNamespaces() []string {
	var namespaces []string
	for ns := range strings.SplitSeq(os.Getenv(watchNamespaceEnv), ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			namespaces = append(namespaces, ns)
		}
	}
	return namespaces
}

// withSnapshotCache adds the VolumeSnapshots to the cache settings when the API server serves
// snapshot.storage.k8s.io/v1; without it, DatabaseBackups fail and say what to install.
func withSnapshotCache(cfg *rest.Config, opts cache.Options) (cache.Options, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return opts, fmt.Errorf("creating the discovery client: %w", err)
	}
	resources, err := dc.ServerResourcesForGroupVersion(snapshotv1.SchemeGroupVersion.String())
	if apierrors.IsNotFound(err) {
		return opts, nil
	}
	if err != nil {
		return opts, fmt.Errorf("looking up the VolumeSnapshot API: %w", err)
	}
	for _, r := range resources.APIResources {
		if r.Kind == "VolumeSnapshot" {
			return cachecfg.WithVolumeSnapshots(opts), nil
		}
	}
	return opts, nil
}
