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

package monitoringobjects

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/seed1b407122/database-operator/controllers/internal/child"
)

// DefaultRecheck is how often the Installer looks again when Recheck is not set.
const DefaultRecheck = 30 * time.Second

// EventConflict is the reason of the Warning event on the Deployment when a name the Installer
// needs is held by an object the Deployment does not control: that object is left as it is.
const EventConflict = "MonitoringObjectConflict"

// kinds are the Prometheus Operator kinds the Installer writes; both must be served.
var kinds = []schema.GroupKind{
	{Group: monitoringv1.SchemeGroupVersion.Group, Kind: monitoringv1.ServiceMonitorsKind},
	{Group: monitoringv1.SchemeGroupVersion.Group, Kind: monitoringv1.PrometheusRuleKind},
}

// Installer is a manager runnable (of the leader only) that keeps the ServiceMonitor and the
// PrometheusRule of config/prometheus in Namespace, controlled by the Deployment there. It reads
// and writes without a cache: two objects in one namespace, looked at once per Recheck, are not
// worth a cluster-wide watch (and the RBAC it would need).
type Installer struct {
	// Client reads and writes the API server directly (not the manager's cached client).
	Client client.Client
	// Mapper says whether the API server serves the kinds; asked once per Recheck.
	Mapper   meta.RESTMapper
	Recorder recorder.EventRecorder
	// Namespace and Deployment name the manager's Deployment.
	Namespace, Deployment string
	// Recheck is how often the objects are looked at again (DefaultRecheck when 0).
	Recheck time.Duration
}

// NeedLeaderElection says that only the leader writes.
func (i *Installer) NeedLeaderElection() bool { return true }

// Start keeps the objects in place until ctx ends. It never fails the manager: what it cannot do
// is logged (once per change) and, for a name held by someone else, told by an event.
func (i *Installer) Start(ctx context.Context) error {
	log := logf.FromContext(ctx).WithName("monitoring-objects").WithValues("namespace", i.Namespace)
	recheck := i.Recheck
	if recheck <= 0 {
		recheck = DefaultRecheck
	}
	ticker := time.NewTicker(recheck)
	defer ticker.Stop()
	last := ""
	for {
		owner, err := i.ensure(ctx)
		last = i.report(ctx, log, owner, err, last)
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// report logs the outcome of ensure when it differs from the last one, and records the conflict
// event on owner (the Deployment ensure read) then. It returns what it reported.
func (i *Installer) report(ctx context.Context, log logr.Logger, owner *appsv1.Deployment, err error, last string) string {
	said := "in place"
	if err != nil {
		said = err.Error()
	}
	if said == last || ctx.Err() != nil {
		return last
	}
	switch {
	case err == nil:
		log.Info("The ServiceMonitor and PrometheusRule of the operator are in place")
	case errors.Is(err, errNotServed):
		log.Info("Not creating the operator's ServiceMonitor and PrometheusRule: " + said)
	default:
		log.Error(err, "Keeping the operator's ServiceMonitor and PrometheusRule")
	}
	if message, ok := child.Conflict(err); ok && owner != nil {
		i.Recorder.Eventf(owner, nil, corev1.EventTypeWarning, EventConflict, "Monitoring", "%s", message)
	}
	return said
}

// errNotServed: the API server does not serve the Prometheus Operator's kinds.
var errNotServed = errors.New("the API server does not serve monitoring.coreos.com/v1 ServiceMonitor and PrometheusRule (the Prometheus Operator is not installed); looking again periodically")

// ensure creates or corrects both objects once, when their kinds are served, and returns the
// Deployment it read as their owner (nil when it did not get that far).
func (i *Installer) ensure(ctx context.Context) (*appsv1.Deployment, error) {
	for _, gk := range kinds {
		_, err := i.Mapper.RESTMapping(gk, monitoringv1.SchemeGroupVersion.Version)
		if meta.IsNoMatchError(err) {
			return nil, errNotServed
		}
		if err != nil {
			return nil, fmt.Errorf("looking up the %s API: %w", gk.Kind, err)
		}
	}
	owner := &appsv1.Deployment{}
	if err := i.Client.Get(ctx, client.ObjectKey{Namespace: i.Namespace, Name: i.Deployment}, owner); err != nil {
		return nil, fmt.Errorf("reading the manager's Deployment %s/%s, the owner of the monitoring objects: %w", i.Namespace, i.Deployment, err)
	}
	sm, err := BuildServiceMonitor(owner)
	if err != nil {
		return owner, err
	}
	rule, err := BuildPrometheusRule(owner)
	if err != nil {
		return owner, err
	}
	_, _, smErr := child.Ensure(ctx, i.Client, i.Client, sm, &monitoringv1.ServiceMonitor{}, serviceMonitorSpec)
	_, _, ruleErr := child.Ensure(ctx, i.Client, i.Client, rule, &monitoringv1.PrometheusRule{}, prometheusRuleSpec)
	return owner, errors.Join(smErr, ruleErr)
}
