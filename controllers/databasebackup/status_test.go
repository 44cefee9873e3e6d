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
	"errors"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// snapshots is the list of an observation, by ordinal.
func snapshots(s ...*snapshotv1.VolumeSnapshot) []*snapshotv1.VolumeSnapshot { return s }

var _ = Describe("The backup's state machine", Label("unit"), func() {
	const (
		pending  = databasev1alpha1.BackupPending
		running  = databasev1alpha1.BackupRunning
		complete = databasev1alpha1.BackupCompleted
		fail     = databasev1alpha1.BackupFailed
	)
	DescribeTable("phase from what was observed",
		func(obs observation, previous databasev1alpha1.BackupPhase, want backupState) {
			Expect(stateOf(newBackup("nightly"), obs, previous)).To(Equal(want))
		},
		Entry("nothing done yet", observation{}, databasev1alpha1.BackupPhase(""),
			backupState{pending, "Pending", "the backup has not started"}),
		Entry("a failure is final", observation{failReason: "ClusterNotFound", failMessage: "DatabaseCluster db not found in namespace default"}, pending,
			backupState{fail, "ClusterNotFound", "DatabaseCluster db not found in namespace default"}),
		Entry("an API error keeps the phase", observation{err: errors.New("connection refused")}, running,
			backupState{running, "SyncFailed", "connection refused"}),
		Entry("an API error before anything: Pending", observation{err: errors.New("connection refused")}, databasev1alpha1.BackupPhase(""),
			backupState{pending, "SyncFailed", "connection refused"}),
		Entry("waiting for the claims", observation{waiting: "waiting for claim data-db-1 of cluster db to be Bound"}, pending,
			backupState{pending, "WaitingForClaims", "waiting for claim data-db-1 of cluster db to be Bound"}),
		Entry("waiting for the cluster", observation{waiting: "DatabaseCluster db not found", waitReason: "WaitingForCluster"}, pending,
			backupState{pending, "WaitingForCluster", "DatabaseCluster db not found"}),
		Entry("Offline: members still running", observation{holding: true, running: 2}, pending,
			backupState{running, "StoppingCluster", "waiting for 2 member pods of cluster db to stop before the snapshots are cut"}),
		Entry("snapshots created, none ready", observation{snapshots: snapshots(newSnapshot(0), newSnapshot(1), newSnapshot(2))}, pending,
			backupState{running, "Snapshotting", "0/3 VolumeSnapshots are ready to use"}),
		Entry("cut, one ready", observation{snapshots: snapshots(newSnapshot(0, ready("1Gi")), newSnapshot(1, cut()), newSnapshot(2, cut()))}, running,
			backupState{running, "Snapshotting", "1/3 VolumeSnapshots are ready to use"}),
		Entry("every snapshot ready", observation{snapshots: snapshots(newSnapshot(0, ready("1Gi")), newSnapshot(1, ready("1Gi")))}, running,
			backupState{complete, "SnapshotsReady", "2/2 VolumeSnapshots are ready to use"}),
		Entry("a snapshot error fails the backup, whatever the others",
			observation{snapshots: snapshots(newSnapshot(0, ready("1Gi")), newSnapshot(1, failed("driver says no")))}, running,
			backupState{fail, "SnapshotFailed", "VolumeSnapshot nightly-1 of member 1 (claim data-db-1) failed: driver says no; fix the CSI driver or the VolumeSnapshotClass, then create a new DatabaseBackup"}),
		Entry("a snapshot deleted before the end fails the backup",
			observation{snapshots: snapshots(newSnapshot(0, ready("1Gi")), nil)}, running,
			backupState{fail, "SnapshotFailed", "VolumeSnapshot nightly-1 of member 1 was deleted before the backup completed: create a new DatabaseBackup"}),
	)

	DescribeTable("allCut: an Offline backup starts the cluster again once every snapshot is cut",
		func(s []*snapshotv1.VolumeSnapshot, want bool) { Expect(allCut(s)).To(Equal(want)) },
		Entry("none created", nil, false),
		Entry("created, not cut", snapshots(newSnapshot(0), newSnapshot(1)), false),
		Entry("one cut", snapshots(newSnapshot(0, cut()), newSnapshot(1)), false),
		Entry("every one cut, not ready", snapshots(newSnapshot(0, cut()), newSnapshot(1, cut())), true),
		Entry("one gone", snapshots(newSnapshot(0, cut()), nil), false),
	)

	now := metav1.NewTime(t0.Add(60e9))
	It("records the class, the cluster's size, the members and the start on the first snapshots", func() {
		obs := observation{class: "csi-snapclass", replicas: 2, storageSize: "1Gi",
			snapshots: snapshots(newSnapshot(0, ready("1Gi")), newSnapshot(1, cut()))}
		status := computeStatus(newBackup("nightly"), obs, now)
		Expect(status.Phase).To(Equal(running))
		Expect(status.StartTime).To(Equal(&now))
		Expect(status.CompletionTime).To(BeNil())
		Expect(status.VolumeSnapshotClassName).To(Equal("csi-snapclass"))
		Expect(status.ClusterReplicas).To(Equal(int32(2)))
		Expect(status.StorageSize).To(Equal("1Gi"))
		Expect(status.ObservedGeneration).To(Equal(int64(1)))
		Expect(status.Members).To(Equal([]databasev1alpha1.BackupMember{
			{Ordinal: 0, ClaimName: "data-db-0", VolumeSnapshotName: "nightly-0", ReadyToUse: true, RestoreSize: ptr.To(resource.MustParse("1Gi"))},
			{Ordinal: 1, ClaimName: "data-db-1", VolumeSnapshotName: "nightly-1"},
		}))
		Expect(conditionOf(status.Conditions, "Completed")).To(Equal([]string{"Completed", "False", "Snapshotting", "1/2 VolumeSnapshots are ready to use"}))
		Expect(conditionOf(status.Conditions, "Failed")).To(Equal([]string{"Failed", "False", "AsExpected", "nothing keeps the backup from completing"}))
	})

	It("keeps the start and stamps the completion", func() {
		b := newBackup("nightly")
		b.Status = databasev1alpha1.DatabaseBackupStatus{Phase: running, StartTime: &t0, ClusterReplicas: 1, StorageSize: "1Gi",
			Members: []databasev1alpha1.BackupMember{{Ordinal: 0, ClaimName: "data-db-0", VolumeSnapshotName: "nightly-0"}}}
		status := computeStatus(b, observation{snapshots: snapshots(newSnapshot(0, ready("2Gi")))}, now)
		Expect(status.Phase).To(Equal(complete))
		Expect(status.StartTime).To(Equal(&t0))
		Expect(status.CompletionTime).To(Equal(&now))
		Expect(status.ClusterReplicas).To(Equal(int32(1)), "the cluster's size is the one recorded when the snapshots were cut")
		Expect(status.Members[0].RestoreSize).To(Equal(ptr.To(resource.MustParse("2Gi"))))
		Expect(conditionOf(status.Conditions, "Completed")).To(Equal([]string{"Completed", "True", "SnapshotsReady", "1/1 VolumeSnapshots are ready to use"}))
	})

	It("keeps a deleted snapshot's member and says it is gone", func() {
		b := newBackup("nightly")
		b.Status.Members = []databasev1alpha1.BackupMember{{Ordinal: 0, ClaimName: "data-db-0", VolumeSnapshotName: "nightly-0"}}
		status := computeStatus(b, observation{snapshots: snapshots(nil)}, now)
		Expect(status.Members).To(Equal([]databasev1alpha1.BackupMember{
			{Ordinal: 0, ClaimName: "data-db-0", VolumeSnapshotName: "nightly-0", Error: "the VolumeSnapshot was deleted"},
		}))
		Expect(status.Phase).To(Equal(fail))
		Expect(conditionOf(status.Conditions, "Failed")).To(Equal([]string{"Failed", "True", "SnapshotFailed",
			"VolumeSnapshot nightly-0 of member 0 was deleted before the backup completed: create a new DatabaseBackup"}))
	})

	It("fails without a start when the backup could not begin", func() {
		status := computeStatus(newBackup("nightly"), observation{failReason: "NoSnapshotAPI", failMessage: noSnapshotAPI}, now)
		Expect(status.Phase).To(Equal(fail))
		Expect(status.StartTime).To(BeNil())
		Expect(status.CompletionTime).To(Equal(&now))
		Expect(conditionOf(status.Conditions, "Failed")).To(Equal([]string{"Failed", "True", "NoSnapshotAPI",
			"the cluster has no VolumeSnapshot API (snapshot.storage.k8s.io/v1): install the CSI snapshot CRDs and snapshot-controller"}))
		Expect(conditionOf(status.Conditions, "Completed")).To(Equal([]string{"Completed", "False", "NoSnapshotAPI", noSnapshotAPI}))
	})
})
