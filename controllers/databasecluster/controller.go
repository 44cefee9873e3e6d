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

// Package databasecluster reconciles DatabaseClusters: a StatefulSet with persistent storage, a
// headless and a client Service and a PodDisruptionBudget per cluster.
package databasecluster

import (
	"context"
	"errors"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/roles"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
	"github.com/seed1b407122/database-operator/controllers/internal/opmetrics"
	"github.com/seed1b407122/database-operator/controllers/internal/skeleton"
	"github.com/seed1b407122/database-operator/controllers/operator"
)

// Reasons of the events a DatabaseCluster gets.
const (
	EventCreated     = "Created"
	EventScaled      = "Scaled"
	EventUpdating    = "Updating"
	EventRepaired    = "Repaired"
	EventRemoved     = "Removed"
	EventExpanding   = "Expanding"
	EventReplacing   = "Replacing"
	EventResized     = "Resized"
	EventAvailable   = "Available"
	EventUnavailable = "Unavailable"
	EventPaused      = "Paused"
	EventResumed     = "Resumed"
	EventDeleting    = "Deleting"
)

// kind names DatabaseClusters in owner references and in the operator's metrics.
const kind = "DatabaseCluster"

// Reconciler keeps the children of DatabaseClusters in place and reports their state. Its
// APIReader is used only when the cache cannot see a child.
type Reconciler struct {
	operator.ReconcilerBase
	// PodReadyTimeout is how long a pod may stay not Ready before the cluster is Degraded
	// (default DefaultPodReadyTimeout).
	PodReadyTimeout time.Duration
	// Clock tells the time; nil means the real clock. Tests set a fake one.
	Clock clock.PassiveClock
	// MonitoringRecheck is how often a cluster with spec.monitoring looks again for the PodMonitor
	// API while the API server does not serve it (default DefaultMonitoringRecheck).
	MonitoringRecheck time.Duration
	// Namespaces are the namespaces the manager watches (nil: all); the watch of the user's
	// ConfigMaps (spec.config.configMapRef) covers the same.
	Namespaces []string
	// AgentImage is the image of the storage agent sidecar of spec.storage.autoGrow: the
	// operator's own (RELATED_IMAGE_STORAGE_AGENT). Empty, no agent is added and the
	// StorageAutoGrow condition says that usage cannot be measured.
	AgentImage string
	// AgentAddress is where a member's storage agent is read (host:port); nil means its pod IP
	// and StorageAgentPort. Tests on simulated nodes, whose pods run nothing, point it at an
	// agent of their own.
	AgentAddress func(pod *corev1.Pod) string
	// MeasureInterval is how often a member's usage is measured (default DefaultMeasureInterval).
	MeasureInterval time.Duration
	// Members reads the members' roles through their agents, for clusters with an engine; nil
	// reads none (the roles phase does not run).
	Members MemberReader
	// ObserveInterval is how often the members' roles are read (default
	// DefaultObserveInterval).
	ObserveInterval time.Duration
	// roles remembers the last read of each cluster's members (reconcileRoles), so that a
	// cluster's agents are asked at most once per interval, whatever the number of reconciles.
	roles clusterMemo[rolesMemoEntry]
	// usage remembers the last measurement of each member, by pod name (reconcileAutoGrow): a
	// member is measured again only once it is measureInterval old, so that reconciles in
	// between write no status for a usage that moved a few bytes, and wait for no agent that
	// does not answer (a NetworkPolicy that drops the packets costs agentTimeout per read).
	usage clusterMemo[map[string]memoEntry]
	// replaced remembers the stuck pods phase 6 deleted (reconcileRollout).
	replaced replacedPods
	// replacedLost remembers the pods of lost members phase 6 deleted (reconcileLostMembers).
	replacedLost replacedPods
	// podMonitors starts the watch on PodMonitors once the API server serves them (set up by
	// SetupWithManager).
	podMonitors *podMonitorWatch
}

// The skeleton finds a Kind's finalizer path and its own series by type assertion: these make a
// misspelt method a compile error rather than a finalizer silently never run.
var (
	_ skeleton.Finalizing[*databasev1alpha1.DatabaseCluster] = (*Reconciler)(nil)
	_ skeleton.MetricsForgetter                              = (*Reconciler)(nil)
)

func (r *Reconciler) clock() clock.PassiveClock {
	if r.Clock == nil {
		return clock.RealClock{}
	}
	return r.Clock
}

// +kubebuilder:rbac:groups=database.seed1b407122.io,resources=databaseclusters,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=database.seed1b407122.io,resources=databaseclusters/status,verbs=get;patch
// +kubebuilder:rbac:groups=database.seed1b407122.io,resources=databaseclusters/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=apps,resources=controllerrevisions,verbs=get
// +kubebuilder:rbac:groups=core,resources=services,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=core,resources=persistentvolumeclaims,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;watch;patch;delete
// +kubebuilder:rbac:groups=core,resources=persistentvolumes,verbs=get
// +kubebuilder:rbac:groups=core,resources=nodes,verbs=get;list
// +kubebuilder:rbac:groups=storage.k8s.io,resources=storageclasses,verbs=get
// +kubebuilder:rbac:groups=monitoring.coreos.com,resources=podmonitors,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=core,resources=events,verbs=list

// Reconcile brings the children of one DatabaseCluster to the state its spec asks for and writes
// the status it observed: get → deletion → finalizer → children → status (once, only if changed).
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return skeleton.Reconcile(ctx, r.Client, r.OwnWrites, req, &databasev1alpha1.DatabaseCluster{}, r)
}

// Phases runs the phases, looks at the pods, and sets the status of dc to what they observed. A
// pod that is not Ready yet is looked at again when it reaches the bound; its becoming Ready
// earlier triggers a reconcile through the pod watch.
func (r *Reconciler) Phases(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) (ctrl.Result, error) {
	obs := r.reconcileChildren(ctx, dc)
	r.observePods(ctx, dc, &obs)
	withMonitoringRecheck(&obs, r.monitoringRecheck())
	if dc.AutoGrows() {
		obs.recheckAfter = sooner(obs.recheckAfter, r.measureInterval())
	}
	if obs.roles.ran {
		obs.recheckAfter = sooner(obs.recheckAfter, r.observeInterval())
		if len(obs.roles.unknown) > 0 {
			obs.recheckAfter = sooner(obs.recheckAfter, unknownReread)
		}
	}
	if p := obs.roles.plan; p.deferred || p.decision.Progress.Switchover != nil || p.decision.Action.Kind == roles.ActionDeletePod ||
		obs.roles.membership.Action.Kind != roles.MembershipWait {
		obs.recheckAfter = sooner(obs.recheckAfter, switchoverRecheck)
	}
	withCertificateRecheck(&obs)
	if !statusDeferred(obs) {
		dc.Status = computeStatus(dc, obs)
	}
	opmetrics.RecordReplicas(dc.Namespace, dc.Name, dc.DesiredReplicas(), dc.Status.ReadyReplicas)
	opmetrics.RecordStorage(dc.Namespace, dc.Name, dc.Spec.Storage.Size, obs.claims)
	opmetrics.RecordCertificate(dc.Namespace, dc.Name, ptr.Deref(dc.Status.CertificateNotAfter, metav1.Time{}).Time)
	opmetrics.RecordRolloutStuck(dc.Namespace, dc.Name, obs.rollout.stuck != nil)
	opmetrics.RecordMembersLost(dc.Namespace, dc.Name, len(obs.lost.members))
	recordRoles(dc, obs.roles)
	recordAutoGrow(dc, obs.autoGrow)
	if IsRestoreRefused(obs.err) {
		// Not an error to back off from: Degraded says what to do, and the backup may become
		// Completed (or appear) at any time.
		return ctrl.Result{RequeueAfter: restoreRecheck}, nil
	}
	return ctrl.Result{RequeueAfter: obs.recheckAfter}, obs.err
}

// Finalizer guards the data, which garbage collection alone would not handle as the spec says
// (see Finalize).
func (r *Reconciler) Finalizer() string { return databasev1alpha1.Finalizer }

// ForgetMetrics removes the per-cluster series (replicas, storage, last backup) of a cluster
// that is gone or being deleted, and what the reconciler remembers of it (the last usage
// measured); the skeleton forgets its conditions.
func (r *Reconciler) ForgetMetrics(namespace, name string) {
	opmetrics.ForgetCluster(namespace, name)
	r.usage.forget(types.NamespacedName{Namespace: namespace, Name: name})
	r.roles.forget(types.NamespacedName{Namespace: namespace, Name: name})
	if f, ok := r.Members.(interface{ Forget(types.NamespacedName) }); ok {
		f.Forget(types.NamespacedName{Namespace: namespace, Name: name})
	}
}

// reconcileChildren runs the phases in order and returns what they observed. While the cluster
// is paused nothing is written: the StatefulSet and the claims are only read, to report on them.
//
// The order of the phases, agreed between the pod's inputs (spec.config, spec.credentials,
// spec.tls) and Auto Pilot, so that each knows what it may rely on:
//  1. the Services and the PodDisruptionBudget (built from the spec alone);
//  2. the restore of a new cluster's claims from a backup;
//  3. the pod's inputs: the ConfigMap, Secrets and certificates the pods mount, resolved into
//     the checksum the pod template carries; a missing input stops here, so no pod is rolled
//     for an input that is not there;
//  4. the claims: growth to spec.storage.size, then auto-grow (spec.storage.autoGrow) of at
//     most one claim past it, through the same patch; a failure of auto-grow is reported
//     (Degraded) but does not keep the later phases from running;
//  5. the StatefulSet, from the spec and the inputs' checksum (or, with spec.rollout.autoRollback
//     and a stuck rollout, from the revision before it: rollback.go);
//  6. Auto Pilot's actions on members (a stuck rollout's pod, a lost member), from what the pods
//     show after the StatefulSet is written: at most one member per pass, never a Ready one;
//  7. with an engine, the members' roles, read through their agents and published in the
//     pods' role labels (NAME-rw, NAME-ro) and the status; a read that fails is reported, and
//     does not keep the next phase from running;
//  8. the PodMonitor, last: it must never keep the database from running.
func (r *Reconciler) reconcileChildren(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) observation {
	if dc.Spec.Paused {
		return r.observe(ctx, dc, nil)
	}
	noted := &changes{} // what the phases did to the children, told as events at the end
	defer noted.record(r.Recorder, dc)
	// The StatefulSet waits for the Services: no pod (and no claim, no data) is made for a
	// cluster whose Services cannot be had, e.g. a name someone else holds.
	if err := r.reconcileSpecChildren(ctx, dc, noted); err != nil {
		return r.observe(ctx, dc, err)
	}
	if err := r.reconcileRestore(ctx, dc, noted); err != nil {
		return r.observe(ctx, dc, err)
	}
	inputs, err := r.reconcileInputs(ctx, dc, noted)
	if err != nil {
		return r.observe(ctx, dc, err)
	}
	claims, err := r.reconcileStorage(ctx, dc, noted)
	if err != nil {
		return r.observe(ctx, dc, err)
	}
	autoGrow, growErr := r.reconcileAutoGrow(ctx, dc, claims)
	sts, result, waits, err := r.reconcileStatefulSet(ctx, dc, claims, inputs.checksum, noted)
	if err != nil {
		return r.observe(ctx, dc, err)
	}
	rollout, err := r.reconcileRollout(ctx, dc, sts)
	if err != nil {
		return r.observe(ctx, dc, err)
	}
	lost, err := r.reconcileLostMembers(ctx, dc, sts, claims, rollout.replaced != nil)
	if err != nil {
		return r.observe(ctx, dc, err)
	}
	memberRoles, rolesErr := r.reconcileRoles(ctx, dc, sts, lost)
	// Last: a PodMonitor that cannot be written must not keep the database from running.
	podMonitor, err := r.reconcilePodMonitor(ctx, dc, noted)
	return observation{
		statefulSet: sts, claims: claims, scaleUpWaits: waits, podMonitor: podMonitor, err: errors.Join(growErr, rolesErr, err), tls: inputs.tls,
		rollout: rollout, lost: lost, autoGrow: autoGrow, roles: memberRoles, statefulSetCreated: result == child.Created && noted.restored == "",
	}
}

// observe reads the StatefulSet and the claims from the cache without changing them. err is
// the error that stopped the phases, if any: the status still tells how many replicas are
// ready, and Degraded says what failed.
func (r *Reconciler) observe(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, err error) observation {
	obs := observation{err: err}
	sts, getErr := r.cachedStatefulSet(ctx, dc)
	obs.statefulSet = sts
	claims, listErr := r.listClaims(ctx, dc)
	obs.claims = claims
	obs.err = errors.Join(obs.err, getErr, listErr)
	return obs
}

// SetupWithManager registers the controller and its watches. Updates of owned children only
// trigger a reconcile when they change something the operator reads: a spec edit (generation),
// a label change (the cache selects by label), the StatefulSet's replica counts, or a data
// claim's size. Their reconciles queue behind the clusters' own changes (skeleton.Behind): in a
// burst of new clusters, each one's first pass goes before the passes that follow the others'
// pods. PodMonitors are watched from the first reconcile that finds the API server serving them
// (podMonitorWatch): the manager must start without the Prometheus Operator.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := addIndexes(mgr); err != nil {
		return err
	}
	owned := skeleton.OwnedBy(mgr, &databasev1alpha1.DatabaseCluster{})
	c, err := skeleton.NewController(mgr, "databasecluster", r.MaxConcurrentReconciles, &databasev1alpha1.DatabaseCluster{},
		predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{})).
		Watches(&appsv1.StatefulSet{}, owned, builder.WithPredicates(statefulSetChanged())).
		Watches(&corev1.Service{}, owned).
		Watches(&corev1.ConfigMap{}, owned).
		Watches(&policyv1.PodDisruptionBudget{}, owned, builder.WithPredicates(
			predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Watches(&corev1.PersistentVolumeClaim{}, skeleton.Behind(handler.EnqueueRequestsFromMapFunc(clusterOfChild)),
			builder.WithPredicates(claimSizeChanged())).
		Watches(&corev1.Pod{}, skeleton.Behind(handler.EnqueueRequestsFromMapFunc(clusterOfChild)),
			builder.WithPredicates(podReadinessChanged())).
		Build(r)
	if err != nil {
		return err
	}
	if err := r.watchInputs(mgr, c); err != nil {
		return err
	}
	r.podMonitors = &podMonitorWatch{mapper: mgr.GetRESTMapper(), start: func() error {
		return c.Watch(source.Kind(mgr.GetCache(), &monitoringv1.PodMonitor{},
			skeleton.Behind(handler.TypedEnqueueRequestForOwner[*monitoringv1.PodMonitor](mgr.GetScheme(), mgr.GetRESTMapper(),
				&databasev1alpha1.DatabaseCluster{}, handler.OnlyControllerOwner())),
			predicate.TypedGenerationChangedPredicate[*monitoringv1.PodMonitor]{}))
	}}
	return nil
}

// recordRoles records the members reporting themselves primary and those whose agent did not
// answer, for a cluster with an engine; a cluster without one has no such series (a 0 would read
// as "no primary"). A pass that stopped before the roles phase keeps the last values, so that an
// unrelated error resets no alert's wait.
func recordRoles(dc *databasev1alpha1.DatabaseCluster, roles rolesObservation) {
	switch {
	case roles.ran:
		opmetrics.RecordRoles(dc.Namespace, dc.Name, len(roles.published.primaries), len(roles.unknown))
	case !dc.HasEngine():
		opmetrics.ForgetRoles(dc.Namespace, dc.Name)
	}
}
