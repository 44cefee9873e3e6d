//go:build e2e

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

package e2e

import (
	"fmt"
	"time"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed1b407122/database-operator/api/conditions"
	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/test/harness/csisim"
)

// restoredEvents lists "reason: note" of the events about cluster dc.
func restoredEvents(ctx SpecContext, dc *databasev1alpha1.DatabaseCluster) []string {
	var list eventsv1.EventList
	Expect(k8s.List(ctx, &list, client.InNamespace(dc.Namespace))).To(Succeed())
	var events []string
	for _, e := range list.Items {
		if e.Regarding.Kind == "DatabaseCluster" && e.Regarding.Name == dc.Name && e.Regarding.UID == dc.UID {
			events = append(events, e.Reason+": "+e.Note)
		}
	}
	return events
}

// smallCluster is a DatabaseCluster of replicas members of 1Gi each, the spec the backup specs
// back up.
func smallCluster(namespace, name string, replicas int32) *databasev1alpha1.DatabaseCluster {
	return &databasev1alpha1.DatabaseCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: databasev1alpha1.DatabaseClusterSpec{
			Replicas: ptr.To(replicas),
			Image:    "registry.example.com/db:1.0",
			Storage:  databasev1alpha1.StorageSpec{StorageClassName: "standard", Size: "1Gi"},
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("10m"),
			}},
		},
	}
}

// createAvailable creates dc and waits until it is Available.
func createAvailable(ctx SpecContext, dc *databasev1alpha1.DatabaseCluster) {
	GinkgoHelper()
	Expect(k8s.Create(ctx, dc)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		g.Expect(meta.IsStatusConditionTrue(dc.Status.Conditions, databasev1alpha1.ConditionAvailable)).To(BeTrue(),
			"conditions: %v", dc.Status.Conditions)
	}).Should(Succeed())
}

// DatabaseBackup with the real snapshot-controller (external-snapshotter v8, built from the
// module) and the simulated CSI driver cutting the snapshots of its VolumeSnapshotContents.
var _ = Describe("DatabaseBackup on the local control plane", Ordered, func() {
	const ns = "e2e-backup"
	dc := &databasev1alpha1.DatabaseCluster{}
	// snapshotContents are the VolumeSnapshotContents of backup "nightly".
	var snapshotContents []string

	BeforeAll(func(ctx SpecContext) {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		dc = smallCluster(ns, "orders", 3)
		dc.Spec.PVCRetentionPolicy = &databasev1alpha1.PVCRetentionPolicy{WhenDeleted: databasev1alpha1.DeletePVC}
		createAvailable(ctx, dc)
	})

	newBackup := func(name string, method databasev1alpha1.BackupMethod, class string) *databasev1alpha1.DatabaseBackup {
		return &databasev1alpha1.DatabaseBackup{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: databasev1alpha1.DatabaseBackupSpec{
				ClusterName: dc.Name, Method: method, VolumeSnapshotClassName: class,
			},
		}
	}
	waitPhase := func(ctx SpecContext, b *databasev1alpha1.DatabaseBackup, phase databasev1alpha1.BackupPhase) {
		GinkgoHelper()
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
			g.Expect(b.Status.Phase).To(Equal(phase), "conditions: %v", b.Status.Conditions)
		}).Should(Succeed())
	}
	// failedCondition waits until b is Failed and returns its Failed condition.
	failedCondition := func(ctx SpecContext, b *databasev1alpha1.DatabaseBackup) *metav1.Condition {
		GinkgoHelper()
		waitPhase(ctx, b, databasev1alpha1.BackupFailed)
		failed := meta.FindStatusCondition(b.Status.Conditions, databasev1alpha1.ConditionFailed)
		Expect(failed).NotTo(BeNil())
		return failed
	}
	// restoreOf is a copy of the cluster's spec under name, bootstrapped from backup.
	restoreOf := func(name, backup string) *databasev1alpha1.DatabaseCluster {
		c := dc.DeepCopy()
		c.ObjectMeta = metav1.ObjectMeta{Name: name, Namespace: ns}
		c.Status = databasev1alpha1.DatabaseClusterStatus{}
		c.Spec.Bootstrap = &databasev1alpha1.BootstrapSpec{FromBackup: databasev1alpha1.BackupSource{Name: backup}}
		return c
	}
	// waitRestoreRefused waits until c is Degraded with reason RestoreRefused and a message that
	// starts with want.
	waitRestoreRefused := func(ctx SpecContext, c *databasev1alpha1.DatabaseCluster, want string) {
		GinkgoHelper()
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
			degraded := meta.FindStatusCondition(c.Status.Conditions, conditions.Degraded)
			g.Expect(degraded).NotTo(BeNil())
			g.Expect(degraded.Reason).To(Equal(databasev1alpha1.ReasonRestoreRefused))
			g.Expect(degraded.Message).To(HavePrefix(want))
		}).Should(Succeed(), c.Name)
	}
	claimUIDs := func(ctx SpecContext) map[string]string {
		var claims corev1.PersistentVolumeClaimList
		Expect(k8s.List(ctx, &claims, client.InNamespace(ns))).To(Succeed())
		uids := map[string]string{}
		for _, c := range claims.Items {
			uids[c.Name] = string(c.UID)
		}
		return uids
	}
	// expectSnapshots checks one ready snapshot per member, of the member's claim, owned by b.
	expectSnapshots := func(ctx SpecContext, b *databasev1alpha1.DatabaseBackup) {
		GinkgoHelper()
		Expect(b.Status.Members).To(HaveLen(3))
		Expect(b.Status.ClusterReplicas).To(Equal(int32(3)))
		Expect(b.Status.StorageSize).To(Equal("1Gi"))
		Expect(b.Status.VolumeSnapshotClassName).To(Equal("standard-snapshots"), "the default class of the claims' driver")
		Expect(b.Status.StartTime).NotTo(BeNil())
		Expect(b.Status.CompletionTime).NotTo(BeNil())
		for i, m := range b.Status.Members {
			Expect(m.Ordinal).To(Equal(int32(i)))
			Expect(m.ClaimName).To(Equal(fmt.Sprintf("data-%s-%d", dc.Name, i)))
			Expect(m.VolumeSnapshotName).To(Equal(fmt.Sprintf("%s-%d", b.Name, i)))
			Expect(m.ReadyToUse).To(BeTrue())
			Expect(m.RestoreSize).NotTo(BeNil())
			Expect(m.RestoreSize.Cmp(resource.MustParse("1Gi"))).To(Equal(0), "restore size of %s", m.VolumeSnapshotName)
			snap := &snapshotv1.VolumeSnapshot{}
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: m.VolumeSnapshotName}, snap)).To(Succeed())
			Expect(ptr.Deref(snap.Spec.Source.PersistentVolumeClaimName, "")).To(Equal(m.ClaimName))
			Expect(ptr.Deref(snap.Spec.VolumeSnapshotClassName, "")).To(Equal("standard-snapshots"))
			Expect(ptr.Deref(snap.Status.ReadyToUse, false)).To(BeTrue())
			Expect(metav1.IsControlledBy(snap, b)).To(BeTrue(), "snapshot %s is controlled by the backup", snap.Name)
			Expect(metav1.IsControlledBy(snap, dc)).To(BeFalse(), "never by the cluster")
		}
	}

	It("backs up every member Online: one ready snapshot per claim, owned by the backup", func(ctx SpecContext) {
		b := newBackup("nightly", "", "")
		began := time.Now()
		Expect(k8s.Create(ctx, b)).To(Succeed())
		waitPhase(ctx, b, databasev1alpha1.BackupCompleted)
		AddReportEntry("Online backup of 3 members → Completed", time.Since(began).Round(time.Millisecond).String())
		Expect(b.Spec.Method).To(Equal(databasev1alpha1.BackupOnline), "Online is the default")
		expectSnapshots(ctx, b)
		Expect(meta.IsStatusConditionTrue(b.Status.Conditions, databasev1alpha1.ConditionCompleted)).To(BeTrue())
	})

	It("backs up Offline: every member stops, the snapshots are cut, the members come back on the same claims", func(ctx SpecContext) {
		claims := claimUIDs(ctx)
		Expect(claims).To(HaveLen(3))
		var pods corev1.PodList
		Expect(k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels(dc.SelectorLabels()))).To(Succeed())
		Expect(pods.Items).To(HaveLen(3))
		b := newBackup("offline", databasev1alpha1.BackupOffline, "")
		began := time.Now()
		Expect(k8s.Create(ctx, b)).To(Succeed())
		waitPhase(ctx, b, databasev1alpha1.BackupCompleted)
		AddReportEntry("Offline backup of 3 members → Completed", time.Since(began).Round(time.Millisecond).String())
		expectSnapshots(ctx, b)
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
			g.Expect(dc.Annotations).NotTo(HaveKey(databasev1alpha1.OfflineBackupAnnotation))
			g.Expect(meta.IsStatusConditionTrue(dc.Status.Conditions, databasev1alpha1.ConditionAvailable)).To(BeTrue())
			var after corev1.PodList
			g.Expect(k8s.List(ctx, &after, client.InNamespace(ns), client.MatchingLabels(dc.SelectorLabels()))).To(Succeed())
			g.Expect(after.Items).To(HaveLen(3))
			for _, p := range after.Items {
				for _, old := range pods.Items {
					g.Expect(p.UID).NotTo(Equal(old.UID), "member %s was stopped for the snapshots", p.Name)
				}
			}
		}).Should(Succeed())
		AddReportEntry("Offline backup created → cluster Available again", time.Since(began).Round(time.Millisecond).String())
		Expect(claimUIDs(ctx)).To(Equal(claims), "the members came back on the same claims")
	})

	It("fails with what to do when the named VolumeSnapshotClass does not exist", func(ctx SpecContext) {
		b := newBackup("no-class", "", "missing-class")
		Expect(k8s.Create(ctx, b)).To(Succeed())
		failed := failedCondition(ctx, b)
		Expect(failed.Reason).To(Equal(databasev1alpha1.ReasonNoSnapshotClass))
		Expect(failed.Message).To(ContainSubstring("missing-class"))
		var snaps snapshotv1.VolumeSnapshotList
		Expect(k8s.List(ctx, &snaps, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/instance": b.Name})).To(Succeed())
		Expect(snaps.Items).To(BeEmpty())
	})

	It("fails when the cluster does not exist", func(ctx SpecContext) {
		b := newBackup("no-cluster", "", "")
		b.Spec.ClusterName = "nowhere"
		Expect(k8s.Create(ctx, b)).To(Succeed())
		failed := failedCondition(ctx, b)
		Expect(failed.Reason).To(Equal(databasev1alpha1.ReasonClusterNotFound))
		Expect(failed.Message).To(ContainSubstring("nowhere"))
	})

	It("outlives its cluster: the backup and its snapshots stay when the cluster and its claims go", func(ctx SpecContext) {
		b := &databasev1alpha1.DatabaseBackup{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nightly"}, b)).To(Succeed())
		Expect(k8s.Delete(ctx, dc)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc))).To(BeTrue())
			var claims corev1.PersistentVolumeClaimList
			g.Expect(k8s.List(ctx, &claims, client.InNamespace(ns))).To(Succeed())
			g.Expect(claims.Items).To(BeEmpty(), "whenDeleted Delete removes the claims")
		}).Should(Succeed())
		var contents []string
		for _, m := range b.Status.Members {
			snap := &snapshotv1.VolumeSnapshot{}
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: m.VolumeSnapshotName}, snap)).To(Succeed(), "the snapshot outlives the cluster")
			Expect(ptr.Deref(snap.Status.ReadyToUse, false)).To(BeTrue())
			contents = append(contents, ptr.Deref(snap.Status.BoundVolumeSnapshotContentName, ""))
		}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
		Expect(b.Status.Phase).To(Equal(databasev1alpha1.BackupCompleted))
		snapshotContents = contents
	})

	It("restores the deleted cluster from the backup: each member's claim from its member's snapshot", func(ctx SpecContext) {
		restored := restoreOf(dc.Name, "nightly")
		began := time.Now()
		createAvailable(ctx, restored)
		AddReportEntry("restore of 3 members → Available", time.Since(began).Round(time.Millisecond).String())
		Expect(restored.Status.RestoredFromBackup).To(Equal("nightly"))
		for i := range 3 {
			claim := &corev1.PersistentVolumeClaim{}
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("data-%s-%d", dc.Name, i)}, claim)).To(Succeed())
			Expect(claim.Spec.DataSourceRef).NotTo(BeNil())
			Expect(claim.Spec.DataSourceRef.Name).To(Equal(fmt.Sprintf("nightly-%d", i)))
			pv := &corev1.PersistentVolume{}
			Expect(k8s.Get(ctx, client.ObjectKey{Name: claim.Spec.VolumeName}, pv)).To(Succeed())
			Expect(pv.Annotations).To(HaveKeyWithValue(csisim.AnnRestoredFromSnapshot, fmt.Sprintf("%s/nightly-%d", ns, i)),
				"member %d's volume was provisioned from its own snapshot", i)
		}
		Eventually(func() []string { return restoredEvents(ctx, restored) }).Should(ContainElement(
			"Restored: Restored the member claims from the snapshots of DatabaseBackup nightly"))
	})

	It("refuses a restore it cannot do, says why, and creates nothing", func(ctx SpecContext) {
		for _, c := range []struct {
			name     string
			replicas int32
			backup   string
			want     string
		}{
			{"too-small", 1, "nightly", "restore refused: DatabaseBackup nightly holds 3 members and spec.replicas is 1: restore into at least 3 replicas"},
			{"no-backup", 3, "gone", "restore refused: DatabaseBackup gone not found in namespace " + ns},
			{"failed-backup", 3, "no-class", `restore refused: DatabaseBackup no-class is "Failed", not Completed`},
		} {
			clone := restoreOf(c.name, c.backup)
			clone.Spec.Replicas = ptr.To(c.replicas)
			Expect(k8s.Create(ctx, clone)).To(Succeed())
			waitRestoreRefused(ctx, clone, c.want)
			Expect(apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: c.name}, &appsv1.StatefulSet{}))).To(BeTrue(),
				"no StatefulSet for %s", c.name)
			err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "data-" + c.name + "-0"}, &corev1.PersistentVolumeClaim{})
			Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no claim for %s", c.name)
			Expect(k8s.Delete(ctx, clone)).To(Succeed())
		}
	})

	It("never uses or touches a claim of a member's name that holds other data", func(ctx SpecContext) {
		theirs := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "data-taken-0", Namespace: ns, Labels: map[string]string{"owner": "someone-else"}},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				StorageClassName: ptr.To("standard"),
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}
		Expect(k8s.Create(ctx, theirs)).To(Succeed())
		clone := restoreOf("taken", "nightly")
		Expect(k8s.Create(ctx, clone)).To(Succeed())
		waitRestoreRefused(ctx, clone, "restore refused: claim data-taken-0 exists and was not restored from snapshot nightly-0")
		// The cluster is deleted with whenDeleted Delete: the claim is not its member's, it stays.
		Expect(k8s.Delete(ctx, clone)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(clone), clone))).To(BeTrue())
		}).Should(Succeed())
		after := &corev1.PersistentVolumeClaim{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(theirs), after)).To(Succeed())
		Expect(after.UID).To(Equal(theirs.UID))
		Expect(after.DeletionTimestamp).To(BeNil())
		Expect(after.Labels).To(Equal(map[string]string{"owner": "someone-else"}))
		Expect(after.OwnerReferences).To(BeEmpty())
		Expect(after.Spec.DataSourceRef).To(BeNil())
		for i := 1; i < 3; i++ {
			err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("data-taken-%d", i)}, &corev1.PersistentVolumeClaim{})
			Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no claim of member %d was created", i)
		}
	})

	It("deletes the snapshots and their contents with the backup", func(ctx SpecContext) {
		b := &databasev1alpha1.DatabaseBackup{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nightly"}, b)).To(Succeed())
		contents := snapshotContents
		Expect(contents).To(HaveLen(3))
		Expect(k8s.Delete(ctx, b)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(b), &databasev1alpha1.DatabaseBackup{}))).To(BeTrue(), "the backup is gone")
			for _, m := range b.Status.Members {
				snap := &snapshotv1.VolumeSnapshot{}
				err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: m.VolumeSnapshotName}, snap)
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "snapshot %s: deleted at %v, finalizers %v, owners %v",
					m.VolumeSnapshotName, snap.DeletionTimestamp, snap.Finalizers, snap.OwnerReferences)
			}
			for _, name := range contents {
				content := &snapshotv1.VolumeSnapshotContent{}
				err := k8s.Get(ctx, client.ObjectKey{Name: name}, content)
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "content %s (deletionPolicy Delete): deleted at %v, finalizers %v",
					name, content.DeletionTimestamp, content.Finalizers)
			}
		}).Should(Succeed())
	})
})

// A clone into another namespace: the backup's namespace allows it (restoreAllowedNamespaces),
// the operator copies each snapshot into the cluster's namespace (a pre-provisioned content on
// the same handle, Retain) and restores the claims from the copies; the source is only read.
var _ = Describe("Restore into another namespace (clone)", Ordered, func() {
	const (
		source  = "e2e-clone-a"
		allowed = "e2e-clone-b"
		refused = "e2e-clone-c"
	)
	var (
		dc     *databasev1alpha1.DatabaseCluster
		backup *databasev1alpha1.DatabaseBackup
		// before is what the source backup, its snapshots and their contents were before any
		// clone.
		before sourceState
	)

	BeforeAll(func(ctx SpecContext) {
		for _, ns := range []string{source, allowed, refused} {
			Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		}
		dc = smallCluster(source, "orders", 3)
		createAvailable(ctx, dc)
		backup = &databasev1alpha1.DatabaseBackup{
			ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: source},
			Spec:       databasev1alpha1.DatabaseBackupSpec{ClusterName: dc.Name, RestoreAllowedNamespaces: []string{allowed}},
		}
		Expect(k8s.Create(ctx, backup)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(backup), backup)).To(Succeed())
			g.Expect(backup.Status.Phase).To(Equal(databasev1alpha1.BackupCompleted), "conditions: %v", backup.Status.Conditions)
		}).Should(Succeed())
		before = readSourceState(ctx, backup)
		Expect(before.contents).To(HaveLen(3))
	})

	// cloneIn is the source cluster's spec under the same name in namespace, bootstrapped from the
	// source backup.
	cloneIn := func(namespace string) *databasev1alpha1.DatabaseCluster {
		c := &databasev1alpha1.DatabaseCluster{ObjectMeta: metav1.ObjectMeta{Name: dc.Name, Namespace: namespace}, Spec: *dc.Spec.DeepCopy()}
		c.Spec.Bootstrap = &databasev1alpha1.BootstrapSpec{FromBackup: databasev1alpha1.BackupSource{Name: backup.Name, Namespace: source}}
		return c
	}
	// expectNoCopies checks that clone c has no snapshot copy: no VolumeSnapshot in its
	// namespace, none of its content copies.
	expectNoCopies := func(ctx SpecContext, g Gomega, c *databasev1alpha1.DatabaseCluster) {
		var snaps snapshotv1.VolumeSnapshotList
		g.Expect(k8s.List(ctx, &snaps, client.InNamespace(c.Namespace))).To(Succeed())
		g.Expect(snaps.Items).To(BeEmpty(), "VolumeSnapshots in %s", c.Namespace)
		for i := range int32(3) {
			err := k8s.Get(ctx, client.ObjectKey{Name: c.RestoreContentName(i)}, &snapshotv1.VolumeSnapshotContent{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "content copy %s: %v", c.RestoreContentName(i), err)
		}
	}

	It("restores into another namespace under the same name, from copies of the snapshots, and leaves the source as it was", func(ctx SpecContext) {
		clone := cloneIn(allowed)
		began := time.Now()
		createAvailable(ctx, clone)
		AddReportEntry("clone of 3 members into another namespace → Available", time.Since(began).Round(time.Millisecond).String())
		Expect(clone.Status.RestoredFromBackup).To(Equal(source + "/nightly"))
		for i := range int32(3) {
			claim := &corev1.PersistentVolumeClaim{}
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: allowed, Name: clone.ClaimName(i)}, claim)).To(Succeed())
			Expect(claim.Spec.DataSourceRef).To(Equal(&corev1.TypedObjectReference{
				APIGroup: ptr.To("snapshot.storage.k8s.io"), Kind: "VolumeSnapshot", Name: fmt.Sprintf("orders-restore-%d", i),
			}))
			Expect(claim.Status.Phase).To(Equal(corev1.ClaimBound))
			pv := &corev1.PersistentVolume{}
			Expect(k8s.Get(ctx, client.ObjectKey{Name: claim.Spec.VolumeName}, pv)).To(Succeed())
			Expect(pv.Annotations).To(HaveKeyWithValue(csisim.AnnRestoredFromSnapshot, fmt.Sprintf("%s/orders-restore-%d", allowed, i)),
				"member %d's volume was provisioned from its copy", i)
			Expect(pv.Annotations).To(HaveKeyWithValue(csisim.AnnRestoredFromSnapshotHandle, before.handles[i]),
				"member %d's copy is of its own snapshot in %s", i, source)
		}
		Eventually(func() []string { return restoredEvents(ctx, clone) }).Should(ContainElement(
			"Restored: Restored the member claims from the snapshots of DatabaseBackup " + source + "/nightly"))

		// The copies go once the claims are bound; Retain keeps the data of the source.
		Eventually(func(g Gomega) { expectNoCopies(ctx, g, clone) }).Should(Succeed(), "the snapshot copies are deleted")
		AddReportEntry("clone created → snapshot copies deleted", time.Since(began).Round(time.Millisecond).String())
		// Events are sent from the recorder's queue, after the deletes they tell.
		Eventually(func() []string { return restoredEvents(ctx, clone) }).Should(ContainElement(HavePrefix("Removed: Deleted VolumeSnapshotContent dbc-restore-")))
		Expect(readSourceState(ctx, backup)).To(Equal(before), "the source backup, its snapshots and contents are unchanged")
	})

	It("refuses a namespace the backup does not allow, creates nothing, and restores once the backup allows it", func(ctx SpecContext) {
		clone := cloneIn(refused)
		Expect(k8s.Create(ctx, clone)).To(Succeed())
		want := "restore refused: DatabaseBackup nightly in namespace " + source + " does not exist or does not allow restores into namespace " +
			refused + ": add " + refused + " to spec.restoreAllowedNamespaces of DatabaseBackup nightly in namespace " + source
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(clone), clone)).To(Succeed())
			degraded := meta.FindStatusCondition(clone.Status.Conditions, conditions.Degraded)
			g.Expect(degraded).NotTo(BeNil())
			g.Expect([]string{string(degraded.Status), degraded.Reason, degraded.Message}).To(Equal(
				[]string{"True", databasev1alpha1.ReasonRestoreRefused, want}))
		}).Should(Succeed())
		Expect(clone.Status.RestoredFromBackup).To(BeEmpty())
		Expect(apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: refused, Name: clone.Name}, &appsv1.StatefulSet{}))).To(BeTrue(), "no StatefulSet")
		var claims corev1.PersistentVolumeClaimList
		Expect(k8s.List(ctx, &claims, client.InNamespace(refused))).To(Succeed())
		Expect(claims.Items).To(BeEmpty(), "no claim")
		Consistently(func(g Gomega) { expectNoCopies(ctx, g, clone) }).WithTimeout(2*time.Second).Should(Succeed(), "no snapshot copy")
		Expect(readSourceState(ctx, backup)).To(Equal(before), "the source is untouched")

		// The owner of the data allows it: the refused clone is tried again and restored.
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(backup), backup)).To(Succeed())
		patch := client.MergeFrom(backup.DeepCopy())
		backup.Spec.RestoreAllowedNamespaces = append(backup.Spec.RestoreAllowedNamespaces, refused)
		Expect(k8s.Patch(ctx, backup, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(clone), clone)).To(Succeed())
			g.Expect(clone.Status.RestoredFromBackup).To(Equal(source + "/nightly"))
			g.Expect(meta.IsStatusConditionTrue(clone.Status.Conditions, databasev1alpha1.ConditionAvailable)).To(BeTrue(),
				"conditions: %v", clone.Status.Conditions)
			expectNoCopies(ctx, g, clone)
		}).WithTimeout(time.Minute).Should(Succeed())
		after := readSourceState(ctx, backup)
		Expect(after.backupSpec.RestoreAllowedNamespaces).To(Equal([]string{allowed, refused}))
		after.backupSpec.RestoreAllowedNamespaces = before.backupSpec.RestoreAllowedNamespaces
		after.backupStatus.ObservedGeneration = before.backupStatus.ObservedGeneration
		Expect(after).To(Equal(before), "only the field the test changed")
	})
})

// sourceState is what a clone must never change: the backup's spec and status, and its
// snapshots' and their contents' metadata that matters, spec and status.
type sourceState struct {
	backupSpec   databasev1alpha1.DatabaseBackupSpec
	backupStatus databasev1alpha1.DatabaseBackupStatus
	snapshots    []snapshotState
	contents     []contentState
	// handles are the snapshot handles by member ordinal.
	handles []string
}

type snapshotState struct {
	UID         types.UID
	Labels      map[string]string
	Finalizers  []string
	Owners      []metav1.OwnerReference
	DeletedAt   *metav1.Time
	Spec        snapshotv1.VolumeSnapshotSpec
	ReadyToUse  bool
	BoundTo     string
	RestoreSize string
}

type contentState struct {
	UID        types.UID
	Finalizers []string
	DeletedAt  *metav1.Time
	Spec       snapshotv1.VolumeSnapshotContentSpec
	Status     snapshotv1.VolumeSnapshotContentStatus
}

// readSourceState reads the backup, its snapshots and their contents.
func readSourceState(ctx SpecContext, b *databasev1alpha1.DatabaseBackup) sourceState {
	GinkgoHelper()
	current := &databasev1alpha1.DatabaseBackup{}
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), current)).To(Succeed())
	s := sourceState{backupSpec: current.Spec, backupStatus: current.Status}
	for _, m := range current.Status.Members {
		snap := &snapshotv1.VolumeSnapshot{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: m.VolumeSnapshotName}, snap)).To(Succeed())
		Expect(snap.Status).NotTo(BeNil())
		s.snapshots = append(s.snapshots, snapshotState{
			UID: snap.UID, Labels: snap.Labels, Finalizers: snap.Finalizers, Owners: snap.OwnerReferences, DeletedAt: snap.DeletionTimestamp,
			Spec: snap.Spec, ReadyToUse: ptr.Deref(snap.Status.ReadyToUse, false),
			BoundTo: ptr.Deref(snap.Status.BoundVolumeSnapshotContentName, ""), RestoreSize: snap.Status.RestoreSize.String(),
		})
		content := &snapshotv1.VolumeSnapshotContent{}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: ptr.Deref(snap.Status.BoundVolumeSnapshotContentName, "")}, content)).To(Succeed())
		Expect(content.Status).NotTo(BeNil())
		s.contents = append(s.contents, contentState{
			UID: content.UID, Finalizers: content.Finalizers, DeletedAt: content.DeletionTimestamp, Spec: content.Spec, Status: *content.Status,
		})
		s.handles = append(s.handles, ptr.Deref(content.Status.SnapshotHandle, ""))
	}
	return s
}
