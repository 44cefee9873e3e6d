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

// Package echo reconciles the two Kinds of the echo group. Each Echo prints its message once,
// from a Job in its own namespace, and reports how the Job went; each ScheduledEcho keeps a
// CronJob in its own namespace that prints its message on its schedule, with the pod of an
// Echo's Job.
package echo

import (
	batchv1 "k8s.io/api/batch/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/skeleton"
	"github.com/seed1b407122/database-operator/controllers/operator"
)

// Reconciler reconciles both Kinds, each in a controller of its own that --controllers selects
// by name: SetupEchoWithManager registers "echo", SetupScheduledEchoWithManager "scheduledecho".
// Its APIReader reads what the cache may not hold yet: an Echo's status, a child just created.
type Reconciler struct {
	operator.ReconcilerBase
	// Image runs the Jobs; it needs /bin/sh and printf (busybox has both).
	Image string
}

// echoReconciler is the Reconciler as the skeleton.Kind of Echos, scheduledEchoReconciler as
// that of ScheduledEchos: their Phases are in phases.go (their children's in reconcile_job.go and
// reconcile_cronjob.go), their StatusWritten in events_echo.go and events_scheduled.go.
type (
	echoReconciler          Reconciler
	scheduledEchoReconciler Reconciler
)

var (
	_ skeleton.Kind[*echov1alpha1.Echo]          = (*echoReconciler)(nil)
	_ skeleton.Kind[*echov1alpha1.ScheduledEcho] = (*scheduledEchoReconciler)(nil)
)

// The finalizers verbs let the operator set blockOwnerDeletion on the Jobs and CronJobs it owns,
// where the OwnerReferencesPermissionEnforcement admission plugin is on.
// +kubebuilder:rbac:groups=echo.seed1b407122.io,resources=echoes,verbs=get;list;watch
// +kubebuilder:rbac:groups=echo.seed1b407122.io,resources=echoes/status,verbs=patch
// +kubebuilder:rbac:groups=echo.seed1b407122.io,resources=echoes/finalizers,verbs=update
// +kubebuilder:rbac:groups=echo.seed1b407122.io,resources=scheduledechoes,verbs=get;list;watch
// +kubebuilder:rbac:groups=echo.seed1b407122.io,resources=scheduledechoes/status,verbs=patch
// +kubebuilder:rbac:groups=echo.seed1b407122.io,resources=scheduledechoes/finalizers,verbs=update
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=batch,resources=cronjobs,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupEchoWithManager registers the controller of Echos: an Echo is a Kind without a finalizer
// or series of its own, reconciled by the skeleton's plain reconcile (get → Job, unless finished
// → status, once, only if changed). Its spec is immutable, so only its creation (and a generation
// change, should one happen) queues it, plus the changes of its Job that the status is computed
// from.
func (r *Reconciler) SetupEchoWithManager(mgr ctrl.Manager) error {
	return operator.SetupOneChild(mgr, r.ReconcilerBase, "echo", &echov1alpha1.Echo{}, &batchv1.Job{},
		jobChanged(), (*echoReconciler)(r))
}

// SetupScheduledEchoWithManager registers the controller of ScheduledEchos: a ScheduledEcho is a
// Kind without a finalizer or series of its own, reconciled by the skeleton's plain reconcile
// (get → CronJob → status, once, only if changed), on its spec changes and the changes of its
// CronJob that the operator reads.
func (r *Reconciler) SetupScheduledEchoWithManager(mgr ctrl.Manager) error {
	return operator.SetupOneChild(mgr, r.ReconcilerBase, "scheduledecho", &echov1alpha1.ScheduledEcho{}, &batchv1.CronJob{},
		cronJobChanged(), (*scheduledEchoReconciler)(r))
}
