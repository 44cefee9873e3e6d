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

package databasecluster

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/cachecfg"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
	"github.com/seed1b407122/database-operator/controllers/internal/patch"
)

// retentionRecheck is how soon the finalizer looks again while the StatefulSet controller has
// not yet observed the claim retention policy the finalizer just set.
const retentionRecheck = 2 * time.Second

// Finalize is the finalizer path. The StatefulSet, Services and PDB carry owner
// references and are garbage collected; what the finalizer guards is the data. Before the
// finalizer goes, whatever the cluster's state (paused included):
//  1. the StatefulSet's claim retention policy is brought in line with the spec, and the
//     finalizer waits until the StatefulSet controller has observed it, so that it cannot add
//     owner references from a stale policy afterwards;
//  2. with whenDeleted: Delete the member claims are deleted; otherwise every reference from a
//     member claim to the StatefulSet is removed, so the garbage collector cannot delete a kept
//     claim with the StatefulSet.
//
// Only member claims (isMemberClaim) are ever touched. It is idempotent, and removes the
// finalizer even when there is nothing left to clean (e.g. in a namespace being deleted).
func (r *Reconciler) Finalize(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(dc, databasev1alpha1.Finalizer) {
		return ctrl.Result{}, nil
	}
	sts, err := r.ownStatefulSet(ctx, dc)
	if err != nil {
		return ctrl.Result{}, err
	}
	if sts != nil {
		aligned, err := r.alignRetention(ctx, dc, sts)
		if err != nil || !aligned {
			return ctrl.Result{RequeueAfter: retentionRecheck}, err
		}
	}
	claims, err := r.memberClaims(ctx, dc, sts)
	if err != nil {
		return ctrl.Result{}, err
	}
	var deleted, released int
	if dc.WhenDeleted() == databasev1alpha1.DeletePVC {
		deleted, err = r.deleteClaims(ctx, claims)
	} else {
		released, err = r.releaseClaims(ctx, sts, claims)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	keptSecret, err := r.releaseCredentials(ctx, dc)
	if err != nil {
		return ctrl.Result{}, err
	}
	r.Recorder.Eventf(dc, nil, corev1.EventTypeNormal, EventDeleting, "Delete",
		"Deleting the cluster: whenDeleted is %s; %d claims deleted, %d claims released from the StatefulSet, %d member claims in all%s",
		dc.WhenDeleted(), deleted, released, len(claims), keptNote(keptSecret, dc))
	if err := patch.RemoveFinalizer(ctx, r.Client, dc, databasev1alpha1.Finalizer); err != nil {
		// A cluster that is already gone needs nothing more.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	logf.FromContext(ctx).Info("Removed the finalizer", "whenDeleted", dc.WhenDeleted(), "claimsDeleted", deleted, "claimsReleased", released)
	return ctrl.Result{}, nil
}

// ownStatefulSet reads dc's StatefulSet from the API server (not the cache: what the garbage
// collector will act on is what counts here). It returns nil when there is none or it is not
// controlled by dc.
func (r *Reconciler) ownStatefulSet(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) (*appsv1.StatefulSet, error) {
	sts := &appsv1.StatefulSet{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: dc.StatefulSetName()}, sts)
	if apierrors.IsNotFound(err) || (err == nil && !metav1.IsControlledBy(sts, dc)) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading StatefulSet %s: %w", dc.StatefulSetName(), err)
	}
	return sts, nil
}

// alignRetention sets the StatefulSet's claim retention policy to the spec's and reports whether
// the StatefulSet controller has observed it. A StatefulSet no controller has observed yet
// (observedGeneration 0) holds no claim references from an older policy, so it need not wait.
func (r *Reconciler) alignRetention(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, sts *appsv1.StatefulSet) (bool, error) {
	want := specs.RetentionPolicy(dc)
	if have := sts.Spec.PersistentVolumeClaimRetentionPolicy; have == nil || *have != *want {
		if sts.DeletionTimestamp != nil {
			// Too late to change it; the claims are handled below by their references.
			return true, nil
		}
		base := sts.DeepCopy()
		sts.Spec.PersistentVolumeClaimRetentionPolicy = want
		err := r.Patch(ctx, sts, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
		if err != nil {
			return false, fmt.Errorf("setting the claim retention policy of StatefulSet %s to the spec's: %w", sts.Name, err)
		}
		logf.FromContext(ctx).Info("Set the claim retention policy before deleting", "whenDeleted", want.WhenDeleted, "whenScaled", want.WhenScaled)
		return false, nil
	}
	return sts.Status.ObservedGeneration == 0 || sts.Status.ObservedGeneration >= sts.Generation, nil
}

// memberClaims lists dc's member claims from the API server.
func (r *Reconciler) memberClaims(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, sts *appsv1.StatefulSet) ([]corev1.PersistentVolumeClaim, error) {
	var list corev1.PersistentVolumeClaimList
	err := r.APIReader.List(ctx, &list, client.InNamespace(dc.Namespace), client.MatchingLabels(dc.SelectorLabels()))
	if err != nil {
		return nil, fmt.Errorf("listing claims: %w", err)
	}
	claims := list.Items[:0]
	for i := range list.Items {
		if isMemberClaim(dc, cachecfg.ViewStatefulSet(sts), &list.Items[i]) {
			claims = append(claims, list.Items[i])
		}
	}
	return claims, nil
}

// deleteClaims deletes the given claims, each only as the version that was examined (UID
// precondition), and returns how many it deleted.
func (r *Reconciler) deleteClaims(ctx context.Context, claims []corev1.PersistentVolumeClaim) (int, error) {
	deleted := 0
	for i := range claims {
		claim := &claims[i]
		err := r.Delete(ctx, claim, client.Preconditions{UID: ptr.To(claim.UID)})
		if client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
			return deleted, fmt.Errorf("deleting claim %s: %w", claim.Name, err)
		}
		deleted++
	}
	return deleted, nil
}

// releaseClaims removes the owner references to sts from the given claims, so that the garbage
// collector keeps them when it deletes the StatefulSet, and returns how many it changed.
func (r *Reconciler) releaseClaims(ctx context.Context, sts *appsv1.StatefulSet, claims []corev1.PersistentVolumeClaim) (int, error) {
	if sts == nil {
		return 0, nil
	}
	released := 0
	for i := range claims {
		claim := &claims[i]
		refs := ownerRefsWithout(claim.OwnerReferences, sts.UID)
		if len(refs) == len(claim.OwnerReferences) {
			continue
		}
		base := claim.DeepCopy()
		claim.OwnerReferences = refs
		err := r.Patch(ctx, claim, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
		if client.IgnoreNotFound(err) != nil {
			return released, fmt.Errorf("releasing claim %s from StatefulSet %s: %w", claim.Name, sts.Name, err)
		}
		released++
	}
	return released, nil
}
