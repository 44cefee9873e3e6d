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
	"errors"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
)

// completedBackup is a Completed backup of a cluster of members members, each snapshot of
// restore size size.
func completedBackup(members int32, size string) *databasev1alpha1.DatabaseBackup {
	b := &databasev1alpha1.DatabaseBackup{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "default"},
		Status: databasev1alpha1.DatabaseBackupStatus{
			Phase: databasev1alpha1.BackupCompleted, ClusterReplicas: members, StorageSize: size,
		},
	}
	for i := range members {
		b.Status.Members = append(b.Status.Members, databasev1alpha1.BackupMember{
			Ordinal: i, ClaimName: fmt.Sprintf("data-old-%d", i), VolumeSnapshotName: fmt.Sprintf("nightly-%d", i),
			ReadyToUse: true, RestoreSize: ptr.To(resource.MustParse(size)),
		})
	}
	return b
}

// expectRestoreVerdict expects err to be nil when want is empty, and otherwise a refused restore
// whose message is "restore refused: " and want. The checks of both sides of a restore (the
// cluster's and the backup's) share it.
func expectRestoreVerdict(err error, want string) {
	GinkgoHelper()
	if want == "" {
		Expect(err).NotTo(HaveOccurred())
		return
	}
	Expect(IsRestoreRefused(err)).To(BeTrue())
	Expect(err).To(MatchError("restore refused: " + want))
}

var _ = Describe("Restore from a backup", Label("unit"), func() {
	DescribeTable("CheckRestore",
		func(dc *databasev1alpha1.DatabaseCluster, change func(*databasev1alpha1.DatabaseBackup), want string) {
			b := completedBackup(3, "1Gi")
			change(b)
			expectRestoreVerdict(CheckRestore(dc, b), want)
		},
		Entry("a Completed backup of as many members", newCluster("db"), func(*databasev1alpha1.DatabaseBackup) {}, ""),
		Entry("into more replicas", newCluster("db", withReplicas(5)), func(*databasev1alpha1.DatabaseBackup) {}, ""),
		Entry("into a larger size", newCluster("db", withSize("2Gi")), func(*databasev1alpha1.DatabaseBackup) {}, ""),
		Entry("not Completed", newCluster("db"), func(b *databasev1alpha1.DatabaseBackup) { b.Status.Phase = databasev1alpha1.BackupRunning },
			`DatabaseBackup nightly is "Running", not Completed: a restore needs every snapshot ready to use; wait for it or name another backup`),
		Entry("being deleted", newCluster("db"), func(b *databasev1alpha1.DatabaseBackup) { b.DeletionTimestamp = &metav1.Time{} },
			"DatabaseBackup nightly is being deleted, and its snapshots with it: name another backup"),
		Entry("Failed", newCluster("db"), func(b *databasev1alpha1.DatabaseBackup) { b.Status.Phase = databasev1alpha1.BackupFailed },
			`DatabaseBackup nightly is "Failed", not Completed: a restore needs every snapshot ready to use; wait for it or name another backup`),
		Entry("from a larger cluster", newCluster("db", withReplicas(1)), func(*databasev1alpha1.DatabaseBackup) {},
			"DatabaseBackup nightly holds 3 members and spec.replicas is 1: restore into at least 3 replicas"),
		Entry("a snapshot larger than spec.storage.size", newCluster("db"), func(b *databasev1alpha1.DatabaseBackup) {
			b.Status.Members[2].RestoreSize = ptr.To(resource.MustParse("4Gi"))
		}, "the snapshot nightly-2 of member 2 needs 4Gi and spec.storage.size is 1Gi: ask for at least 4Gi"),
		Entry("a snapshot missing from the status", newCluster("db"), func(b *databasev1alpha1.DatabaseBackup) {
			b.Status.Members = b.Status.Members[:2]
		}, "DatabaseBackup nightly lists 2 snapshots for 3 members"),
	)

	It("builds each member's claim as the StatefulSet's template would, from the member's snapshot", func() {
		dc := newCluster("db", withSize("2Gi"))
		claim, err := specs.BuildRestoreClaim(dc, 1, completedBackup(3, "1Gi").Status.Members[1].VolumeSnapshotName)
		Expect(err).NotTo(HaveOccurred())
		template := buildStatefulSet(dc, specs.Inputs{}).Spec.VolumeClaimTemplates[0]
		Expect(claim.Name).To(Equal("data-db-1"))
		Expect(claim.Namespace).To(Equal("default"))
		Expect(claim.Labels).To(Equal(template.Labels))
		Expect(claim.OwnerReferences).To(BeEmpty(), "the claim is the member's, as one the StatefulSet creates")
		Expect(claim.Spec.AccessModes).To(Equal(template.Spec.AccessModes))
		Expect(claim.Spec.StorageClassName).To(Equal(ptr.To("standard")))
		Expect(claim.Spec.Resources).To(Equal(template.Spec.Resources))
		Expect(claim.Spec.DataSourceRef).To(Equal(&corev1.TypedObjectReference{
			APIGroup: ptr.To("snapshot.storage.k8s.io"), Kind: "VolumeSnapshot", Name: "nightly-1",
		}))
		Expect(restoredFrom(claim, "nightly-1")).To(BeTrue())
		Expect(restoredFrom(claim, "nightly-0")).To(BeFalse())
		Expect(restoredFrom(&corev1.PersistentVolumeClaim{}, "nightly-1")).To(BeFalse())
	})

	It("reports a refused restore as Degraded RestoreRefused", func() {
		var conditions []metav1.Condition
		err := fmt.Errorf("reconciling: %w", refuse("DatabaseBackup x not found in namespace default: create it first"))
		setDegradedCondition(&conditions, newCluster("db"), observation{err: err})
		Expect(conditionOf(conditions, "Degraded")).To(Equal([]string{"Degraded", "True", "RestoreRefused",
			"reconciling: restore refused: DatabaseBackup x not found in namespace default: create it first"}))
		Expect(IsRestoreRefused(errors.New("other"))).To(BeFalse())
	})
})
