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
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/seed1b407122/database-operator/controllers/agentcmd"
	"github.com/seed1b407122/database-operator/controllers/databasebackup"
	"github.com/seed1b407122/database-operator/controllers/databasecluster"
	"github.com/seed1b407122/database-operator/controllers/echo"
	"github.com/seed1b407122/database-operator/controllers/monitoringobjects"
	"github.com/seed1b407122/database-operator/controllers/operator"
	"github.com/seed1b407122/database-operator/controllers/scheduleddatabasebackup"
	"github.com/seed1b407122/database-operator/controllers/storageagent"
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

// storageAgentImageEnv names the image of the storage agent sidecar (spec.storage.autoGrow):
// the operator's own image, named as the OLM convention for images a disconnected mirror must
// copy (RELATED_IMAGE_*). Unset, clusters with autoGrow report that usage cannot be measured.
const storageAgentImageEnv = "RELATED_IMAGE_STORAGE_AGENT"

// measureIntervalEnv sets --storage-measure-interval where the command line does not: under OLM
// a Subscription's spec.config.env is the only way to change a manager's setting.
const measureIntervalEnv = "STORAGE_MEASURE_INTERVAL"

// podNamespaceEnv names the manager's own namespace (set from the downward API), where
// --monitoring-objects creates the ServiceMonitor and PrometheusRule.
const podNamespaceEnv = "POD_NAMESPACE"

// controllerNames are the controllers --controllers can select.
var controllerNames = []string{"databasecluster", "databasebackup", "scheduleddatabasebackup", "echo", "scheduledecho", "voteconfig"}

// options are the command-line settings of the manager: the manager's own (operator.Settings)
// and the controllers'.
type options struct {
	manager                 operator.Settings
	maxConcurrentReconciles int
	podReadyTimeout         time.Duration
	measureInterval         time.Duration
	controllers             string
	monitoringObjects       bool
	deploymentName          string
	// envErrors are the settings of the environment that were not taken, logged once the
	// logger is set.
	envErrors []error
}

// parseFlags reads the command line and WATCH_NAMESPACE.
func parseFlags() (options, zap.Options) {
	var o options
	flag.StringVar(&o.manager.MetricsAddr, "metrics-bind-address", ":8443",
		"Address of the metrics endpoint (HTTPS unless --metrics-secure=false); 0 disables it.")
	flag.BoolVar(&o.manager.MetricsSecure, "metrics-secure", true,
		"Serve metrics over HTTPS and require an authenticated, authorized client.")
	flag.BoolVar(&o.manager.EnableHTTP2, "enable-http2", false,
		"Serve the metrics endpoint over HTTP/2 too. Off by default: HTTP/2 Rapid Reset and Stream "+
			"Cancellation (CVE-2023-44487, CVE-2023-39325) let a client exhaust the server.")
	flag.StringVar(&o.manager.ProbeAddr, "health-probe-bind-address", ":8081", "Address of /healthz and /readyz.")
	flag.StringVar(&o.manager.PprofAddr, "pprof-bind-address", "",
		"Address of Go's /debug/pprof endpoints (heap and CPU profiles, unauthenticated: bind it to localhost); empty disables them. make bench reads the heap profile through it.")
	flag.BoolVar(&o.manager.LeaderElect, "leader-elect", false,
		"Elect a leader with a Lease so that only one of several replicas reconciles.")
	flag.StringVar(&o.manager.LeaderElectionID, "leader-election-id", "database-operator.seed1b407122.io",
		"Name of the leader election Lease.")
	flag.StringVar(&o.manager.LeaderElectionNamespace, "leader-election-namespace", "",
		"Namespace of the Lease (default: the pod's namespace in-cluster).")
	flag.DurationVar(&o.manager.LeaseDuration, "leader-election-lease-duration", 15*time.Second,
		"How long non-leaders wait before taking over a Lease that was not renewed.")
	flag.DurationVar(&o.manager.RenewDeadline, "leader-election-renew-deadline", 10*time.Second,
		"How long the leader retries renewing before giving up leadership.")
	flag.DurationVar(&o.manager.RetryPeriod, "leader-election-retry-period", 2*time.Second,
		"How often candidates try to acquire or renew the Lease.")
	flag.BoolVar(&o.manager.ReleaseOnCancel, "leader-election-release-on-cancel", true,
		"Release the Lease on a graceful stop, so that another replica takes over at once.")
	flag.DurationVar(&o.podReadyTimeout, "pod-ready-timeout", databasecluster.DefaultPodReadyTimeout,
		"How long a database pod may stay not Ready before its cluster is reported Degraded.")
	flag.DurationVar(&o.measureInterval, "storage-measure-interval", databasecluster.DefaultMeasureInterval,
		"How often each member of a cluster with spec.storage.autoGrow is measured (0: the default; "+
			measureIntervalEnv+" sets it when this flag is not given).")
	// Many workers by default: with many resources changing at once, a few workers make the work
	// queue, not the API server, what limits convergence (docs/benchmarks.md).
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
	qps := flag.Float64("kube-api-qps", 50, "Queries per second the client may send to the API server.")
	flag.IntVar(&o.manager.Burst, "kube-api-burst", 100, "Burst of queries the client may send to the API server.")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	o.manager.QPS = float32(*qps)
	given := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	o.measureInterval, err = operator.DurationFromEnv(os.LookupEnv, measureIntervalEnv, o.measureInterval,
		given["storage-measure-interval"])
	if err != nil {
		o.envErrors = append(o.envErrors, err)
	}
	o.manager.Namespaces = operator.WatchNamespaces(os.Getenv(watchNamespaceEnv))
	return o, zapOpts
}

func main() {
	// The storage agent (the sidecar of spec.storage.autoGrow) is a mode of this binary: the
	// pods run the operator's own image, and there is no second image to build and mirror.
	if len(os.Args) > 1 && os.Args[1] == storageagent.Command {
		os.Exit(agentcmd.Main(os.Args[2:], os.Stderr))
	}
	o, zapOpts := parseFlags()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	for _, err := range o.envErrors {
		ctrl.Log.Error(err, "Setting from the environment not taken")
	}
	ctrl.Log.Info("Set the garbage collector's target", "gcPercent", operator.SetGCPercent(os.LookupEnv))
	if err := run(o); err != nil {
		ctrl.Log.Error(err, "Manager stopped with an error")
		os.Exit(1)
	}
}

// run builds the manager, registers the enabled controllers, the monitoring objects and the
// probes, and runs it until a signal stops it.
func run(o options) error {
	enabled, err := selectControllers(o.controllers)
	if err != nil {
		return err
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading the kubeconfig: %w", err)
	}
	mgr, stopLockEvents, err := operator.NewManager(cfg, o.manager)
	if err != nil {
		return err
	}
	defer stopLockEvents()
	deps, err := operator.NewReconcilerBase(mgr, o.maxConcurrentReconciles)
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
	ctrl.Log.Info("Starting the manager", "controllers", enabled, "namespaces", o.manager.Namespaces)
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

// newSetups returns how each controller registers itself and its watches with a manager, by the
// name --controllers uses. The controllers of Echos and ScheduledEchos share one Reconciler.
func newSetups(deps operator.ReconcilerBase, o options) map[string]func(ctrl.Manager) error {
	echoes := &echo.Reconciler{ReconcilerBase: deps, Image: echoImage()}
	return map[string]func(ctrl.Manager) error{
		"databasecluster": (&databasecluster.Reconciler{ReconcilerBase: deps, PodReadyTimeout: o.podReadyTimeout, Namespaces: o.manager.Namespaces,
			MeasureInterval: o.measureInterval, Members: &databasecluster.AgentMembers{APIReader: deps.APIReader},
			AgentImage: strings.TrimSpace(os.Getenv(storageAgentImageEnv))}).SetupWithManager,
		"databasebackup":          (&databasebackup.Reconciler{ReconcilerBase: deps}).SetupWithManager,
		"scheduleddatabasebackup": (&scheduleddatabasebackup.Reconciler{ReconcilerBase: deps, Now: time.Now}).SetupWithManager,
		"echo":                    echoes.SetupEchoWithManager,
		"scheduledecho":           echoes.SetupScheduledEchoWithManager,
		"voteconfig":              (&voteconfig.Reconciler{ReconcilerBase: deps}).SetupWithManager,
	}
}

// setupControllers registers the enabled controllers, in the order of controllerNames.
func setupControllers(mgr ctrl.Manager, deps operator.ReconcilerBase, o options, enabled []string) error {
	setups := newSetups(deps, o)
	for _, name := range controllerNames {
		if !slices.Contains(enabled, name) {
			continue
		}
		if err := setups[name](mgr); err != nil {
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
