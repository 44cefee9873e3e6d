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
	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// withBootstrap bootstraps the cluster from backup name of namespace ("" for its own).
func withBootstrap(namespace, name string) clusterOption {
	return func(dc *databasev1alpha1.DatabaseCluster) {
		dc.Spec.Bootstrap = &databasev1alpha1.BootstrapSpec{FromBackup: databasev1alpha1.BackupSource{Name: name, Namespace: namespace}}
	}
}

// inNamespace moves the cluster to namespace.
func inNamespace(namespace string) clusterOption {
	return func(dc *databasev1alpha1.DatabaseCluster) { dc.Namespace = namespace }
}

// sourceSnapshot is member 1's snapshot of backup nightly in namespace team-a, ready, bound to
// content content-1, and that content bound back to it with handle snap-1.
func sourceSnapshot(b *databasev1alpha1.DatabaseBackup) (*snapshotv1.VolumeSnapshot, *snapshotv1.VolumeSnapshotContent) {
	snap := &snapshotv1.VolumeSnapshot{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly-1", Namespace: b.Namespace, UID: "uid-snap",
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(b, databasev1alpha1.GroupVersion.WithKind("DatabaseBackup"))}},
		Status: &snapshotv1.VolumeSnapshotStatus{BoundVolumeSnapshotContentName: ptr.To("content-1"), ReadyToUse: ptr.To(true)},
	}
	content := &snapshotv1.VolumeSnapshotContent{
		ObjectMeta: metav1.ObjectMeta{Name: "content-1"},
		Spec: snapshotv1.VolumeSnapshotContentSpec{
			Driver: "csi.example.com", DeletionPolicy: snapshotv1.VolumeSnapshotContentDelete,
			SourceVolumeMode:  ptr.To(corev1.PersistentVolumeFilesystem),
			Source:            snapshotv1.VolumeSnapshotContentSource{VolumeHandle: ptr.To("vol-1")},
			VolumeSnapshotRef: corev1.ObjectReference{Namespace: b.Namespace, Name: "nightly-1", UID: "uid-snap"},
		},
		Status: &snapshotv1.VolumeSnapshotContentStatus{SnapshotHandle: ptr.To("snap-1"), ReadyToUse: ptr.To(true)},
	}
	return snap, content
}

// backupIn is a Completed backup of 3 members in namespace, allowing restores into allowed.
func backupIn(namespace string, allowed ...string) *databasev1alpha1.DatabaseBackup {
	b := completedBackup(3, "1Gi")
	b.Namespace = namespace
	b.UID = "uid-backup"
	b.Spec.RestoreAllowedNamespaces = allowed
	return b
}

var _ = Describe("Restore from a backup of another namespace", Label("unit"), func() {
	DescribeTable("CheckRestoreAllowed: the backup's side decides",
		func(dc *databasev1alpha1.DatabaseCluster, b *databasev1alpha1.DatabaseBackup, want string) {
			expectRestoreVerdict(CheckRestoreAllowed(dc, b), want)
		},
		Entry("the cluster's own namespace, nothing listed", newCluster("db"), backupIn("default"), ""),
		Entry("another namespace, listed", newCluster("db", inNamespace("team-b")), backupIn("team-a", "team-c", "team-b"), ""),
		Entry("another namespace, not listed", newCluster("db", inNamespace("team-c")), backupIn("team-a", "team-b"),
			"DatabaseBackup nightly in namespace team-a does not exist or does not allow restores into namespace team-c: "+
				"add team-c to spec.restoreAllowedNamespaces of DatabaseBackup nightly in namespace team-a"),
		Entry("another namespace, none listed", newCluster("db", inNamespace("team-b")), backupIn("team-a"),
			"DatabaseBackup nightly in namespace team-a does not exist or does not allow restores into namespace team-b: "+
				"add team-b to spec.restoreAllowedNamespaces of DatabaseBackup nightly in namespace team-a"),
	)

	DescribeTable("RestoreSource and what status.restoredFromBackup says",
		func(dc *databasev1alpha1.DatabaseCluster, namespace, name string, other bool, restoredFrom string) {
			gotNamespace, gotName, gotOther := dc.RestoreSource()
			Expect([]any{gotNamespace, gotName, gotOther}).To(Equal([]any{namespace, name, other}))
			Expect(dc.RestoredFromValue()).To(Equal(restoredFrom))
		},
		Entry("no bootstrap", newCluster("db"), "", "", false, ""),
		Entry("a backup of the cluster's namespace", newCluster("db", withBootstrap("", "nightly")), "default", "nightly", false, "nightly"),
		Entry("the cluster's namespace named", newCluster("db", withBootstrap("default", "nightly")), "default", "nightly", false, "nightly"),
		Entry("another namespace", newCluster("db", inNamespace("team-b"), withBootstrap("team-a", "nightly")), "team-a", "nightly", true, "team-a/nightly"),
	)

	It("names the copies after the cluster: the snapshot in its namespace, the cluster-wide content by a hash of namespace, name and UID", func() {
		dc := newCluster("db", inNamespace("team-b"))
		Expect(dc.RestoreCopyName(2)).To(Equal("db-restore-2"))
		Expect(dc.RestoreContentName(2)).To(Equal("dbc-restore-564b005ba3be650b-2"))
		long := newCluster("a23456789012345678901234567890123456789012345678901b", inNamespace("n234567890123456789012345678901234567890123456789012345678901c"))
		Expect(long.RestoreContentName(8)).To(HaveLen(30), "bounded whatever the names")
		Expect(len(long.RestoreCopyName(8))).To(BeNumerically("<=", 63))
		other := newCluster("db", inNamespace("team-c"))
		Expect(other.RestoreContentName(2)).NotTo(Equal(dc.RestoreContentName(2)), "another namespace")
		reborn := dc.DeepCopy()
		reborn.UID = "uid-5678"
		Expect(reborn.RestoreContentName(2)).NotTo(Equal(dc.RestoreContentName(2)), "another life of the same name")
		Expect(dc.RestoreContentName(2)).To(Equal(dc.DeepCopy().RestoreContentName(2)), "deterministic")
	})

	It("builds the content copy: the source's driver and handle, Retain, pre-bound to the copy snapshot", func() {
		dc := newCluster("db", inNamespace("team-b"), withBootstrap("team-a", "nightly"))
		_, source := sourceSnapshot(backupIn("team-a", "team-b"))
		Expect(BuildSnapshotContentCopy(dc, 1, source)).To(Equal(&snapshotv1.VolumeSnapshotContent{
			ObjectMeta: metav1.ObjectMeta{
				Name: dc.RestoreContentName(1),
				Labels: map[string]string{
					"app.kubernetes.io/name": "database-restore", "app.kubernetes.io/instance": "db",
					"app.kubernetes.io/managed-by": "database-operator",
				},
				Annotations: map[string]string{"database.seed1b407122.io/restore-for": "team-b/db"},
			},
			Spec: snapshotv1.VolumeSnapshotContentSpec{
				DeletionPolicy:   snapshotv1.VolumeSnapshotContentRetain,
				Driver:           "csi.example.com",
				Source:           snapshotv1.VolumeSnapshotContentSource{SnapshotHandle: ptr.To("snap-1")},
				SourceVolumeMode: ptr.To(corev1.PersistentVolumeFilesystem),
				VolumeSnapshotRef: corev1.ObjectReference{
					APIVersion: "snapshot.storage.k8s.io/v1", Kind: "VolumeSnapshot", Namespace: "team-b", Name: "db-restore-1",
				},
			},
		}))
		snap := BuildSnapshotCopy(dc, 1)
		Expect(snap.Name).To(Equal("db-restore-1"))
		Expect(snap.Namespace).To(Equal("team-b"))
		Expect(snap.Labels).To(Equal(dc.RestoreCopyLabels()))
		Expect(metav1.IsControlledBy(snap, dc)).To(BeTrue())
		Expect(snap.Spec).To(Equal(snapshotv1.VolumeSnapshotSpec{
			Source: snapshotv1.VolumeSnapshotSource{VolumeSnapshotContentName: ptr.To(dc.RestoreContentName(1))},
		}), "no class: a pre-provisioned snapshot needs none")

		Expect(isContentCopyOf(BuildSnapshotContentCopy(dc, 1, source), dc, 1)).To(BeTrue())
		Expect(isContentCopyOf(BuildSnapshotContentCopy(dc, 1, source), dc, 2)).To(BeFalse(), "another member's")
		Expect(isContentCopyOf(source, dc, 1)).To(BeFalse(), "the source content")
		deleting := BuildSnapshotContentCopy(dc, 1, source)
		deleting.Spec.DeletionPolicy = snapshotv1.VolumeSnapshotContentDelete
		Expect(isContentCopyOf(deleting, dc, 1)).To(BeFalse(), "a copy never has policy Delete")
		foreign := BuildSnapshotContentCopy(dc, 1, source)
		foreign.Annotations = nil
		Expect(isContentCopyOf(foreign, dc, 1)).To(BeFalse(), "not annotated for the cluster")
		Expect(isContentCopyOf(BuildSnapshotContentCopy(dc, 1, source), newCluster("db", inNamespace("team-c")), 1)).To(BeFalse(), "another cluster's")
	})

	DescribeTable("CheckSnapshotSource: only a backup's own ready snapshot, bound both ways, with a handle",
		func(change func(*snapshotv1.VolumeSnapshot, *snapshotv1.VolumeSnapshotContent), want string) {
			b := backupIn("team-a", "team-b")
			snap, content := sourceSnapshot(b)
			change(snap, content)
			err := CheckSnapshotSource(b, snap, content)
			if want == "" {
				Expect(err).NotTo(HaveOccurred())
				return
			}
			Expect(IsRestoreRefused(err)).To(BeTrue())
			Expect(err).To(MatchError("restore refused: " + want))
		},
		Entry("ready and bound", func(*snapshotv1.VolumeSnapshot, *snapshotv1.VolumeSnapshotContent) {}, ""),
		Entry("not the backup's", func(s *snapshotv1.VolumeSnapshot, _ *snapshotv1.VolumeSnapshotContent) { s.OwnerReferences = nil },
			"VolumeSnapshot team-a/nightly-1 is not controlled by DatabaseBackup nightly: only a backup's own snapshots are restored"),
		Entry("not ready", func(s *snapshotv1.VolumeSnapshot, _ *snapshotv1.VolumeSnapshotContent) {
			s.Status.ReadyToUse = ptr.To(false)
		},
			"VolumeSnapshot team-a/nightly-1 is not ready to use: wait for it or name another backup"),
		Entry("no status", func(s *snapshotv1.VolumeSnapshot, _ *snapshotv1.VolumeSnapshotContent) { s.Status = nil },
			"VolumeSnapshot team-a/nightly-1 is not ready to use: wait for it or name another backup"),
		Entry("the content bound to another snapshot", func(_ *snapshotv1.VolumeSnapshot, c *snapshotv1.VolumeSnapshotContent) {
			c.Spec.VolumeSnapshotRef.UID = types.UID("uid-other")
		}, "VolumeSnapshotContent content-1 is not bound to VolumeSnapshot team-a/nightly-1"),
		Entry("the content missing (read as empty)", func(_ *snapshotv1.VolumeSnapshot, c *snapshotv1.VolumeSnapshotContent) {
			*c = snapshotv1.VolumeSnapshotContent{}
		}, "VolumeSnapshotContent  is not bound to VolumeSnapshot team-a/nightly-1"),
		Entry("no snapshot handle", func(_ *snapshotv1.VolumeSnapshot, c *snapshotv1.VolumeSnapshotContent) { c.Status.SnapshotHandle = nil },
			"VolumeSnapshotContent content-1 of VolumeSnapshot team-a/nightly-1 has no snapshot handle"),
		Entry("the snapshot being deleted", func(s *snapshotv1.VolumeSnapshot, _ *snapshotv1.VolumeSnapshotContent) {
			s.DeletionTimestamp = &metav1.Time{}
		},
			"VolumeSnapshot team-a/nightly-1 is being deleted: name another backup"),
		Entry("the content being deleted", func(_ *snapshotv1.VolumeSnapshot, c *snapshotv1.VolumeSnapshotContent) {
			c.DeletionTimestamp = &metav1.Time{}
		},
			"VolumeSnapshot team-a/nightly-1 is being deleted: name another backup"),
	)

	It("recognises its own snapshot copies by controller and name only", func() {
		dc := newCluster("db", inNamespace("team-b"))
		for ordinal, want := range map[int32]bool{0: true, 8: true} {
			got, ok := copyOrdinal(dc, BuildSnapshotCopy(dc, ordinal))
			Expect([]any{got, ok}).To(Equal([]any{ordinal, want}))
		}
		theirs := BuildSnapshotCopy(dc, 1)
		theirs.OwnerReferences = nil
		_, ok := copyOrdinal(dc, theirs)
		Expect(ok).To(BeFalse(), "not controlled by the cluster")
		for _, name := range []string{"db-restore-", "db-restore-x", "db-restore-01", "nightly-1"} {
			s := BuildSnapshotCopy(dc, 1)
			s.Name = name
			_, ok := copyOrdinal(dc, s)
			Expect(ok).To(BeFalse(), name)
		}
	})
})
