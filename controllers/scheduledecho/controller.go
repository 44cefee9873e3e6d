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
	"errors"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/opmetrics"
	"github.com/seed1b407122/database-operator/controllers/internal/patch"
)

// kind names ScheduledEchos in owner references and in the operator's metrics.
const kind = "ScheduledEcho"

// Reconciler keeps the CronJob of each ScheduledEcho in line with its spec.
type Reconciler struct {
	client.Client
	// APIReader reads from the API server directly; used only when the cache cannot see a child.
	APIReader client.Reader
	Recorder  recorder.EventRecorder
	// Image runs the Jobs; it needs /bin/sh and printf (busybox has both).
	Image string
	// MaxConcurrentReconciles is how many ScheduledEchos are reconciled at once.
	MaxConcurrentReconciles int
}

// The finalizers verb lets the operator set blockOwnerDeletion on the CronJobs it owns, where the
// OwnerReferencesPermissionEnforcement admission plugin is on.
// +kubebuilder:rbac:groups=echo.seed1b407122.io,resources=scheduledechoes,verbs=get;list;watch
// +kubebuilder:rbac:groups=echo.seed1b407122.io,resources=scheduledechoes/status,verbs=patch
// +kubebuilder:rbac:groups=echo.seed1b407122.io,resources=scheduledechoes/finalizers,verbs=update
// +kubebuilder:rbac:groups=batch,resources=cronjobs,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings the CronJob of one ScheduledEcho in line with its spec and writes the status
// it observed: get → CronJob → status (once, only if changed). A spec the CronJob API rejects is
// a terminal error: retrying cannot help until the user changes it, and Ready says why.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, err error) {
	s := &echov1alpha1.ScheduledEcho{}
	if err := r.Get(ctx, req.NamespacedName, s); err != nil {
		if apierrors.IsNotFound(err) {
			opmetrics.Forget(kind, req.Namespace, req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	original := s.DeepCopy()
	obs := r.reconcileCronJob(ctx, s)
	defer func() {
		status := computeStatus(s, obs)
		opmetrics.RecordConditions(kind, s.Namespace, s.Name, status.Conditions)
		err = errors.Join(err, r.patchStatus(ctx, original, status))
	}()
	if isTerminal(obs.err) {
		return ctrl.Result{}, reconcile.TerminalError(obs.err)
	}
	return ctrl.Result{}, obs.err
}

// patchStatus writes status, and only when it changed. It also emits the events of the
// condition transitions, so that each is told exactly once.
func (r *Reconciler) patchStatus(ctx context.Context, original *echov1alpha1.ScheduledEcho,
	status echov1alpha1.ScheduledEchoStatus,
) error {
	updated := original.DeepCopy()
	updated.Status = status
	if written, err := patch.Status(ctx, r.Client, original, updated); !written {
		return err
	}
	r.recordTransitions(original, updated)
	logf.FromContext(ctx).V(1).Info("Patched the status", "cronJob", status.CronJobName)
	return nil
}

// SetupWithManager registers the controller and its watches: spec changes of ScheduledEchos,
// and the changes of their CronJobs that the operator reads.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&echov1alpha1.ScheduledEcho{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&batchv1.CronJob{}, builder.WithPredicates(cronJobChanged())).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles}).
		Named("scheduledecho").
		Complete(r)
}
