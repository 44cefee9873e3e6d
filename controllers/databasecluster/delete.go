/*
Copyright 2026 The database-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package databasecluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/patch"
)

// reconcileDelete is the finalizer path. The StatefulSet, Services and PDB carry owner
// references and are garbage collected; what the finalizer guards is the data: claims are
// deleted only when pvcRetentionPolicy.whenDeleted is Delete. It is idempotent, and removes the
// finalizer even when there is nothing left to clean (e.g. in a namespace being deleted).
func (r *Reconciler) reconcileDelete(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) error {
	if !controllerutil.ContainsFinalizer(dc, databasev1alpha1.Finalizer) {
		return nil
	}
	deleted, err := r.deleteClaims(ctx, dc)
	if err != nil {
		return err
	}
	r.Recorder.Eventf(dc, nil, corev1.EventTypeNormal, EventDeleting, "Delete",
		"Deleting the cluster: %d claims deleted, claims kept unless whenDeleted is Delete (it is %s)", deleted, dc.WhenDeleted())
	if err := patch.RemoveFinalizer(ctx, r.Client, dc, databasev1alpha1.Finalizer); err != nil {
		// A cluster that is already gone needs nothing more.
		return client.IgnoreNotFound(err)
	}
	logf.FromContext(ctx).Info("Removed the finalizer", "whenDeleted", dc.WhenDeleted(), "claimsDeleted", deleted)
	return nil
}

// deleteClaims deletes the claims of dc when whenDeleted is Delete, and returns how many it deleted.
func (r *Reconciler) deleteClaims(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) (int, error) {
	if dc.WhenDeleted() != databasev1alpha1.DeletePVC {
		return 0, nil
	}
	var claims corev1.PersistentVolumeClaimList
	if err := r.List(ctx, &claims, client.InNamespace(dc.Namespace), client.MatchingLabels(dc.Labels())); err != nil {
		return 0, fmt.Errorf("listing claims: %w", err)
	}
	deleted := 0
	for i := range claims.Items {
		claim := &claims.Items[i]
		uid := claim.UID
		err := r.Delete(ctx, claim, client.Preconditions{UID: &uid})
		if client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
			return deleted, fmt.Errorf("deleting claim %s: %w", claim.Name, err)
		}
		deleted++
	}
	return deleted, nil
}
