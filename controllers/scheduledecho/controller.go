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

// Package scheduledecho reconciles ScheduledEchos: each one keeps a CronJob in its own namespace
// that prints its message on its schedule.
package scheduledecho

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/skeleton"
	"github.com/seed1b407122/database-operator/controllers/operator"
)

// kind names ScheduledEchos in owner references and in the operator's metrics.
const kind = "ScheduledEcho"

// Reconciler keeps the CronJob of each ScheduledEcho in line with its spec. Its APIReader is
// used only when the cache cannot see a child.
type Reconciler struct {
	operator.ReconcilerBase
	// Image runs the Jobs; it needs /bin/sh and printf (busybox has both).
	Image string
}

// A Kind without a finalizer or series of its own: the skeleton's plain reconcile.
var _ skeleton.Kind[*echov1alpha1.ScheduledEcho] = (*Reconciler)(nil)

// The finalizers verb lets the operator set blockOwnerDeletion on the CronJobs it owns, where the
// OwnerReferencesPermissionEnforcement admission plugin is on.
// +kubebuilder:rbac:groups=echo.seed1b407122.io,resources=scheduledechoes,verbs=get;list;watch
// +kubebuilder:rbac:groups=echo.seed1b407122.io,resources=scheduledechoes/status,verbs=patch
// +kubebuilder:rbac:groups=echo.seed1b407122.io,resources=scheduledechoes/finalizers,verbs=update
// +kubebuilder:rbac:groups=batch,resources=cronjobs,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings the CronJob of one ScheduledEcho in line with its spec and writes the status
// it observed: get → CronJob → status (once, only if changed).
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return skeleton.Reconcile(ctx, r.Client, r.OwnWrites, req, &echov1alpha1.ScheduledEcho{}, r)
}

// Phases runs the one phase of a ScheduledEcho, its CronJob, and sets the status of s to what it
// observed. A spec the CronJob API rejects is a terminal error: retrying cannot help until the
// user changes it, and Ready says why.
func (r *Reconciler) Phases(ctx context.Context, s *echov1alpha1.ScheduledEcho) (ctrl.Result, error) {
	obs := r.reconcileCronJob(ctx, s)
	s.Status = computeStatus(s, obs)
	return ctrl.Result{}, skeleton.TerminalIf(obs.err, isTerminal)
}

// SetupWithManager registers the controller and its watches: spec changes of ScheduledEchos,
// and the changes of their CronJobs that the operator reads.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return skeleton.NewController(mgr, "scheduledecho", r.MaxConcurrentReconciles, &echov1alpha1.ScheduledEcho{},
		predicate.GenerationChangedPredicate{}).
		Watches(&batchv1.CronJob{}, skeleton.OwnedBy(mgr, &echov1alpha1.ScheduledEcho{}), builder.WithPredicates(cronJobChanged())).
		Complete(r)
}
