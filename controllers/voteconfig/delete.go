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

package voteconfig

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	votingv1alpha1 "github.com/seed1b407122/database-operator/api/voting/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/patch"
)

// Finalize is the finalizer path. The ConfigMap carries an owner reference and is garbage
// collected; what the finalizer guards is the config-hash annotation on the target Deployment,
// which nothing else would remove. It is idempotent, and removes the finalizer even when there
// is nothing left to clean (no target, or a Deployment already gone with its namespace).
func (r *Reconciler) Finalize(ctx context.Context, vc *votingv1alpha1.VoteConfig) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(vc, votingv1alpha1.Finalizer) {
		return ctrl.Result{}, nil
	}
	if err := r.removeTargetAnnotation(ctx, vc); err != nil {
		return ctrl.Result{}, err
	}
	if err := patch.RemoveFinalizer(ctx, r.Client, vc, votingv1alpha1.Finalizer); err != nil {
		// A VoteConfig that is already gone needs nothing more.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	logf.FromContext(ctx).Info("Removed the finalizer", "targetDeployment", vc.Spec.TargetDeployment)
	return ctrl.Result{}, nil
}
