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

package operator

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"time"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/seed1b407122/database-operator/api/scheme"
	"github.com/seed1b407122/database-operator/controllers/cachecfg"
	"github.com/seed1b407122/database-operator/controllers/leaderlock"
)

// Settings are what the manager's command line decides; NewManager adds the operator's policy.
type Settings struct {
	// MetricsAddr is the metrics endpoint's address; "0" disables it.
	MetricsAddr string
	// MetricsSecure serves metrics over HTTPS to authenticated, authorized clients only.
	MetricsSecure bool
	// EnableHTTP2 lets the metrics endpoint speak HTTP/2 (see metricsTLSOptions).
	EnableHTTP2 bool
	// ProbeAddr serves /healthz and /readyz; PprofAddr Go's /debug/pprof ("": off).
	ProbeAddr, PprofAddr string
	// QPS and Burst limit the manager's client.
	QPS   float32
	Burst int
	// Namespaces are the namespaces watched; nil watches all (see WatchNamespaces).
	Namespaces []string
	// LeaderElect elects a leader with the Lease LeaderElectionID in LeaderElectionNamespace
	// (the pod's own namespace when empty, see leaseNamespace).
	LeaderElect                               bool
	LeaderElectionID, LeaderElectionNamespace string
	// LeaseDuration, RenewDeadline and RetryPeriod time the election.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// ReleaseOnCancel gives up the Lease on a graceful stop.
	ReleaseOnCancel bool
}

// NewManager returns the operator's manager for the cluster of cfg: its client without gzip
// (withoutCompression), the operator's scheme, the options of s (managerOptions), the
// VolumeSnapshots in the cache when the API server serves them (withSnapshotCache) and, when it
// elects a leader, the watched Lease lock (withLeaderLock). The returned function stops the lock's
// events; call it once the manager has stopped. cfg is changed in place.
func NewManager(cfg *rest.Config, s Settings) (ctrl.Manager, func(), error) {
	cfg.QPS, cfg.Burst = s.QPS, s.Burst
	if err := withoutCompression(cfg); err != nil {
		return nil, nil, err
	}
	kinds, err := scheme.New()
	if err != nil {
		return nil, nil, err
	}
	opts := managerOptions(s)
	opts.Scheme = kinds
	if opts.Cache, err = withSnapshotCache(cfg, opts.Cache); err != nil {
		return nil, nil, err
	}
	stopLockEvents, err := withLeaderLock(cfg, &opts, inClusterNamespaceFile)
	if err != nil {
		return nil, nil, err
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		stopLockEvents()
		return nil, nil, fmt.Errorf("creating the manager: %w", err)
	}
	return mgr, stopLockEvents, nil
}

// managerOptions are the manager's options for s, without a scheme: secure metrics, the
// operator's cache (cachecfg) over s.Namespaces, and controllers that warm up before they lead.
func managerOptions(s Settings) ctrl.Options {
	metrics := metricsserver.Options{BindAddress: s.MetricsAddr, SecureServing: s.MetricsSecure,
		TLSOpts: metricsTLSOptions(s.EnableHTTP2)}
	if s.MetricsSecure {
		// Only clients whose token passes a TokenReview and a SubjectAccessReview for
		// GET /metrics may read them.
		metrics.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	return ctrl.Options{
		Metrics:                       metrics,
		HealthProbeBindAddress:        s.ProbeAddr,
		PprofBindAddress:              s.PprofAddr,
		LeaderElection:                s.LeaderElect,
		LeaderElectionID:              s.LeaderElectionID,
		LeaderElectionNamespace:       s.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: s.ReleaseOnCancel,
		LeaseDuration:                 ptr.To(s.LeaseDuration),
		RenewDeadline:                 ptr.To(s.RenewDeadline),
		RetryPeriod:                   ptr.To(s.RetryPeriod),
		Cache:                         cachecfg.Options(s.Namespaces, cachecfg.NewShared()),
		// A replica that does not lead still starts its controllers' watches, so that its cache
		// is full when it takes over: the new leader reconciles at once instead of listing
		// everything first. It reconciles nothing until it leads.
		Controller:     config.Controller{EnableWarmup: ptr.To(true)},
		MapperProvider: newRESTMapper,
	}
}

// defaultGCPercent is the Go collector's target when GOGC is not set: a collection starts once
// the heap has grown by a fifth of what was live after the last one, not by all of it (Go's
// default, 100). An operator's heap is mostly its caches, and what decides its pod's memory is
// the peak while many objects change at once: a lower target lowers that peak without slowing
// convergence, and the extra collections cost CPU only while objects change (docs/benchmarks.md
// has the figures: 25 until 2026-11-30, when 20 took 2 MiB off the RSS per 1,000 clusters for a
// quarter more collections, unseen in the CPU at 1,000 clusters, more at 3,000). GOGC in the
// environment wins.
const defaultGCPercent = 20

// SetGCPercent sets the collector's target to defaultGCPercent unless lookup (os.LookupEnv)
// finds GOGC set, and returns the target in effect: -1 when GOGC turns the collector off.
func SetGCPercent(lookup func(string) (string, bool)) int {
	if _, set := lookup("GOGC"); set {
		previous := debug.SetGCPercent(100)
		debug.SetGCPercent(previous)
		return previous
	}
	debug.SetGCPercent(defaultGCPercent)
	return defaultGCPercent
}

// DurationFromEnv returns the duration the environment variable name sets, when the flag of the
// same setting was not given on the command line (flagGiven false) and lookup (os.LookupEnv)
// finds it; otherwise flagValue. OLM sets a manager's environment from its Subscription
// (spec.config.env), never its arguments, so a setting a user of the catalog may change is read
// from both, the command line first. A value that is not a positive duration is an error that
// names the variable; the caller keeps flagValue then, so a typo never stops the manager.
func DurationFromEnv(lookup func(string) (string, bool), name string, flagValue time.Duration, flagGiven bool) (time.Duration, error) {
	value, set := lookup(name)
	trimmed := strings.TrimSpace(value)
	if flagGiven || !set || trimmed == "" {
		return flagValue, nil
	}
	d, err := time.ParseDuration(trimmed)
	if err != nil || d <= 0 {
		return flagValue, fmt.Errorf("environment variable %s=%q is not a positive duration such as 30s or 2m; using %s", name, value, flagValue)
	}
	return d, nil
}

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

// WatchNamespaces parses value, the comma-separated namespaces of WATCH_NAMESPACE (OLM sets it to
// the OperatorGroup's target namespaces); nil means every namespace.
func WatchNamespaces(value string) []string {
	var namespaces []string
	for ns := range strings.SplitSeq(value, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			namespaces = append(namespaces, ns)
		}
	}
	return namespaces
}

// inClusterNamespaceFile holds the pod's namespace, the Lease's default one.
const inClusterNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// withLeaderLock gives the manager the watched Lease lock (controllers/leaderlock: a follower
// takes over a released or expired Lease at once instead of at its next poll) when opts elect a
// leader, and returns what stops the lock's events. The Lease is in opts' namespace, else in the
// one namespaceFile (the pod's service account's) names.
func withLeaderLock(cfg *rest.Config, opts *ctrl.Options, namespaceFile string) (func(), error) {
	if !opts.LeaderElection {
		return func() {}, nil
	}
	namespace, err := leaseNamespace(opts.LeaderElectionNamespace, namespaceFile)
	if err != nil {
		return nil, err
	}
	lock, stop, err := leaderlock.New(cfg, leaderlock.Options{Namespace: namespace, Name: opts.LeaderElectionID,
		LeaseDuration: ptr.Deref(opts.LeaseDuration, 0), RenewDeadline: ptr.Deref(opts.RenewDeadline, 0)})
	if err != nil {
		return nil, fmt.Errorf("creating the leader election lock: %w", err)
	}
	opts.LeaderElectionResourceLockInterface = lock
	return stop, nil
}

// leaseNamespace is the namespace of the leader election Lease: namespace when set, else the
// pod's own, read from namespaceFile; outside a cluster there is none and it says so.
func leaseNamespace(namespace, namespaceFile string) (string, error) {
	if namespace != "" {
		return namespace, nil
	}
	data, err := os.ReadFile(namespaceFile)
	if err != nil {
		return "", fmt.Errorf("the Lease's namespace: set --leader-election-namespace outside a cluster (%w)", err)
	}
	return strings.TrimSpace(string(data)), nil
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
