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
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// storageSize parses spec.storage.size. The API server's pattern makes a parse error
// impossible for stored objects; should one slip through, retrying cannot help.
func storageSize(dc *databasev1alpha1.DatabaseCluster) (resource.Quantity, error) {
	size, err := resource.ParseQuantity(dc.Spec.Storage.Size)
	if err != nil {
		return size, reconcile.TerminalError(fmt.Errorf("spec.storage.size %q is not a quantity: %w", dc.Spec.Storage.Size, err))
	}
	return size, nil
}

// listClaims returns the member claims of dc (isMemberClaim), retained ones of removed pods
// included: the only claims storage growth patches.
func (r *Reconciler) listClaims(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) ([]corev1.PersistentVolumeClaim, error) {
	var list corev1.PersistentVolumeClaimList
	if err := r.List(ctx, &list, ofCluster(dc)...); err != nil {
		return nil, fmt.Errorf("listing claims: %w", err)
	}
	claims := list.Items[:0]
	for i := range list.Items {
		// The StatefulSet is not known here; any StatefulSet reference must still name ours.
		if isMemberClaim(dc, nil, &list.Items[i]) {
			claims = append(claims, list.Items[i])
		}
	}
	// The cache lists in no particular order; a fixed order keeps errors and status stable.
	slices.SortFunc(claims, func(a, b corev1.PersistentVolumeClaim) int { return strings.Compare(a.Name, b.Name) })
	return claims, nil
}

// reconcileStorage grows the storage of dc to spec.storage.size: it raises the request of every
// claim that asks for less, then replaces a StatefulSet whose claim template is smaller (its
// claim templates are immutable): an orphan delete removes the StatefulSet but not its pods,
// and the StatefulSet phase creates it again with the new template, adopting the running pods.
// It returns the claims as observed, for the Resizing condition.
func (r *Reconciler) reconcileStorage(ctx context.Context, dc *databasev1alpha1.DatabaseCluster,
	noted *changes,
) ([]corev1.PersistentVolumeClaim, error) {
	size, err := storageSize(dc)
	if err != nil {
		return nil, err
	}
	claims, err := r.listClaims(ctx, dc)
	if err != nil {
		return nil, err
	}
	for i := range claims {
		if err := r.expandClaim(ctx, &claims[i], size, noted); err != nil {
			return claims, err
		}
	}
	return claims, r.replaceSmallStatefulSet(ctx, dc, size, noted)
}

// expandClaim raises the storage request of one claim to size, when it asks for less.
func (r *Reconciler) expandClaim(ctx context.Context, claim *corev1.PersistentVolumeClaim, size resource.Quantity, noted *changes) error {
	request := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	if request.Cmp(size) >= 0 || claim.DeletionTimestamp != nil {
		return nil
	}
	patch := client.MergeFrom(claim.DeepCopy())
	setClaimRequest(claim, size)
	if err := r.Patch(ctx, claim, patch); err != nil {
		return fmt.Errorf("expanding claim %s to %s: %w", claim.Name, size.String(), err)
	}
	noted.expanded = append(noted.expanded, claim.Name)
	return nil
}

// setClaimRequest sets the storage request of claim to size: the one field of a claim the
// operator writes, by a merge patch, for spec.storage.size (expandClaim) and auto-grow
// (growClaim) alike.
func setClaimRequest(claim *corev1.PersistentVolumeClaim, size resource.Quantity) {
	if claim.Spec.Resources.Requests == nil {
		claim.Spec.Resources.Requests = corev1.ResourceList{}
	}
	claim.Spec.Resources.Requests[corev1.ResourceStorage] = size
}

// replaceSmallStatefulSet orphan-deletes the StatefulSet when its claim template asks for less
// than size. The pods and claims stay; the UID precondition makes sure only the StatefulSet
// that was examined is deleted.
func (r *Reconciler) replaceSmallStatefulSet(ctx context.Context, dc *databasev1alpha1.DatabaseCluster,
	size resource.Quantity, noted *changes,
) error {
	sts, err := r.cachedStatefulSet(ctx, dc)
	if err != nil || sts == nil || sts.DeletionTimestamp != nil {
		return err
	}
	// A StatefulSet without the data claim template has no size to raise: it is left as it is.
	template, ok := sts.ClaimSize(databasev1alpha1.DataVolumeName)
	if !ok || template.Cmp(size) >= 0 {
		return nil
	}
	target := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: sts.Namespace, Name: sts.Name}}
	err = r.Delete(ctx, target, client.PropagationPolicy(metav1.DeletePropagationOrphan),
		client.Preconditions{UID: ptr.To(sts.UID)})
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("replacing StatefulSet %s for its new claim size: %w", sts.Name, err)
	}
	noted.replaced = fmt.Sprintf("Replacing StatefulSet %s (pods keep running) to raise its claim template from %s to %s",
		sts.Name, template.String(), size.String())
	return nil
}
