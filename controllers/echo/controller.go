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
	batchv1 "k8s.io/api/batch/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/operator"
)

// Reconciler creates the Job of each Echo and reports its phase (Phases, in phases.go). Its
// APIReader reads what the cache may not hold yet.
type Reconciler struct {
	operator.ReconcilerBase
	// Image runs the Jobs; it needs /bin/sh and printf (busybox has both).
	Image string
}

// The finalizers verb lets the operator set blockOwnerDeletion on the Jobs it owns, where the
// OwnerReferencesPermissionEnforcement admission plugin is on.
// +kubebuilder:rbac:groups=echo.seed1b407122.io,resources=echoes,verbs=get;list;watch
// +kubebuilder:rbac:groups=echo.seed1b407122.io,resources=echoes/status,verbs=patch
// +kubebuilder:rbac:groups=echo.seed1b407122.io,resources=echoes/finalizers,verbs=update
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers the controller: an Echo is a Kind without a finalizer or series of
// its own, reconciled by the skeleton's plain reconcile (get → Job, unless finished → status,
// once, only if changed). Its spec is immutable, so only its creation (and a generation change,
// should one happen) queues it, plus the changes of its Job that the status is computed from.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return operator.SetupOneChild(mgr, r.ReconcilerBase, "echo", &echov1alpha1.Echo{}, &batchv1.Job{}, jobChanged(), r)
}
