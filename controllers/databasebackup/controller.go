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

// Package databasebackup reconciles DatabaseBackups: one VolumeSnapshot of every member's data
// claim of a DatabaseCluster, taken together while the cluster runs (Online) or while it is
// stopped (Offline), owned by the backup and reported member by member.
package databasebackup

import (
	"context"
	"errors"
	"time"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/patch"
	"github.com/seed1b407122/database-operator/controllers/internal/skeleton"
	"github.com/seed1b407122/database-operator/controllers/operator"
)

// kind names DatabaseBackups in owner references and in the operator's metrics.
const kind = "DatabaseBackup"

// snapshotPollInterval is how often a running backup looks at its snapshots when the snapshot
// API appeared after the manager started, so that no watch on VolumeSnapshots was set up.
const snapshotPollInterval = 10 * time.Second

// DefaultClusterWait is how long a backup waits for a cluster that does not exist before it fails.
const DefaultClusterWait = 10 * time.Second

// Reconciler takes the snapshots of each DatabaseBackup and reports them. Its APIReader reads
// the StorageClasses and VolumeSnapshotClasses, once per backup and not cached, a child that
// exists but is not cached yet, and the cluster when an Offline backup decides to take it.
type Reconciler struct {
	operator.ReconcilerBase
	// ClusterWait is how long a backup waits for its cluster to exist before it fails
	// (default DefaultClusterWait).
	ClusterWait time.Duration

	// snapshotsWatched says that the snapshot API was served when the controller was set up,
	// so that the changes of the VolumeSnapshots trigger reconciles.
	snapshotsWatched bool
}

// The skeleton finds a Kind's finalizer path and its own series by type assertion: these make a
// misspelt method a compile error rather than a finalizer silently never run.
var (
	_ skeleton.Finalizing[*databasev1alpha1.DatabaseBackup] = (*Reconciler)(nil)
	_ skeleton.MetricsForgetter                             = (*Reconciler)(nil)
)

// The finalizers verb lets the operator set blockOwnerDeletion on the VolumeSnapshots it owns.
// StorageClasses and VolumeSnapshotClasses are cluster-scoped and only read, not watched.
// +kubebuilder:rbac:groups=database.seed1b407122.io,resources=databasebackups,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=database.seed1b407122.io,resources=databasebackups/status,verbs=get;patch
// +kubebuilder:rbac:groups=database.seed1b407122.io,resources=databasebackups/finalizers,verbs=update
// +kubebuilder:rbac:groups=database.seed1b407122.io,resources=databaseclusters,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch
// +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=core,resources=persistentvolumeclaims,verbs=get;list;watch
// +kubebuilder:rbac:groups=snapshot.storage.k8s.io,resources=volumesnapshots,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=snapshot.storage.k8s.io,resources=volumesnapshotclasses,verbs=get;list
// +kubebuilder:rbac:groups=storage.k8s.io,resources=storageclasses,verbs=get
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile takes the backup one step further and writes the status it observed:
// get → deletion (start the cluster again) → finalizer → backup steps → status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return skeleton.Reconcile(ctx, r.Client, r.OwnWrites, req, &databasev1alpha1.DatabaseBackup{}, r)
}

// Phases runs the steps of a backup that has not finished (cluster, snapshot API, class, the
// cluster stopped for Offline, the snapshots) and sets the status to what they observed. A
// cluster held stopped is started again as soon as every snapshot is cut, or the backup failed.
func (r *Reconciler) Phases(ctx context.Context, b *databasev1alpha1.DatabaseBackup) (ctrl.Result, error) {
	defer recordBackup(b)
	if finished(b.Status.Phase) {
		// A finished backup holds no cluster; this releases one a failed write left held.
		return ctrl.Result{}, r.release(ctx, b)
	}
	obs := r.observe(ctx, b)
	b.Status = computeStatus(b, obs, metav1.Now())
	err := obs.err
	if obs.holding && (finished(b.Status.Phase) || allCut(obs.snapshots)) {
		err = errors.Join(err, r.release(ctx, b))
	}
	if obs.retryAfter > 0 {
		return ctrl.Result{RequeueAfter: obs.retryAfter}, err
	}
	if !r.snapshotsWatched && b.Status.Phase == databasev1alpha1.BackupRunning {
		return ctrl.Result{RequeueAfter: snapshotPollInterval}, err
	}
	return ctrl.Result{}, err
}

// Finalizer keeps a deleted backup until the cluster it may hold stopped runs again.
func (r *Reconciler) Finalizer() string { return databasev1alpha1.BackupFinalizer }

// Finalize starts the cluster again if the backup holds it stopped, then lets the backup go.
// Its VolumeSnapshots go with it by garbage collection (their owner reference), and the
// class's deletionPolicy decides what happens to the stored copies.
func (r *Reconciler) Finalize(ctx context.Context, b *databasev1alpha1.DatabaseBackup) (ctrl.Result, error) {
	if err := r.release(ctx, b); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, patch.RemoveFinalizer(ctx, r.Client, b, databasev1alpha1.BackupFinalizer)
}

// SetupWithManager registers the controller and its watches: the backups (their spec is
// immutable, so creation and deletion), their VolumeSnapshots when the snapshot API is served,
// the claims of the clusters (a backup waits for them to be Bound), their StatefulSets and the
// deletions of their pods, which tell an Offline backup when every member stopped.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	served, err := snapshotAPIServed(mgr.GetRESTMapper())
	if err != nil {
		return err
	}
	r.snapshotsWatched = served
	b := skeleton.NewController(mgr, "databasebackup", r.MaxConcurrentReconciles, &databasev1alpha1.DatabaseBackup{},
		predicate.GenerationChangedPredicate{})
	if served {
		b = b.Watches(&snapshotv1.VolumeSnapshot{}, skeleton.OwnedBy(mgr, &databasev1alpha1.DatabaseBackup{}),
			builder.WithPredicates(snapshotChanged()))
	}
	return b.Watches(&appsv1.StatefulSet{}, skeleton.Behind(handler.EnqueueRequestsFromMapFunc(r.backupsOfCluster)),
		builder.WithPredicates(replicasChanged())).
		Watches(&corev1.PersistentVolumeClaim{}, skeleton.Behind(handler.EnqueueRequestsFromMapFunc(r.backupsOfCluster)),
			builder.WithPredicates(claimPhaseChanged())).
		Watches(&corev1.Pod{}, skeleton.Behind(handler.EnqueueRequestsFromMapFunc(r.backupsOfCluster)),
			builder.WithPredicates(podDeleted())).
		Complete(r)
}
