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
	batchv1 "k8s.io/api/batch/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/operator"
)

// Reconciler keeps the CronJob of each ScheduledEcho in line with its spec (Phases, in
// phases.go). Its APIReader is used only when the cache cannot see a child.
type Reconciler struct {
	operator.ReconcilerBase
	// Image runs the Jobs; it needs /bin/sh and printf (busybox has both).
	Image string
}

// The finalizers verb lets the operator set blockOwnerDeletion on the CronJobs it owns, where the
// OwnerReferencesPermissionEnforcement admission plugin is on.
// +kubebuilder:rbac:groups=echo.seed1b407122.io,resources=scheduledechoes,verbs=get;list;watch
// +kubebuilder:rbac:groups=echo.seed1b407122.io,resources=scheduledechoes/status,verbs=patch
// +kubebuilder:rbac:groups=echo.seed1b407122.io,resources=scheduledechoes/finalizers,verbs=update
// +kubebuilder:rbac:groups=batch,resources=cronjobs,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers the controller: a ScheduledEcho is a Kind without a finalizer or
// series of its own, reconciled by the skeleton's plain reconcile (get → CronJob → status, once,
// only if changed), on its spec changes and the changes of its CronJob that the operator reads.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return operator.SetupOneChild(mgr, r.ReconcilerBase, "scheduledecho", &echov1alpha1.ScheduledEcho{}, &batchv1.CronJob{},
		cronJobChanged(), r)
}
