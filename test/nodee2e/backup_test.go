//go:build linux && node

package nodee2e

import (
	"context"
	"fmt"
	"time"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/test/harness/csisim"
)

// backupExtraKeys are written after the backup: a restore must not have them.
const backupExtraKeys = 500

// Real data through the operator's backup and restore: the node's volumes are directories that
// the simulated CSI driver's node plugin mounts, a snapshot copies a member's directory and a
// restore copies it back (package csisim, directory mode), with the real snapshot-controller
// between the operator and the driver.
func backupStory() {
	It("restores exactly the keys of an Online backup into the cluster created again after its claims were deleted", func(ctx SpecContext) {
		ns := newNamespace(ctx, "backup")
		dc := backupSample(ns, nil)
		Expect(k8s.Create(ctx, dc)).To(Succeed())
		waitAvailable(ctx, dc, time.Now())
		db := &etcdClient{dc: dc.DeepCopy()}
		Eventually(func(g Gomega) { g.Expect(db.put(ctx, "probe", "1")).To(Succeed()) }).WithContext(ctx).Should(Succeed())
		for i := range etcdKeys {
			Expect(db.put(ctx, etcdKey(i), etcdValue(i))).To(Succeed())
		}
		db.expectAll(ctx)

		// The DatabaseBackup sample as it is: an Online backup of the etcd sample.
		backup := &databasev1alpha1.DatabaseBackup{}
		readSample("database_v1alpha1_databasebackup.yaml", ns, backup)
		Expect(backup.Spec.ClusterName).To(Equal(dc.Name))
		Expect(backup.Spec.Method).To(Equal(databasev1alpha1.BackupOnline))
		began := time.Now()
		Expect(k8s.Create(ctx, backup)).To(Succeed())
		waitBackupCompleted(ctx, backup)
		report("etcd sample: the DatabaseBackup sample (Online, 3 members) -> Completed (real node, each member's directory copied)", time.Since(began))
		expectBackupStatus(ctx, backup, dc)

		// Under the same prefix: a restore that brought any of them back would count more.
		for i := etcdKeys; i < etcdKeys+backupExtraKeys; i++ {
			Expect(db.put(ctx, etcdKey(i), etcdValue(i))).To(Succeed())
		}
		Expect(db.count(ctx)).To(Equal(etcdKeys+backupExtraKeys), "the keys written after the backup are there before the disaster")

		// The disaster: the cluster and, with whenDeleted Delete, its claims and their volumes.
		Expect(k8s.Delete(ctx, dc)).To(Succeed())
		waitClusterAndVolumesGone(ctx, dc)

		restored := backupSample(ns, &databasev1alpha1.BootstrapSpec{FromBackup: databasev1alpha1.BackupSource{Name: backup.Name}})
		began = time.Now()
		Expect(k8s.Create(ctx, restored)).To(Succeed())
		report("etcd sample: restore from the backup -> Available (3 members, real node)", waitAvailable(ctx, restored, began))
		Expect(restored.Status.RestoredFromBackup).To(Equal(backup.Name))
		expectClaimsRestored(ctx, restored, backup)

		db = &etcdClient{dc: restored.DeepCopy()}
		// Exactly the backup's keys with their values (expectAll counts the prefix), none of the
		// later ones.
		db.expectAll(ctx)
		Expect(db.count(ctx)).To(Equal(etcdKeys))
		reportCount("etcd keys restored from the backup (of 3000; 0 lost, none of the 500 written after it)", etcdKeys)

		// Deleting the backup deletes its snapshots (class policy Delete) and their copies.
		Expect(k8s.Delete(ctx, backup)).To(Succeed())
		Eventually(func(g Gomega) {
			var contents snapshotv1.VolumeSnapshotContentList
			g.Expect(k8s.List(ctx, &contents)).To(Succeed())
			for _, c := range contents.Items {
				g.Expect(c.Spec.VolumeSnapshotRef.Namespace).NotTo(Equal(ns), "content %s of a deleted backup", c.Name)
			}
		}).WithContext(ctx).Should(Succeed())
		Expect(k8s.Delete(ctx, restored)).To(Succeed())
		waitClusterAndVolumesGone(ctx, restored)
	}, NodeTimeout(12*time.Minute))
}

// backupSample is the etcd sample as it is, except whenDeleted: Delete (the sample keeps its
// claims, the default Retain), so that deleting the cluster deletes its data; with bootstrap,
// the cluster restores a backup.
func backupSample(namespace string, bootstrap *databasev1alpha1.BootstrapSpec) *databasev1alpha1.DatabaseCluster {
	GinkgoHelper()
	dc := sampleCluster(namespace, etcdSampleFile)
	Expect(dc.Spec.PVCRetentionPolicy).To(BeNil(), "the sample sets a claim retention policy now: say so here")
	dc.Spec.PVCRetentionPolicy = &databasev1alpha1.PVCRetentionPolicy{WhenDeleted: databasev1alpha1.DeletePVC}
	dc.Spec.Bootstrap = bootstrap
	return dc
}

// waitBackupCompleted waits until the backup is Completed; Failed fails at once.
func waitBackupCompleted(ctx context.Context, b *databasev1alpha1.DatabaseBackup) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
		if b.Status.Phase == databasev1alpha1.BackupFailed {
			StopTrying(fmt.Sprintf("backup %s Failed: %v", b.Name, b.Status.Conditions)).Now()
		}
		g.Expect(b.Status.Phase).To(Equal(databasev1alpha1.BackupCompleted), "conditions: %v, members: %v", b.Status.Conditions, b.Status.Members)
	}).WithContext(ctx).Should(Succeed())
}

// expectBackupStatus checks the Completed backup's status and that each member's
// VolumeSnapshot is ready, bound to a content of the simulated driver with a handle.
func expectBackupStatus(ctx context.Context, b *databasev1alpha1.DatabaseBackup, dc *databasev1alpha1.DatabaseCluster) {
	GinkgoHelper()
	Expect(apimeta.IsStatusConditionTrue(b.Status.Conditions, databasev1alpha1.ConditionCompleted)).To(BeTrue())
	Expect(b.Status.ClusterReplicas).To(BeEquivalentTo(etcdMembers))
	Expect(b.Status.StorageSize).To(Equal(dc.Spec.Storage.Size))
	Expect(b.Status.VolumeSnapshotClassName).To(Equal(csisim.SnapshotClassName))
	Expect(b.Status.Members).To(HaveLen(etcdMembers))
	for i, m := range b.Status.Members {
		Expect(m.Ordinal).To(BeEquivalentTo(i))
		Expect(m.ClaimName).To(Equal(fmt.Sprintf("data-%s-%d", dc.Name, i)))
		Expect(m.ReadyToUse).To(BeTrue(), "member %d", i)
		Expect(m.Error).To(BeEmpty())
		var snap snapshotv1.VolumeSnapshot
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: m.VolumeSnapshotName}, &snap)).To(Succeed())
		Expect(snap.Spec.Source.PersistentVolumeClaimName).To(HaveValue(Equal(m.ClaimName)))
		Expect(snap.Status).NotTo(BeNil())
		Expect(snap.Status.ReadyToUse).To(HaveValue(BeTrue()))
		var content snapshotv1.VolumeSnapshotContent
		Expect(k8s.Get(ctx, client.ObjectKey{Name: ptr.Deref(snap.Status.BoundVolumeSnapshotContentName, "")}, &content)).To(Succeed())
		Expect(content.Spec.Driver).To(Equal(csisim.ProvisionerName))
		Expect(content.Status.SnapshotHandle).To(HaveValue(Equal(csisim.SnapshotHandlePrefix + string(content.UID))))
	}
}

// waitClusterAndVolumesGone waits until the cluster, its claims and the volumes they were bound
// to (whose directories go with them) are all deleted.
func waitClusterAndVolumesGone(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) {
	GinkgoHelper()
	var claims corev1.PersistentVolumeClaimList
	Expect(k8s.List(ctx, &claims, client.InNamespace(dc.Namespace))).To(Succeed())
	Eventually(func(g Gomega) {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(dc), &databasev1alpha1.DatabaseCluster{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "cluster %s: %v", dc.Name, err)
		var left corev1.PersistentVolumeClaimList
		g.Expect(k8s.List(ctx, &left, client.InNamespace(dc.Namespace))).To(Succeed())
		g.Expect(left.Items).To(BeEmpty(), "claims left")
		for _, c := range claims.Items {
			if c.Spec.VolumeName == "" {
				continue
			}
			err := k8s.Get(ctx, client.ObjectKey{Name: c.Spec.VolumeName}, &corev1.PersistentVolume{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "volume %s of claim %s: %v", c.Spec.VolumeName, c.Name, err)
		}
	}).WithContext(ctx).Should(Succeed())
}

// expectClaimsRestored checks that each member's claim was provisioned from its member's
// snapshot of the backup.
func expectClaimsRestored(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, b *databasev1alpha1.DatabaseBackup) {
	GinkgoHelper()
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
	for _, m := range b.Status.Members {
		var claim corev1.PersistentVolumeClaim
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: m.ClaimName}, &claim)).To(Succeed())
		Expect(claim.Spec.DataSourceRef).NotTo(BeNil(), "claim %s", claim.Name)
		Expect(claim.Spec.DataSourceRef.Kind).To(Equal("VolumeSnapshot"))
		Expect(claim.Spec.DataSourceRef.Name).To(Equal(m.VolumeSnapshotName))
		var pv corev1.PersistentVolume
		Expect(k8s.Get(ctx, client.ObjectKey{Name: claim.Spec.VolumeName}, &pv)).To(Succeed())
		Expect(pv.Annotations).To(HaveKeyWithValue(csisim.AnnRestoredFromSnapshot, dc.Namespace+"/"+m.VolumeSnapshotName))
		Expect(pv.Spec.CSI).NotTo(BeNil())
		Expect(pv.Spec.CSI.Driver).To(Equal(csisim.ProvisionerName))
	}
}
