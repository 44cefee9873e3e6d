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
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
)

// EventRestored is the reason of the event that tells a cluster's claims were restored.
const EventRestored = "Restored"

// restoreRecheck is how often a refused restore is tried again.
const restoreRecheck = 10 * time.Second

// RestoreRefusedError says why spec.bootstrap.fromBackup cannot be restored (yet). Nothing is
// created until it can: Degraded says what to do, and the restore is retried.
type RestoreRefusedError struct{ Reason string }

func (e *RestoreRefusedError) Error() string { return "restore refused: " + e.Reason }

// IsRestoreRefused reports whether err is or wraps a *RestoreRefusedError.
func IsRestoreRefused(err error) bool {
	var refused *RestoreRefusedError
	return errors.As(err, &refused)
}

func refuse(format string, args ...any) error {
	return &RestoreRefusedError{Reason: fmt.Sprintf(format, args...)}
}

// CheckRestore says whether backup can bootstrap dc: not being deleted, Completed, from a
// cluster of at most spec.replicas members, no snapshot larger than spec.storage.size.
func CheckRestore(dc *databasev1alpha1.DatabaseCluster, backup *databasev1alpha1.DatabaseBackup) error {
	if backup.DeletionTimestamp != nil {
		return refuse("DatabaseBackup %s is being deleted, and its snapshots with it: name another backup", backup.Name)
	}
	if backup.Status.Phase != databasev1alpha1.BackupCompleted {
		return refuse("DatabaseBackup %s is %q, not Completed: a restore needs every snapshot ready to use; wait for it or name another backup",
			backup.Name, backup.Status.Phase)
	}
	if backup.Status.ClusterReplicas > *dc.Spec.Replicas {
		return refuse("DatabaseBackup %s holds %d members and spec.replicas is %d: restore into at least %d replicas",
			backup.Name, backup.Status.ClusterReplicas, *dc.Spec.Replicas, backup.Status.ClusterReplicas)
	}
	size, err := resource.ParseQuantity(dc.Spec.Storage.Size)
	if err != nil {
		return refuse("spec.storage.size %q is not a quantity", dc.Spec.Storage.Size)
	}
	for _, m := range backup.Status.Members {
		if m.RestoreSize != nil && m.RestoreSize.Cmp(size) > 0 {
			return refuse("the snapshot %s of member %d needs %s and spec.storage.size is %s: ask for at least %s",
				m.VolumeSnapshotName, m.Ordinal, m.RestoreSize.String(), dc.Spec.Storage.Size, m.RestoreSize.String())
		}
	}
	if len(backup.Status.Members) != int(backup.Status.ClusterReplicas) {
		return refuse("DatabaseBackup %s lists %d snapshots for %d members", backup.Name, len(backup.Status.Members), backup.Status.ClusterReplicas)
	}
	return nil
}

// restoredFrom reports whether claim was created from the snapshot named snapshot.
func restoredFrom(claim *corev1.PersistentVolumeClaim, snapshot string) bool {
	ref := claim.Spec.DataSourceRef
	return ref != nil && ptr.Deref(ref.APIGroup, "") == specs.SnapshotGroup && ref.Kind == specs.SnapshotKind && ref.Name == snapshot
}

// reconcileRestore creates the member claims of a cluster bootstrapped from a backup, each from
// its member's snapshot, before the StatefulSet exists (the StatefulSet then uses them, as it
// uses any claim of its template's name). Once the StatefulSet exists the bootstrap is done. A
// claim of a member's name that exists with other data is never used or touched: the restore is
// refused until it is gone. A backup of another namespace is restored only when it lists the
// cluster's namespace in spec.restoreAllowedNamespaces, through copies of its snapshots
// (restorecopy.go), which are deleted once the claims are bound.
func (r *Reconciler) reconcileRestore(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, noted *changes) error {
	if dc.Spec.Bootstrap == nil {
		return nil
	}
	namespace, name, otherNamespace := dc.RestoreSource()
	if dc.Status.RestoredFromBackup != "" {
		if otherNamespace {
			return r.deleteSnapshotCopies(ctx, dc, noted)
		}
		return nil
	}
	sts, err := r.cachedStatefulSet(ctx, dc)
	if err != nil {
		return err
	}
	if sts != nil {
		// This phase runs before the StatefulSet is created: it exists, so the claims were
		// restored (a status write was lost since).
		dc.Status.RestoredFromBackup = dc.RestoredFromValue()
		return nil
	}
	backup, err := r.readBackup(ctx, dc, namespace, name)
	if err != nil {
		return err
	}
	if err := CheckRestoreAllowed(dc, backup); err != nil {
		return err
	}
	if err := CheckRestore(dc, backup); err != nil {
		return err
	}
	for _, member := range backup.Status.Members {
		snapshot := member.VolumeSnapshotName
		if otherNamespace {
			if snapshot, err = r.copySnapshot(ctx, dc, backup, member, noted); err != nil {
				return err
			}
		}
		if err := r.restoreClaim(ctx, dc, member.Ordinal, snapshot, noted); err != nil {
			return err
		}
	}
	dc.Status.RestoredFromBackup = dc.RestoredFromValue()
	noted.restored = dc.RestoredFromValue()
	return nil
}

// readBackup reads the DatabaseBackup spec.bootstrap.fromBackup names. One of another namespace
// is read from the API server: the cache may not hold that namespace.
func (r *Reconciler) readBackup(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, namespace, name string) (*databasev1alpha1.DatabaseBackup, error) {
	backup := &databasev1alpha1.DatabaseBackup{}
	reader := client.Reader(r.Client)
	if namespace != dc.Namespace {
		reader = r.APIReader
	}
	err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, backup)
	switch {
	case apierrors.IsNotFound(err) && namespace == dc.Namespace:
		return nil, refuse("DatabaseBackup %s not found in namespace %s: create the cluster in the backup's namespace (or name it in spec.bootstrap.fromBackup.namespace), or restore the backup first", name, namespace)
	case apierrors.IsNotFound(err):
		// Said as a refusal would say it: a cluster of another namespace learns nothing of the
		// backups a namespace holds unless they allow it.
		return nil, notAllowed(name, namespace, dc.Namespace)
	case apierrors.IsForbidden(err):
		return nil, refuse("the operator may not read DatabaseBackups in namespace %s: install it for both namespaces (or all namespaces) to restore across them", namespace)
	case err != nil:
		return nil, fmt.Errorf("reading DatabaseBackup %s/%s: %w", namespace, name, err)
	}
	return backup, nil
}

// CheckRestoreAllowed says whether backup allows dc to restore it: always from the cluster's
// own namespace; from another only when the backup's spec.restoreAllowedNamespaces lists the
// cluster's namespace. The backup's side decides, as it is its data that is read.
func CheckRestoreAllowed(dc *databasev1alpha1.DatabaseCluster, backup *databasev1alpha1.DatabaseBackup) error {
	if backup.RestoreAllowed(dc.Namespace) {
		return nil
	}
	return notAllowed(backup.Name, backup.Namespace, dc.Namespace)
}

// notAllowed is the refusal of a restore of backup name of namespace into namespace into, said
// the same whether the backup is missing or does not list the namespace.
func notAllowed(name, namespace, into string) error {
	return refuse("DatabaseBackup %s in namespace %s does not exist or does not allow restores into namespace %s: add %s to spec.restoreAllowedNamespaces of DatabaseBackup %s in namespace %s",
		name, namespace, into, into, name, namespace)
}

// restoreClaim creates the claim of member ordinal from the VolumeSnapshot snapshot of the
// cluster's namespace, or checks that the existing one was created from it.
func (r *Reconciler) restoreClaim(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, ordinal int32, snapshot string, noted *changes) error {
	desired, err := specs.BuildRestoreClaim(dc, ordinal, snapshot)
	if err != nil {
		return refuse("%v", err)
	}
	existing := &corev1.PersistentVolumeClaim{}
	err = r.APIReader.Get(ctx, client.ObjectKeyFromObject(desired), existing)
	switch {
	case err == nil && restoredFrom(existing, snapshot):
		return nil
	case err == nil:
		return refuse("claim %s exists and was not restored from snapshot %s: it is left as it is; delete it (its data goes with it) or restore under another cluster name",
			existing.Name, snapshot)
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("reading claim %s: %w", desired.Name, err)
	}
	if err := r.Create(ctx, desired); err != nil {
		return fmt.Errorf("creating claim %s from snapshot %s: %w", desired.Name, snapshot, err)
	}
	noted.created = append(noted.created, "PersistentVolumeClaim "+desired.Name+" from VolumeSnapshot "+snapshot)
	return nil
}
