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

// Package scheduleddatabasebackup reconciles ScheduledDatabaseBackups: on each run of its cron
// schedule a DatabaseBackup of the cluster, annotated with the schedule's UID (and controlled by
// the schedule only under backupOwnerReference schedule), and the deletion of the old backups
// its retention lets go. Deleting a schedule leaves its backups by default.
package scheduleddatabasebackup

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/skeleton"
	"github.com/seed1b407122/database-operator/controllers/operator"
)

// kind names ScheduledDatabaseBackups in owner references and in the operator's metrics.
const kind = "ScheduledDatabaseBackup"

// Reconciler creates the runs of each ScheduledDatabaseBackup and applies its retention.
type Reconciler struct {
	operator.ReconcilerBase
	// Now is the clock the schedule is read against: time.Now in main, a clock the specs move
	// in envtest (a schedule of minutes is too slow for a test). Nil means time.Now.
	Now func() time.Time
}

// A Kind without a finalizer or series of its own: the skeleton's plain reconcile.
var _ skeleton.Kind[*databasev1alpha1.ScheduledDatabaseBackup] = (*Reconciler)(nil)

// The finalizers verb lets the operator set blockOwnerDeletion on the backups it controls
// (backupOwnerReference schedule); patch releases the backups from the schedule's controller
// reference (backupOwnerReference none, and the backups 0.3.0 made).
// +kubebuilder:rbac:groups=database.seed1b407122.io,resources=scheduleddatabasebackups,verbs=get;list;watch
// +kubebuilder:rbac:groups=database.seed1b407122.io,resources=scheduleddatabasebackups/status,verbs=get;patch
// +kubebuilder:rbac:groups=database.seed1b407122.io,resources=scheduleddatabasebackups/finalizers,verbs=update
// +kubebuilder:rbac:groups=database.seed1b407122.io,resources=databasebackups,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile releases the backups backupOwnerReference none no longer lets the schedule
// control, creates the run that is due, deletes what the retention lets go and writes the
// status it observed: get → backups → status (once, only if changed). It requeues at the next
// run, never polls.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return skeleton.Reconcile(ctx, r.Client, r.OwnWrites, req, &databasev1alpha1.ScheduledDatabaseBackup{}, r)
}

// Phases runs the release, run and retention phases of s and sets its status to what they
// observed. An invalid schedule is a terminal error: nothing runs until the spec changes, and
// Ready says why; the retention still applies.
func (r *Reconciler) Phases(ctx context.Context, s *databasev1alpha1.ScheduledDatabaseBackup) (ctrl.Result, error) {
	obs := r.observe(ctx, s)
	r.releaseBackups(ctx, s, &obs)
	result := r.reconcileRun(ctx, s, &obs)
	r.reconcileRetention(ctx, s, &obs)
	s.Status = computeStatus(s, obs)
	if obs.scheduleErr != nil {
		return ctrl.Result{}, skeleton.TerminalIf(obs.scheduleErr, func(error) bool { return true })
	}
	return result, obs.err
}

// now reads the Reconciler's clock.
func (r *Reconciler) now() time.Time {
	if r.Now == nil {
		return time.Now()
	}
	return r.Now()
}

// SetupWithManager registers the controller and its watches: spec changes of the schedules, and
// the changes of phase of their backups (a Completed backup may let an older one go). Backups
// are mapped to their schedule by its label, not by an owner reference, which they carry only
// under backupOwnerReference schedule; the reconcile then tells by madeBy whether a backup
// really is the schedule's.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return skeleton.NewController(mgr, "scheduleddatabasebackup", r.MaxConcurrentReconciles,
		&databasev1alpha1.ScheduledDatabaseBackup{}, predicate.GenerationChangedPredicate{}).
		Watches(&databasev1alpha1.DatabaseBackup{}, skeleton.Behind(handler.EnqueueRequestsFromMapFunc(schedulesOf)),
			builder.WithPredicates(phaseChanged())).
		Complete(r)
}

// schedulesOf maps a backup to the schedules that may have made it: the one its label names,
// and the one its controller reference names (a backup made by 0.3.0 whose label was removed
// must still be released).
func schedulesOf(_ context.Context, obj client.Object) []reconcile.Request {
	var requests []reconcile.Request
	if name := obj.GetLabels()[databasev1alpha1.ScheduleLabel]; name != "" {
		requests = append(requests, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}})
	}
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref != nil && ref.Kind == kind && ref.APIVersion == databasev1alpha1.GroupVersion.String() &&
		(len(requests) == 0 || requests[0].Name != ref.Name) {
		requests = append(requests, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}})
	}
	return requests
}

// phaseChanged lets an update of a backup through only when its phase changed: the backup
// controller's other status writes change nothing the schedule reads.
func phaseChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		before, okBefore := e.ObjectOld.(*databasev1alpha1.DatabaseBackup)
		after, okAfter := e.ObjectNew.(*databasev1alpha1.DatabaseBackup)
		return !okBefore || !okAfter || before.Status.Phase != after.Status.Phase
	}}
}
