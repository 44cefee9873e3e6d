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
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
)

// readyPreprovisioned plays the sidecar for a pre-provisioned VolumeSnapshotContent (one whose
// spec.source.snapshotHandle names a snapshot that exists already, e.g. a copy of another
// namespace's snapshot): the snapshot-controller leaves it to the sidecar, which asks the driver
// for the snapshot (ListSnapshots by id) and writes readyToUse, restoreSize and the handle into
// the content's status. Here the handle exists when a content of the driver holds it in its
// status with a restore size; an unknown handle is reported in the status error, once.
func (p *provisioner) readyPreprovisioned(ctx context.Context, content *snapv1.VolumeSnapshotContent) error {
	if content.Status != nil && content.Status.Error != nil {
		return nil
	}
	all, err := p.snap.contents.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("listing the snapshot contents: %w", err)
	}
	content = content.DeepCopy()
	content.Status = BuildPreprovisionedStatus(*content.Spec.Source.SnapshotHandle, all, time.Now())
	if _, err := p.snap.client.SnapshotV1().VolumeSnapshotContents().UpdateStatus(ctx, content, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("reporting the pre-provisioned snapshot of content %s: %w", content.Name, err)
	}
	return nil
}

// BuildPreprovisionedStatus is the status of a pre-provisioned content of the driver on the
// snapshot handle: ready with the restore size of the snapshot as a content of the driver
// reports it (the one that cut it, or another ready copy), or an error when no content of the
// driver knows the handle.
func BuildPreprovisionedStatus(handle string, contents []*snapv1.VolumeSnapshotContent, now time.Time) *snapv1.VolumeSnapshotContentStatus {
	for _, c := range contents {
		if c.Spec.Driver != ProvisionerName || c.Status == nil || ptr.Deref(c.Status.SnapshotHandle, "") != handle ||
			c.Status.RestoreSize == nil || !ptr.Deref(c.Status.ReadyToUse, false) {
			continue
		}
		return &snapv1.VolumeSnapshotContentStatus{
			SnapshotHandle: ptr.To(handle),
			CreationTime:   ptr.To(ptr.Deref(c.Status.CreationTime, now.UnixNano())),
			RestoreSize:    ptr.To(*c.Status.RestoreSize),
			ReadyToUse:     ptr.To(true),
		}
	}
	return &snapv1.VolumeSnapshotContentStatus{ReadyToUse: ptr.To(false), Error: &snapv1.VolumeSnapshotError{
		Time:    ptr.To(metav1.NewTime(now)),
		Message: ptr.To(fmt.Sprintf("Failed to check and update snapshot content: snapshot %s of driver %s not found", handle, ProvisionerName)),
	}}
}
