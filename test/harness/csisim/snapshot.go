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

package csisim

import (
	"context"
	"fmt"
	"slices"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	snapclient "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned"
	snaplisters "github.com/kubernetes-csi/external-snapshotter/client/v8/listers/volumesnapshot/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

const (
	// SnapshotClassName is the cluster's default VolumeSnapshotClass, of the simulated driver,
	// deletion policy Delete.
	SnapshotClassName = "standard-snapshots"
	// AnnRestoredFromSnapshot is set on a volume provisioned from a VolumeSnapshot and names it
	// as "<namespace>/<name>".
	AnnRestoredFromSnapshot = ProvisionerName + "/restored-from-snapshot"
	// AnnRestoredFromSnapshotHandle is set on a volume provisioned from a VolumeSnapshot and
	// holds the snapshot handle (the VolumeSnapshotContent's status.snapshotHandle) it was
	// restored from.
	AnnRestoredFromSnapshotHandle = ProvisionerName + "/restored-from-snapshot-handle"
	// SnapshotHandlePrefix starts every snapshot handle: "snap-<content UID>".
	SnapshotHandlePrefix = "snap-"
)

// BuildSnapshotClass returns the default VolumeSnapshotClass of the simulated driver.
func BuildSnapshotClass() *snapv1.VolumeSnapshotClass {
	return &snapv1.VolumeSnapshotClass{
		ObjectMeta:     defaultClassMeta(SnapshotClassName, annDefaultSnapshotClass),
		Driver:         ProvisionerName,
		DeletionPolicy: snapv1.VolumeSnapshotContentDelete,
	}
}

// snapshotter is the snapshot part of the simulated driver: it plays the external-snapshotter
// sidecar and the driver's CreateSnapshot and DeleteSnapshot calls for every
// VolumeSnapshotContent of the driver, and gives the provisioner the snapshot a claim restores.
// Nothing is stored: a snapshot is its handle and the size of its source volume.
type snapshotter struct {
	client    snapclient.Interface
	snapshots snaplisters.VolumeSnapshotLister
	contents  snaplisters.VolumeSnapshotContentLister
}

// snapshotHandler queues the pending claims of the driver that restore a snapshot whenever that
// snapshot changes, so a claim waiting for a missing or unready snapshot is provisioned as soon
// as the snapshot-controller reports it ready.
func (p *provisioner) snapshotHandler() cache.ResourceEventHandler {
	enqueue := func(obj any) {
		snap, ok := obj.(*snapv1.VolumeSnapshot)
		if !ok {
			return
		}
		claims, err := p.claims.PersistentVolumeClaims(snap.Namespace).List(labels.Everything())
		if err != nil {
			return
		}
		for _, claim := range claims {
			if ref := snapshotDataSource(claim); ref != nil && ref.Name == snap.Name && claim.Spec.VolumeName == "" {
				p.queue.Add(claimKeyPrefix + claim.Namespace + "/" + claim.Name)
			}
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	}
}

// syncContent cuts the snapshot of a new VolumeSnapshotContent of the driver, readies a
// pre-provisioned one (preprovisioned.go), or deletes the snapshot and releases the content once
// the snapshot-controller deletes the content, as the sidecar does.
func (p *provisioner) syncContent(ctx context.Context, name string) error {
	if p.snap == nil {
		return nil
	}
	content, err := p.snap.contents.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the snapshot content: %w", err)
	}
	if content.Spec.Driver != ProvisionerName {
		return nil
	}
	if shouldDeleteSnapshot(content) {
		return p.deleteSnapshot(ctx, content)
	}
	if content.DeletionTimestamp != nil || (content.Status != nil && content.Status.SnapshotHandle != nil) {
		return nil
	}
	// A pre-provisioned content (source.snapshotHandle) names a snapshot that exists already.
	if content.Spec.Source.SnapshotHandle != nil {
		return p.readyPreprovisioned(ctx, content)
	}
	if content.Spec.Source.VolumeHandle == nil {
		return nil
	}
	return p.cutSnapshot(ctx, content)
}

// shouldDeleteSnapshot is the sidecar's shouldDelete (pkg/sidecar-controller): a content being
// deleted whose snapshot the snapshot-controller marked for deletion, or an unbound
// pre-provisioned one; never while a CreateSnapshot call is in flight.
func shouldDeleteSnapshot(content *snapv1.VolumeSnapshotContent) bool {
	if content.DeletionTimestamp == nil {
		return false
	}
	if content.Spec.Source.SnapshotHandle != nil && content.Spec.VolumeSnapshotRef.UID == "" {
		return true
	}
	if metav1.HasAnnotation(content.ObjectMeta, annBeingCreated) {
		return false
	}
	return metav1.HasAnnotation(content.ObjectMeta, annBeingDeleted)
}

// cutSnapshot is CreateSnapshot: the snapshot of the content's source volume is ready at once,
// its handle "snap-<content UID>", its restore size the volume's capacity. A source volume that
// is not the driver's is reported in the content's status error, as the sidecar reports a failed
// CreateSnapshot; the snapshot-controller copies it to the VolumeSnapshot.
func (p *provisioner) cutSnapshot(ctx context.Context, content *snapv1.VolumeSnapshotContent) error {
	content = content.DeepCopy()
	size, err := p.sourceSize(*content.Spec.Source.VolumeHandle)
	if err == nil {
		err = p.copyToSnapshot(*content.Spec.Source.VolumeHandle, content)
	}
	if err != nil {
		content.Status = &snapv1.VolumeSnapshotContentStatus{ReadyToUse: ptr.To(false), Error: &snapv1.VolumeSnapshotError{
			Time:    ptr.To(metav1.Now()),
			Message: ptr.To(fmt.Sprintf("Failed to create snapshot: failed to take snapshot of the volume %s: %v", *content.Spec.Source.VolumeHandle, err)),
		}}
	} else {
		content.Status = buildContentStatus(content, size, time.Now())
	}
	if _, err := p.snap.client.SnapshotV1().VolumeSnapshotContents().UpdateStatus(ctx, content, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("reporting the snapshot of content %s: %w", content.Name, err)
	}
	return nil
}

// buildContentStatus is the status the sidecar writes after a successful CreateSnapshot.
func buildContentStatus(content *snapv1.VolumeSnapshotContent, size int64, created time.Time) *snapv1.VolumeSnapshotContentStatus {
	return &snapv1.VolumeSnapshotContentStatus{
		SnapshotHandle: ptr.To(SnapshotHandlePrefix + string(content.UID)),
		CreationTime:   ptr.To(created.UnixNano()),
		RestoreSize:    ptr.To(size),
		ReadyToUse:     ptr.To(true),
	}
}

// sourceSize returns the capacity in bytes of the driver's volume with the given handle. The
// provisioner makes the handle the volume's name, so it is looked up by name and checked.
func (p *provisioner) sourceSize(volumeHandle string) (int64, error) {
	pv, err := p.volumes.Get(volumeHandle)
	if err != nil && !apierrors.IsNotFound(err) {
		return 0, fmt.Errorf("reading the volume: %w", err)
	}
	if err != nil || pv.Spec.CSI == nil || pv.Spec.CSI.Driver != ProvisionerName || pv.Spec.CSI.VolumeHandle != volumeHandle {
		return 0, fmt.Errorf("volume %s of driver %s not found", volumeHandle, ProvisionerName)
	}
	capacity := pv.Spec.Capacity[corev1.ResourceStorage]
	return capacity.Value(), nil
}

// deleteSnapshot is DeleteSnapshot followed by what the sidecar does next: the status loses the
// snapshot (for deletion policy Delete), then the content loses the finalizer that held it.
func (p *provisioner) deleteSnapshot(ctx context.Context, content *snapv1.VolumeSnapshotContent) error {
	contents := p.snap.client.SnapshotV1().VolumeSnapshotContents()
	content = content.DeepCopy()
	if content.Spec.DeletionPolicy == snapv1.VolumeSnapshotContentDelete && content.Status != nil && content.Status.SnapshotHandle != nil {
		if err := p.removeSnapshotCopy(*content.Status.SnapshotHandle); err != nil {
			return err
		}
		content.Status.SnapshotHandle, content.Status.ReadyToUse = nil, nil
		content.Status.CreationTime, content.Status.RestoreSize = nil, nil
		updated, err := contents.UpdateStatus(ctx, content, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("clearing the snapshot of content %s: %w", content.Name, err)
		}
		content = updated
	}
	if !slices.Contains(content.Finalizers, contentFinalizer) {
		return nil
	}
	content.Finalizers = slices.DeleteFunc(content.Finalizers, func(f string) bool { return f == contentFinalizer })
	if _, err := contents.Update(ctx, content, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("removing the finalizer of content %s: %w", content.Name, err)
	}
	return nil
}

// restoreSource is the snapshot a claim is provisioned from.
type restoreSource struct {
	namespace, name string
	handle          string
	size            resource.Quantity
}

// annotate names the snapshot on the volume restored from it.
func (s *restoreSource) annotate(pv *corev1.PersistentVolume) {
	pv.Annotations[AnnRestoredFromSnapshot] = s.namespace + "/" + s.name
	pv.Annotations[AnnRestoredFromSnapshotHandle] = s.handle
}

// snapshotDataSource returns the claim's data source when it is a VolumeSnapshot:
// dataSourceRef, else dataSource (the API server fills one from the other).
func snapshotDataSource(claim *corev1.PersistentVolumeClaim) *corev1.TypedObjectReference {
	ref := claim.Spec.DataSourceRef
	if ref == nil && claim.Spec.DataSource != nil {
		ds := claim.Spec.DataSource
		ref = &corev1.TypedObjectReference{APIGroup: ds.APIGroup, Kind: ds.Kind, Name: ds.Name}
	}
	if ref == nil || ptr.Deref(ref.APIGroup, "") != snapv1.GroupName || ref.Kind != "VolumeSnapshot" {
		return nil
	}
	return ref
}

// restoreSource returns the ready snapshot of the driver that the claim names, or nil and why it
// cannot be restored yet, in the words of the external-provisioner.
func (p *provisioner) restoreSource(claim *corev1.PersistentVolumeClaim, ref *corev1.TypedObjectReference) (*restoreSource, string) {
	prefix := fmt.Sprintf("error getting handle for DataSource Type VolumeSnapshot by Name %s: ", ref.Name)
	if p.snap == nil {
		return nil, prefix + "the simulated CSI driver runs without snapshot support (no VolumeSnapshot CRDs)"
	}
	if ns := ptr.Deref(ref.Namespace, claim.Namespace); ns != claim.Namespace {
		return nil, prefix + fmt.Sprintf("cross-namespace data sources (namespace %s) are not supported", ns)
	}
	snap, err := p.snap.snapshots.VolumeSnapshots(claim.Namespace).Get(ref.Name)
	if err != nil {
		return nil, prefix + fmt.Sprintf("error getting snapshot %s from api server: %v", ref.Name, err)
	}
	if snap.Status == nil || !ptr.Deref(snap.Status.ReadyToUse, false) || snap.Status.BoundVolumeSnapshotContentName == nil {
		return nil, prefix + fmt.Sprintf("snapshot %s is not Ready", ref.Name)
	}
	content, err := p.snap.contents.Get(*snap.Status.BoundVolumeSnapshotContentName)
	if err != nil {
		return nil, prefix + fmt.Sprintf("error getting snapshot content %s: %v", *snap.Status.BoundVolumeSnapshotContentName, err)
	}
	if content.Spec.Driver != ProvisionerName {
		return nil, prefix + fmt.Sprintf("snapshot %s is of driver %s, not %s", ref.Name, content.Spec.Driver, ProvisionerName)
	}
	if content.Status == nil || content.Status.SnapshotHandle == nil || content.Spec.VolumeSnapshotRef.UID != snap.UID {
		return nil, prefix + fmt.Sprintf("snapshot %s is not Ready", ref.Name)
	}
	source := &restoreSource{namespace: snap.Namespace, name: snap.Name, handle: *content.Status.SnapshotHandle}
	if snap.Status.RestoreSize != nil {
		source.size = *snap.Status.RestoreSize
	}
	return source, ""
}
