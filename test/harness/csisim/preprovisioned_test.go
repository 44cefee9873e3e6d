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

//go:build e2e

package csisim_test

import (
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/seed1b407122/database-operator/test/harness/csisim"
)

// testPreprovisioned: a pre-provisioned content on the handle of a snapshot the driver cut
// (what a cross-namespace restore copies) is made ready with the snapshot's restore size, one on
// an unknown handle reports the error, and a claim restores from a VolumeSnapshot bound to the
// ready copy, its volume naming the copy and the original handle.
func testPreprovisioned(t *testing.T, e *env) {
	g := NewWithT(t)
	ctx := t.Context()
	contents := e.snaps.SnapshotV1().VolumeSnapshotContents()
	source, err := contents.Create(ctx, newContent("content-original", csisim.ProvisionerName, sourceVolume, "original", "uid-original"), metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	var original *snapv1.VolumeSnapshotContentStatus
	g.Eventually(func(g Gomega) {
		c, err := contents.Get(ctx, source.Name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(c.Status).NotTo(BeNil())
		g.Expect(c.Status.ReadyToUse).To(HaveValue(BeTrue()))
		original = c.Status
	}).WithTimeout(30 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
	handle := *original.SnapshotHandle

	preprovisioned := func(name, handle, snapshot string) *snapv1.VolumeSnapshotContent {
		return &snapv1.VolumeSnapshotContent{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: snapv1.VolumeSnapshotContentSpec{
				VolumeSnapshotRef: corev1.ObjectReference{Namespace: namespace, Name: snapshot},
				DeletionPolicy:    snapv1.VolumeSnapshotContentRetain,
				Driver:            csisim.ProvisionerName,
				Source:            snapv1.VolumeSnapshotContentSource{SnapshotHandle: ptr.To(handle)},
			},
		}
	}
	_, err = contents.Create(ctx, preprovisioned("content-copy", handle, "copy"), metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = contents.Create(ctx, preprovisioned("content-unknown", "snap-unknown", "unknown"), metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	var copied *snapv1.VolumeSnapshotContent
	g.Eventually(func(g Gomega) {
		copied, err = contents.Get(ctx, "content-copy", metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(copied.Status).To(Equal(&snapv1.VolumeSnapshotContentStatus{
			SnapshotHandle: ptr.To(handle), ReadyToUse: ptr.To(true),
			RestoreSize: ptr.To(int64(3 << 30)), CreationTime: original.CreationTime,
		}))
		unknown, err := contents.Get(ctx, "content-unknown", metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		expectContentFailed(g, unknown,
			"Failed to check and update snapshot content: snapshot snap-unknown of driver simulated-csi.localcluster.test not found")
	}).WithTimeout(30 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())

	// The snapshot-controller's part: bind the copy to its VolumeSnapshot, then the snapshot's
	// status from the content's.
	snap := createSnapshot(ctx, t, e, "copy", snapv1.VolumeSnapshotSource{VolumeSnapshotContentName: ptr.To("content-copy")})
	copied.Spec.VolumeSnapshotRef.UID = snap.UID
	_, err = contents.Update(ctx, copied, metav1.UpdateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	markSnapshotReady(ctx, t, e, snap, "content-copy")

	claim, err := e.kube.CoreV1().PersistentVolumeClaims(namespace).Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "restore-copy",
			Annotations: map[string]string{"volume.kubernetes.io/selected-node": "node-0"}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: ptr.To(csisim.StorageClassName),
			DataSourceRef:    &corev1.TypedObjectReference{APIGroup: ptr.To(snapv1.GroupName), Kind: "VolumeSnapshot", Name: "copy"},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func(g Gomega) {
		pv, err := e.kube.CoreV1().PersistentVolumes().Get(ctx, "pvc-"+string(claim.UID), metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		got := pv.Spec.Capacity[corev1.ResourceStorage]
		g.Expect(got.Cmp(resource.MustParse("3Gi"))).To(BeZero(), "capacity %s: the restore size", got.String())
		g.Expect(pv.Annotations).To(HaveKeyWithValue(csisim.AnnRestoredFromSnapshot, namespace+"/copy"))
		g.Expect(pv.Annotations).To(HaveKeyWithValue(csisim.AnnRestoredFromSnapshotHandle, handle), "the original snapshot's handle")
	}).WithTimeout(30 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
}
