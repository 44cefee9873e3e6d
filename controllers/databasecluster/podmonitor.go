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

package databasecluster

import (
	"context"
	"fmt"
	"sync"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
)

// DefaultMonitoringRecheck is how often a cluster whose spec.monitoring waits for the PodMonitor
// CRD asks the API server again: the PodMonitor is created at most this long after the Prometheus
// Operator is installed. There is no watch to tell sooner: a watch on a kind the API server does
// not serve cannot be started.
const DefaultMonitoringRecheck = time.Minute

// monitoringRecheck is the Reconciler's MonitoringRecheck, or DefaultMonitoringRecheck.
func (r *Reconciler) monitoringRecheck() time.Duration {
	if r.MonitoringRecheck <= 0 {
		return DefaultMonitoringRecheck
	}
	return r.MonitoringRecheck
}

// podMonitorGroupKind is the Prometheus Operator's PodMonitor.
var podMonitorGroupKind = schema.GroupKind{Group: monitoringv1.SchemeGroupVersion.Group, Kind: monitoringv1.PodMonitorsKind}

// podMonitorSpec is the PodMonitor's write path: specs.PodMonitorInSync decides and
// specs.MergePodMonitor writes the selector and the endpoints (an endpoint added by hand is
// removed, as it would scrape what the spec does not ask for).
var podMonitorSpec = child.Spec[*monitoringv1.PodMonitor]{
	InSync: specs.PodMonitorInSync,
	Merge:  specs.MergePodMonitor,
}

// podMonitorState is what a reconcile found of the PodMonitor.
type podMonitorState int

const (
	// podMonitorNotReached: the phase did not run (paused, or an earlier phase failed); the
	// MonitoringReady condition is kept as it was.
	podMonitorNotReached podMonitorState = iota
	// podMonitorReady: the PodMonitor is in place.
	podMonitorReady
	// podMonitorCRDMissing: the API server does not serve PodMonitors.
	podMonitorCRDMissing
	// podMonitorFailed: the PodMonitor could not be written; the observation's err says why.
	podMonitorFailed
)

// podMonitorWatch starts the controller's watch on PodMonitors the first time the API server is
// found to serve them, at setup or in a later reconcile. controller-runtime fails the manager's
// start when a watched kind is not served, so the watch cannot be set up unconditionally.
type podMonitorWatch struct {
	mu      sync.Mutex
	mapper  meta.RESTMapper
	start   func() error
	started bool
}

// served reports whether the API server serves PodMonitors, starting the watch on them the first
// time it does. Each call while they are not served costs one discovery request
// (GET /apis/monitoring.coreos.com/v1), which is why it is made only for clusters that ask for
// monitoring, at most once a MonitoringRecheck per cluster.
func (w *podMonitorWatch) served() (bool, error) {
	if w == nil {
		return false, nil // no controller set up (a Reconciler driven by hand): nothing to watch with
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.started {
		return true, nil
	}
	_, err := w.mapper.RESTMapping(podMonitorGroupKind, monitoringv1.SchemeGroupVersion.Version)
	if meta.IsNoMatchError(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("looking up the PodMonitor API: %w", err)
	}
	if err := w.start(); err != nil {
		return false, fmt.Errorf("watching PodMonitors: %w", err)
	}
	w.started = true
	return true, nil
}

// watching reports whether the watch on PodMonitors runs, without asking the API server.
func (w *podMonitorWatch) watching() bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.started
}

// reconcilePodMonitor keeps the PodMonitor of spec.monitoring in place when the API server serves
// PodMonitors, and deletes the one dc controls when spec.monitoring is removed. A PodMonitor of
// that name held by anything else is left as it is (a ConflictError: Degraded ChildConflict).
func (r *Reconciler) reconcilePodMonitor(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, noted *changes) (podMonitorState, error) {
	if dc.Spec.Monitoring == nil {
		// Only a cluster that asked for monitoring since the operator started can have a
		// PodMonitor to delete without the watch running: the discovery request is not made for
		// every cluster on every reconcile.
		if !r.podMonitors.watching() {
			return podMonitorNotReached, nil
		}
		return podMonitorNotReached, r.deletePodMonitor(ctx, dc, noted)
	}
	served, err := r.podMonitors.served()
	switch {
	case err != nil:
		return podMonitorFailed, err
	case !served:
		return podMonitorCRDMissing, nil
	}
	if err := ensureChild(ctx, r, "PodMonitor", specs.BuildPodMonitor(dc), &monitoringv1.PodMonitor{}, podMonitorSpec, noted); err != nil {
		return podMonitorFailed, err
	}
	return podMonitorReady, nil
}

// deletePodMonitor deletes the PodMonitor of dc if it exists and dc controls it. A missing kind
// (NoMatch) means the CRD was removed since, and the PodMonitors with it.
func (r *Reconciler) deletePodMonitor(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, noted *changes) error {
	err := r.deleteChild(ctx, dc, "PodMonitor", dc.PodMonitorName(), &monitoringv1.PodMonitor{}, noted)
	if meta.IsNoMatchError(err) {
		return nil
	}
	return err
}

// withMonitoringRecheck makes the reconcile come back within every while the PodMonitor waits
// for its CRD.
func withMonitoringRecheck(obs *observation, every time.Duration) {
	if obs.podMonitor != podMonitorCRDMissing {
		return
	}
	obs.monitoringRecheck = every
	if obs.recheckAfter == 0 || obs.recheckAfter > every {
		obs.recheckAfter = every
	}
}
