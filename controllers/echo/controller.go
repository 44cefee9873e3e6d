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

// Package echo reconciles Echos: each Echo prints its message once, from a Job in its own
// namespace, and reports how the Job went.
package echo

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/skeleton"
	"github.com/seed1b407122/database-operator/controllers/operator"
)

// kind names Echos in owner references and in the operator's metrics.
const kind = "Echo"

// Reconciler creates the Job of each Echo and reports its phase. Its APIReader reads what the
// cache may not hold yet.
type Reconciler struct {
	operator.ReconcilerBase
	// Image runs the Jobs; it needs /bin/sh and printf (busybox has both).
	Image string
}

// A Kind without a finalizer or series of its own: the skeleton's plain reconcile.
var _ skeleton.Kind[*echov1alpha1.Echo] = (*Reconciler)(nil)

// The finalizers verb lets the operator set blockOwnerDeletion on the Jobs it owns, where the
// OwnerReferencesPermissionEnforcement admission plugin is on.
// +kubebuilder:rbac:groups=echo.seed1b407122.io,resources=echoes,verbs=get;list;watch
// +kubebuilder:rbac:groups=echo.seed1b407122.io,resources=echoes/status,verbs=patch
// +kubebuilder:rbac:groups=echo.seed1b407122.io,resources=echoes/finalizers,verbs=update
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile makes sure the Job of one Echo runs once and writes the status it observed:
// get → Job (unless finished) → status (once, only if changed).
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return skeleton.Reconcile(ctx, r.Client, r.OwnWrites, req, &echov1alpha1.Echo{}, r)
}

// Phases runs the one phase of an Echo, its Job, and sets the status of e to what it observed. A
// Job the API server will never take is a terminal error: the Failed condition says why.
func (r *Reconciler) Phases(ctx context.Context, e *echov1alpha1.Echo) (ctrl.Result, error) {
	obs := r.reconcileJob(ctx, e)
	e.Status = computeStatus(e, obs)
	return ctrl.Result{}, skeleton.TerminalIf(obs.err, apierrors.IsInvalid)
}

// SetupWithManager registers the controller and its watches. The spec of an Echo is immutable,
// so only its creation (and a generation change, should one happen) triggers a reconcile, plus
// the changes of its Job that the status is computed from.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return skeleton.NewController(mgr, "echo", r.MaxConcurrentReconciles, &echov1alpha1.Echo{},
		predicate.GenerationChangedPredicate{}).
		Watches(&batchv1.Job{}, skeleton.OwnedBy(mgr, &echov1alpha1.Echo{}), builder.WithPredicates(jobChanged())).
		Complete(r)
}
