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

// A restore from a backup of another namespace (a clone). A claim's dataSourceRef cannot name a
// VolumeSnapshot of another namespace (that needs alpha feature gates), so the operator moves
// each snapshot as the CSI documentation prescribes: a pre-provisioned VolumeSnapshotContent
// (cluster-scoped) on the same snapshot handle and driver, deletionPolicy Retain, bound to a new
// VolumeSnapshot in the cluster's namespace; the claims restore from those copies. Retain means
// that deleting a copy never deletes the data, which belongs to the source backup. The copies
// are deleted once every claim restored from them is bound; the source backup, its snapshots
// and their contents are only read.

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
)

// +kubebuilder:rbac:groups=snapshot.storage.k8s.io,resources=volumesnapshots,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=snapshot.storage.k8s.io,resources=volumesnapshotcontents,verbs=get;create;delete

// BuildSnapshotContentCopy is the pre-provisioned VolumeSnapshotContent that copies source (the
// bound content of a backup's snapshot) for the member ordinal of dc: the same driver and
// snapshot handle, deletionPolicy Retain, pre-bound to the VolumeSnapshot RestoreCopyName in the
// cluster's namespace.
func BuildSnapshotContentCopy(dc *databasev1alpha1.DatabaseCluster, ordinal int32, source *snapshotv1.VolumeSnapshotContent) *snapshotv1.VolumeSnapshotContent {
	return &snapshotv1.VolumeSnapshotContent{
		ObjectMeta: metav1.ObjectMeta{
			Name:        dc.RestoreContentName(ordinal),
			Labels:      dc.RestoreCopyLabels(),
			Annotations: map[string]string{databasev1alpha1.RestoreForAnnotation: dc.Namespace + "/" + dc.Name},
		},
		Spec: snapshotv1.VolumeSnapshotContentSpec{
			DeletionPolicy:   snapshotv1.VolumeSnapshotContentRetain,
			Driver:           source.Spec.Driver,
			Source:           snapshotv1.VolumeSnapshotContentSource{SnapshotHandle: ptr.To(*source.Status.SnapshotHandle)},
			SourceVolumeMode: source.Spec.SourceVolumeMode,
			VolumeSnapshotRef: corev1.ObjectReference{
				APIVersion: snapshotv1.SchemeGroupVersion.String(), Kind: specs.SnapshotKind,
				Namespace: dc.Namespace, Name: dc.RestoreCopyName(ordinal),
			},
		},
	}
}

// BuildSnapshotCopy is the VolumeSnapshot in dc's namespace, controlled by dc, bound to the
// content copy of the member ordinal.
func BuildSnapshotCopy(dc *databasev1alpha1.DatabaseCluster, ordinal int32) *snapshotv1.VolumeSnapshot {
	return &snapshotv1.VolumeSnapshot{
		ObjectMeta: metav1.ObjectMeta{
			Name:            dc.RestoreCopyName(ordinal),
			Namespace:       dc.Namespace,
			Labels:          dc.RestoreCopyLabels(),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(dc, databasev1alpha1.GroupVersion.WithKind(kind))},
		},
		Spec: snapshotv1.VolumeSnapshotSpec{
			Source: snapshotv1.VolumeSnapshotSource{VolumeSnapshotContentName: ptr.To(dc.RestoreContentName(ordinal))},
		},
	}
}

// isContentCopyOf reports whether content is the copy the operator made for the member
// ordinal of dc. A cluster-scoped object cannot name a namespaced owner, so its annotation and
// its volumeSnapshotRef tell it, with deletionPolicy Retain (a copy never deletes the data).
func isContentCopyOf(content *snapshotv1.VolumeSnapshotContent, dc *databasev1alpha1.DatabaseCluster, ordinal int32) bool {
	ref := content.Spec.VolumeSnapshotRef
	return content.Name == dc.RestoreContentName(ordinal) &&
		content.Annotations[databasev1alpha1.RestoreForAnnotation] == dc.Namespace+"/"+dc.Name &&
		ref.Namespace == dc.Namespace && ref.Name == dc.RestoreCopyName(ordinal) &&
		content.Spec.DeletionPolicy == snapshotv1.VolumeSnapshotContentRetain
}

// CheckSnapshotSource says whether the backup's snapshot snap, bound to content, can be copied:
// the snapshot controlled by the backup and ready, the content bound back to it with a handle,
// neither being deleted.
func CheckSnapshotSource(backup *databasev1alpha1.DatabaseBackup, snap *snapshotv1.VolumeSnapshot, content *snapshotv1.VolumeSnapshotContent) error {
	if !metav1.IsControlledBy(snap, backup) {
		return refuse("VolumeSnapshot %s/%s is not controlled by DatabaseBackup %s: only a backup's own snapshots are restored", snap.Namespace, snap.Name, backup.Name)
	}
	if snap.Status == nil || !ptr.Deref(snap.Status.ReadyToUse, false) || ptr.Deref(snap.Status.BoundVolumeSnapshotContentName, "") == "" {
		return refuse("VolumeSnapshot %s/%s is not ready to use: wait for it or name another backup", snap.Namespace, snap.Name)
	}
	ref := content.Spec.VolumeSnapshotRef
	if content.Name != *snap.Status.BoundVolumeSnapshotContentName || ref.Namespace != snap.Namespace || ref.Name != snap.Name || ref.UID != snap.UID {
		return refuse("VolumeSnapshotContent %s is not bound to VolumeSnapshot %s/%s", content.Name, snap.Namespace, snap.Name)
	}
	if content.Status == nil || ptr.Deref(content.Status.SnapshotHandle, "") == "" {
		return refuse("VolumeSnapshotContent %s of VolumeSnapshot %s/%s has no snapshot handle", content.Name, snap.Namespace, snap.Name)
	}
	if snap.DeletionTimestamp != nil || content.DeletionTimestamp != nil {
		// A copy would outlive the stored snapshot the deletion is about to remove.
		return refuse("VolumeSnapshot %s/%s is being deleted: name another backup", snap.Namespace, snap.Name)
	}
	return nil
}

// readSnapshotSource reads the backup's snapshot of member and its bound content. Both are
// read from the API server: they are in another namespace (or cluster-scoped), which the cache
// may not hold, and they are read only until the restore is done.
func (r *Reconciler) readSnapshotSource(ctx context.Context, backup *databasev1alpha1.DatabaseBackup, member databasev1alpha1.BackupMember) (*snapshotv1.VolumeSnapshotContent, error) {
	snap := &snapshotv1.VolumeSnapshot{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: backup.Namespace, Name: member.VolumeSnapshotName}, snap); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, refuse("VolumeSnapshot %s/%s of DatabaseBackup %s is gone: name another backup", backup.Namespace, member.VolumeSnapshotName, backup.Name)
		}
		return nil, fmt.Errorf("reading VolumeSnapshot %s/%s: %w", backup.Namespace, member.VolumeSnapshotName, err)
	}
	content := &snapshotv1.VolumeSnapshotContent{}
	if name := ptr.Deref(snap.Status, snapshotv1.VolumeSnapshotStatus{}).BoundVolumeSnapshotContentName; name != nil {
		if err := r.APIReader.Get(ctx, client.ObjectKey{Name: *name}, content); err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("reading VolumeSnapshotContent %s: %w", *name, err)
		}
	}
	if err := CheckSnapshotSource(backup, snap, content); err != nil {
		return nil, err
	}
	return content, nil
}

// copySnapshot makes (or finds) the copy of member's snapshot in dc's namespace and returns
// the name of the VolumeSnapshot the member's claim restores from. An object of a copy's name
// that is not the copy is never used or touched: the restore is refused until it is gone.
func (r *Reconciler) copySnapshot(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, backup *databasev1alpha1.DatabaseBackup,
	member databasev1alpha1.BackupMember, noted *changes,
) (string, error) {
	source, err := r.readSnapshotSource(ctx, backup, member)
	if err != nil {
		return "", err
	}
	content := BuildSnapshotContentCopy(dc, member.Ordinal, source)
	existing := &snapshotv1.VolumeSnapshotContent{}
	err = r.APIReader.Get(ctx, client.ObjectKeyFromObject(content), existing)
	switch {
	case err == nil && (!isContentCopyOf(existing, dc, member.Ordinal) ||
		ptr.Deref(existing.Spec.Source.SnapshotHandle, "") != *content.Spec.Source.SnapshotHandle):
		return "", refuse("VolumeSnapshotContent %s exists and is not the copy of snapshot %s/%s for this cluster: it is left as it is",
			content.Name, backup.Namespace, member.VolumeSnapshotName)
	case apierrors.IsNotFound(err):
		if err := r.Create(ctx, content); err != nil {
			return "", fmt.Errorf("creating VolumeSnapshotContent %s: %w", content.Name, err)
		}
		noted.created = append(noted.created, fmt.Sprintf("VolumeSnapshotContent %s (Retain, the handle of %s/%s)", content.Name, backup.Namespace, member.VolumeSnapshotName))
	case err != nil:
		return "", fmt.Errorf("reading VolumeSnapshotContent %s: %w", content.Name, err)
	}
	snap := BuildSnapshotCopy(dc, member.Ordinal)
	current := &snapshotv1.VolumeSnapshot{}
	err = r.APIReader.Get(ctx, client.ObjectKeyFromObject(snap), current)
	switch {
	case err == nil && (!metav1.IsControlledBy(current, dc) || ptr.Deref(current.Spec.Source.VolumeSnapshotContentName, "") != content.Name):
		return "", refuse("VolumeSnapshot %s exists and is not this cluster's copy of snapshot %s/%s: it is left as it is; delete it or restore under another cluster name",
			snap.Name, backup.Namespace, member.VolumeSnapshotName)
	case apierrors.IsNotFound(err):
		if err := r.Create(ctx, snap); err != nil {
			return "", fmt.Errorf("creating VolumeSnapshot %s: %w", snap.Name, err)
		}
		noted.created = append(noted.created, "VolumeSnapshot "+snap.Name)
	case err != nil:
		return "", fmt.Errorf("reading VolumeSnapshot %s: %w", snap.Name, err)
	}
	return snap.Name, nil
}

// deleteSnapshotCopies deletes the snapshot copies of a restored clone whose claims are bound:
// the volumes hold the data now, and the copies' contents (Retain) would otherwise stay in the
// cluster-wide list for good. The content is deleted first (its finalizer holds it while the
// snapshot exists), then the snapshot, so that a copy seen in the cache always leads to both.
// Only copies the cluster controls are looked at; the cache holds them (managed-by label).
func (r *Reconciler) deleteSnapshotCopies(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, noted *changes) error {
	var copies snapshotv1.VolumeSnapshotList
	err := r.List(ctx, &copies, client.InNamespace(dc.Namespace), client.MatchingLabels(dc.RestoreCopyLabels()))
	if meta.IsNoMatchError(err) {
		return nil // no snapshot API any more: no copy can exist
	}
	if err != nil {
		return fmt.Errorf("listing the snapshot copies: %w", err)
	}
	for i := range copies.Items {
		snap := &copies.Items[i]
		ordinal, ok := copyOrdinal(dc, snap)
		if !ok || snap.DeletionTimestamp != nil {
			continue
		}
		claim := &corev1.PersistentVolumeClaim{}
		if err := r.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: dc.ClaimName(ordinal)}, claim); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("reading claim %s: %w", dc.ClaimName(ordinal), err)
		}
		if claim.Status.Phase != corev1.ClaimBound {
			continue // the claim change queues the cluster again
		}
		content := &snapshotv1.VolumeSnapshotContent{}
		err := r.APIReader.Get(ctx, client.ObjectKey{Name: dc.RestoreContentName(ordinal)}, content)
		if client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("reading VolumeSnapshotContent %s: %w", dc.RestoreContentName(ordinal), err)
		}
		if err == nil && content.DeletionTimestamp == nil && isContentCopyOf(content, dc, ordinal) {
			if err := r.Delete(ctx, content, client.Preconditions{UID: &content.UID}); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("deleting VolumeSnapshotContent %s: %w", content.Name, err)
			}
			noted.removed = append(noted.removed, "VolumeSnapshotContent "+content.Name)
		}
		if err := r.Delete(ctx, snap, client.Preconditions{UID: &snap.UID}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting VolumeSnapshot %s: %w", snap.Name, err)
		}
		noted.removed = append(noted.removed, "VolumeSnapshot "+snap.Name)
	}
	return nil
}

// copyOrdinal returns the member ordinal of a snapshot copy controlled by dc, or false for any
// other snapshot.
func copyOrdinal(dc *databasev1alpha1.DatabaseCluster, snap *snapshotv1.VolumeSnapshot) (int32, bool) {
	if !metav1.IsControlledBy(snap, dc) {
		return 0, false
	}
	suffix, ok := strings.CutPrefix(snap.Name, dc.RestoreCopyName(0)[:len(dc.RestoreCopyName(0))-1])
	n, err := strconv.ParseInt(suffix, 10, 32)
	if !ok || err != nil || dc.RestoreCopyName(int32(n)) != snap.Name {
		return 0, false
	}
	return int32(n), true
}
