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

package databasebackup

import (
	"context"
	"errors"
	"fmt"
	"time"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
)

// snapshotKind is the kind a backup creates, to ask the API server whether it serves it.
var snapshotKind = schema.GroupKind{Group: snapshotv1.GroupName, Kind: "VolumeSnapshot"}

// noSnapshotAPI is the Failed message of a cluster without the snapshot API.
const noSnapshotAPI = "the cluster has no VolumeSnapshot API (snapshot.storage.k8s.io/v1): install the CSI snapshot CRDs and snapshot-controller"

// snapshotAPIServed asks the API server (through the manager's REST mapper) whether it serves
// snapshot.storage.k8s.io/v1 VolumeSnapshots.
func snapshotAPIServed(mapper meta.RESTMapper) (bool, error) {
	_, err := mapper.RESTMapping(snapshotKind, snapshotv1.SchemeGroupVersion.Version)
	if meta.IsNoMatchError(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("looking up the VolumeSnapshot API: %w", err)
	}
	return true, nil
}

// observe runs the steps of a backup that has not finished, each only once the one before is
// done, and returns what they saw: the cluster, the snapshot API, the class, the cluster
// stopped (Offline), the snapshots created together. Once the snapshots exist, only they are
// read: the backup no longer depends on the cluster.
func (r *Reconciler) observe(ctx context.Context, b *databasev1alpha1.DatabaseBackup) observation {
	cluster, err := r.readCluster(ctx, b)
	if err != nil {
		return observation{err: err}
	}
	obs := observation{holding: cluster != nil && cluster.OfflineBackup() == b.Name}
	if len(b.Status.Members) > 0 {
		obs.snapshots, obs.err = r.readSnapshots(ctx, b)
		return obs
	}
	if cluster == nil {
		return r.clusterMissing(b, obs)
	}
	if !r.resolve(ctx, b, cluster, &obs) {
		return obs
	}
	obs.replicas, obs.storageSize = ptr.Deref(cluster.Spec.Replicas, 0), cluster.Spec.Storage.Size
	if obs.waiting, obs.err = r.unboundClaim(ctx, cluster, obs.replicas); obs.waiting != "" || obs.err != nil {
		return obs
	}
	if b.BackupMethod() == databasev1alpha1.BackupOffline {
		if done := r.stopCluster(ctx, b, cluster, &obs); !done {
			return obs
		}
	}
	obs.snapshots, obs.err = r.createSnapshots(ctx, b, cluster, obs.class, obs.replicas)
	if message, ok := child.Conflict(obs.err); ok {
		return obs.fail(databasev1alpha1.ReasonSnapshotFailed, message)
	}
	if apierrors.IsInvalid(obs.err) {
		return obs.fail(databasev1alpha1.ReasonSnapshotFailed, obs.err.Error())
	}
	return obs
}

// readCluster reads the backup's cluster, nil when it does not exist. A cluster the cache does
// not hold yet (created a moment before the backup) is asked of the API server.
func (r *Reconciler) readCluster(ctx context.Context, b *databasev1alpha1.DatabaseBackup) (*databasev1alpha1.DatabaseCluster, error) {
	cluster := &databasev1alpha1.DatabaseCluster{}
	key := client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.ClusterName}
	err := r.Get(ctx, key, cluster)
	if apierrors.IsNotFound(err) {
		err = r.APIReader.Get(ctx, key, cluster)
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading DatabaseCluster %s: %w", b.Spec.ClusterName, err)
	}
	return cluster, nil
}

// clusterMissing fails a backup whose cluster does not exist, once the backup is older than
// the cluster wait: "kubectl apply -f" of a folder creates a backup before the cluster it
// copies when its file sorts first, as config/samples/ does.
func (r *Reconciler) clusterMissing(b *databasev1alpha1.DatabaseBackup, obs observation) observation {
	message := fmt.Sprintf("DatabaseCluster %s not found in namespace %s", b.Spec.ClusterName, b.Namespace)
	wait := r.clusterWait()
	if left := wait - time.Since(b.CreationTimestamp.Time); left > 0 {
		obs.retryAfter = left
		obs.waiting = fmt.Sprintf("%s yet: the backup fails if it does not exist %s after the backup was created", message, wait)
		obs.waitReason = databasev1alpha1.ReasonWaitingForCluster
		return obs
	}
	return obs.fail(databasev1alpha1.ReasonClusterNotFound, message)
}

// clusterWait is ClusterWait or DefaultClusterWait.
func (r *Reconciler) clusterWait() time.Duration {
	if r.ClusterWait > 0 {
		return r.ClusterWait
	}
	return DefaultClusterWait
}

// unboundClaim says which member claim is not there or not Bound yet, "" when every one is: a
// snapshot of a claim that is not bound copies nothing.
func (r *Reconciler) unboundClaim(ctx context.Context, cluster *databasev1alpha1.DatabaseCluster, replicas int32) (string, error) {
	for ordinal := range replicas {
		claim := &corev1.PersistentVolumeClaim{}
		key := client.ObjectKey{Namespace: cluster.Namespace, Name: cluster.ClaimName(ordinal)}
		err := r.Get(ctx, key, claim)
		if apierrors.IsNotFound(err) {
			// A claim without the operator's labels (made by hand or restored) is not cached.
			err = r.APIReader.Get(ctx, key, claim)
		}
		if apierrors.IsNotFound(err) {
			return fmt.Sprintf("waiting for claim %s of cluster %s to exist", key.Name, cluster.Name), nil
		}
		if err != nil {
			return "", fmt.Errorf("reading claim %s: %w", key.Name, err)
		}
		if claim.Status.Phase != corev1.ClaimBound {
			return fmt.Sprintf("waiting for claim %s of cluster %s to be Bound", key.Name, cluster.Name), nil
		}
	}
	return "", nil
}

// resolve checks that the snapshot API is served and resolves the class of the snapshots; it
// reports whether the backup can go on.
func (r *Reconciler) resolve(ctx context.Context, b *databasev1alpha1.DatabaseBackup,
	cluster *databasev1alpha1.DatabaseCluster, obs *observation,
) bool {
	served, err := snapshotAPIServed(r.RESTMapper())
	if err != nil {
		obs.err = err
		return false
	}
	if !served {
		obs.fail(databasev1alpha1.ReasonNoSnapshotAPI, noSnapshotAPI)
		return false
	}
	class, err := r.resolveClass(ctx, b, cluster)
	var noClass noClassError
	switch {
	case errors.As(err, &noClass):
		obs.fail(databasev1alpha1.ReasonNoSnapshotClass, err.Error())
		return false
	case err != nil:
		obs.err = err
		return false
	}
	obs.class = class
	return true
}

// stopCluster is the Offline step: it takes the cluster (the annotation that stops it) once it
// is Available and no other backup holds it, and reports whether every member has stopped.
func (r *Reconciler) stopCluster(ctx context.Context, b *databasev1alpha1.DatabaseBackup,
	cluster *databasev1alpha1.DatabaseCluster, obs *observation,
) bool {
	if !obs.holding {
		if cluster, obs.err = r.confirmCluster(ctx, cluster); obs.err != nil {
			return false
		}
		if other := cluster.OfflineBackup(); other != "" {
			obs.fail(databasev1alpha1.ReasonClusterBusy, fmt.Sprintf(
				"cluster %s is stopped for offline backup %s: retry when that backup is done, or use method Online", cluster.Name, other))
			return false
		}
		if !meta.IsStatusConditionTrue(cluster.Status.Conditions, databasev1alpha1.ConditionAvailable) {
			obs.fail(databasev1alpha1.ReasonClusterNotAvailable, fmt.Sprintf(
				"cluster %s is not Available: an Offline backup needs every member Ready; retry when it is, or use method Online", cluster.Name))
			return false
		}
		if obs.err = r.take(ctx, b, cluster); obs.err != nil {
			return false
		}
		obs.holding = true
	}
	obs.running, obs.err = r.runningMembers(ctx, cluster)
	return obs.err == nil && obs.running == 0
}

// confirmCluster reads the cluster from the API server before an Offline backup takes it or
// fails for good: the cache may still hold the status of a moment ago (a rollout that has just
// ended, a backup that has just released the cluster). Once per Offline backup.
func (r *Reconciler) confirmCluster(ctx context.Context, cluster *databasev1alpha1.DatabaseCluster) (*databasev1alpha1.DatabaseCluster, error) {
	fresh := &databasev1alpha1.DatabaseCluster{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(cluster), fresh); err != nil {
		return nil, fmt.Errorf("reading DatabaseCluster %s: %w", cluster.Name, err)
	}
	return fresh, nil
}

// take sets the annotation that stops the cluster. The patch carries the cluster's
// resourceVersion: of two Offline backups of one cluster, only one takes it.
func (r *Reconciler) take(ctx context.Context, b *databasev1alpha1.DatabaseBackup, cluster *databasev1alpha1.DatabaseCluster) error {
	original := cluster.DeepCopy()
	if cluster.Annotations == nil {
		cluster.Annotations = map[string]string{}
	}
	cluster.Annotations[databasev1alpha1.OfflineBackupAnnotation] = b.Name
	if err := r.Patch(ctx, cluster, client.MergeFromWithOptions(original, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("stopping DatabaseCluster %s for the backup: %w", cluster.Name, err)
	}
	logf.FromContext(ctx).Info("Stopped the cluster for the Offline backup", "cluster", cluster.Name)
	return nil
}

// release removes the annotation that holds the cluster stopped, if it names this backup: the
// cluster runs its replicas again. A cluster that is gone or held by another backup is left.
func (r *Reconciler) release(ctx context.Context, b *databasev1alpha1.DatabaseBackup) error {
	cluster := &databasev1alpha1.DatabaseCluster{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.ClusterName}, cluster); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("reading DatabaseCluster %s: %w", b.Spec.ClusterName, err))
	}
	if cluster.OfflineBackup() != b.Name {
		return nil
	}
	original := cluster.DeepCopy()
	delete(cluster.Annotations, databasev1alpha1.OfflineBackupAnnotation)
	if err := r.Patch(ctx, cluster, client.MergeFromWithOptions(original, client.MergeFromWithOptimisticLock{})); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("starting DatabaseCluster %s again: %w", cluster.Name, err))
	}
	logf.FromContext(ctx).Info("Started the cluster again after the Offline backup", "cluster", cluster.Name)
	return nil
}

// runningMembers counts the member pods of the cluster that still run or are wanted: the
// StatefulSet's replicas (wanted and reported) and the pods that exist, terminating ones too.
func (r *Reconciler) runningMembers(ctx context.Context, cluster *databasev1alpha1.DatabaseCluster) (int32, error) {
	var running int32
	sts := &appsv1.StatefulSet{}
	err := r.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: cluster.StatefulSetName()}, sts)
	if client.IgnoreNotFound(err) != nil {
		return 0, fmt.Errorf("reading StatefulSet %s: %w", cluster.StatefulSetName(), err)
	}
	if err == nil {
		running = max(ptr.Deref(sts.Spec.Replicas, 1), sts.Status.Replicas)
	}
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(cluster.Namespace), client.MatchingLabels(cluster.SelectorLabels())); err != nil {
		return 0, fmt.Errorf("listing the pods of cluster %s: %w", cluster.Name, err)
	}
	return max(running, int32(len(pods.Items))), nil
}

// noClassError is a class that cannot be found or chosen: the backup fails with its message.
type noClassError struct{ error }

// resolveClass is the VolumeSnapshotClass of the snapshots: the one chosen before, the one the
// spec names, or the default of the driver that provisions the cluster's StorageClass.
func (r *Reconciler) resolveClass(ctx context.Context, b *databasev1alpha1.DatabaseBackup, cluster *databasev1alpha1.DatabaseCluster) (string, error) {
	if b.Status.VolumeSnapshotClassName != "" {
		return b.Status.VolumeSnapshotClassName, nil
	}
	if name := b.Spec.VolumeSnapshotClassName; name != "" {
		err := r.APIReader.Get(ctx, client.ObjectKey{Name: name}, &snapshotv1.VolumeSnapshotClass{})
		if apierrors.IsNotFound(err) {
			return "", noClassError{fmt.Errorf("VolumeSnapshotClass %s not found: create it, or name another class in a new DatabaseBackup", name)}
		}
		if err != nil {
			return "", fmt.Errorf("reading VolumeSnapshotClass %s: %w", name, err)
		}
		return name, nil
	}
	storageClass := &storagev1.StorageClass{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Name: cluster.Spec.Storage.StorageClassName}, storageClass)
	if apierrors.IsNotFound(err) {
		return "", noClassError{fmt.Errorf("StorageClass %s of cluster %s not found: the default VolumeSnapshotClass is the one of its provisioner; name a class in spec.volumeSnapshotClassName",
			cluster.Spec.Storage.StorageClassName, cluster.Name)}
	}
	if err != nil {
		return "", fmt.Errorf("reading StorageClass %s: %w", cluster.Spec.Storage.StorageClassName, err)
	}
	var classes snapshotv1.VolumeSnapshotClassList
	if err := r.APIReader.List(ctx, &classes); err != nil {
		return "", fmt.Errorf("listing the VolumeSnapshotClasses: %w", err)
	}
	name, err := DefaultClass(classes.Items, storageClass.Provisioner)
	if err != nil {
		return "", noClassError{err}
	}
	return name, nil
}

// createSnapshots creates the snapshots of the members 0..replicas-1 together, in one pass,
// through the one write path for children (a snapshot that exists and is the backup's is taken
// as it is), and returns them by ordinal.
func (r *Reconciler) createSnapshots(ctx context.Context, b *databasev1alpha1.DatabaseBackup,
	cluster *databasev1alpha1.DatabaseCluster, class string, replicas int32,
) ([]*snapshotv1.VolumeSnapshot, error) {
	snapshots := make([]*snapshotv1.VolumeSnapshot, replicas)
	for ordinal := range replicas {
		s, _, err := child.Ensure(ctx, r.Client, r.APIReader, BuildVolumeSnapshot(b, cluster, ordinal, class),
			&snapshotv1.VolumeSnapshot{}, snapshotSpec)
		if err != nil {
			return nil, err
		}
		snapshots[ordinal] = s
	}
	return snapshots, nil
}

// snapshotSpec: a VolumeSnapshot's spec is immutable, so only its labels and owner reference
// are ever patched (by child.Ensure).
var snapshotSpec = child.Spec[*snapshotv1.VolumeSnapshot]{
	InSync: func(_, _ *snapshotv1.VolumeSnapshot) bool { return true },
	Merge:  func(_, _ *snapshotv1.VolumeSnapshot) {},
}

// readSnapshots reads the snapshots the status lists, by ordinal; one that is gone is nil.
func (r *Reconciler) readSnapshots(ctx context.Context, b *databasev1alpha1.DatabaseBackup) ([]*snapshotv1.VolumeSnapshot, error) {
	snapshots := make([]*snapshotv1.VolumeSnapshot, len(b.Status.Members))
	for i, m := range b.Status.Members {
		s := &snapshotv1.VolumeSnapshot{}
		key := client.ObjectKey{Namespace: b.Namespace, Name: m.VolumeSnapshotName}
		err := r.Get(ctx, key, s)
		if apierrors.IsNotFound(err) {
			// The cache may not hold a snapshot created a moment ago: ask the API server.
			err = r.APIReader.Get(ctx, key, s)
		}
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading VolumeSnapshot %s: %w", m.VolumeSnapshotName, err)
		}
		snapshots[i] = s
	}
	return snapshots, nil
}
