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
	"strings"
	"time"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// simDriver provisions StorageClass "standard"; "sim-default" is its default snapshot class.
const simDriver = "csi.sim.example.com"

var _ = Describe("DatabaseBackup controller", Ordered, Label("integration"), func() {
	env := testenv.StartInBeforeAll(setupWithSnapshots)
	var s suite

	BeforeAll(func(ctx context.Context) {
		s = suite{c: env.Client}
		for _, obj := range []client.Object{
			&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "standard"}, Provisioner: simDriver},
			&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "nosnap"}, Provisioner: "other.example.com"},
			ptr.To(snapshotClass("sim-default", simDriver, true)),
			ptr.To(snapshotClass("sim-other", simDriver, false)),
		} {
			Expect(s.c.Create(ctx, obj)).To(Succeed())
		}
	})

	Describe("admission", func() {
		DescribeTable("refuses a spec that can never work, with a message",
			func(ctx context.Context, change func(*databasev1alpha1.DatabaseBackup), message string) {
				b := newBackup("refused")
				change(b)
				err := s.c.Create(ctx, b)
				Expect(apierrors.IsInvalid(err)).To(BeTrue(), "expected Invalid, got %v", err)
				Expect(err.Error()).To(ContainSubstring(message))
			},
			Entry("no cluster", func(b *databasev1alpha1.DatabaseBackup) { b.Spec.ClusterName = "" },
				`spec.clusterName: Invalid value: "": spec.clusterName in body should be at least 1 chars long`),
			Entry("a cluster name that no DatabaseCluster can have", withCluster("Db_1"),
				`spec.clusterName: Invalid value: "Db_1": clusterName must be the name of a DatabaseCluster (a DNS-1035 label: lowercase letters, digits and '-', starting with a letter)`),
			Entry("a cluster name longer than a DatabaseCluster's", withCluster(strings.Repeat("a", 53)),
				"spec.clusterName: Too long: may not be more than 52 bytes"),
			Entry("an unknown method", withMethod("Hot"),
				`spec.method: Unsupported value: "Hot": supported values: "Online", "Offline"`),
			Entry("a class name that is no object name", withClass("Fast Class"),
				`spec.volumeSnapshotClassName: Invalid value: "Fast Class": volumeSnapshotClassName must be a VolumeSnapshotClass name (a DNS subdomain: lowercase letters, digits, '-' and '.')`),
			Entry("a name longer than a label value", func(b *databasev1alpha1.DatabaseBackup) { b.Name = strings.Repeat("b", 64) },
				"metadata.name must be at most 63 characters: the VolumeSnapshots carry it as the label app.kubernetes.io/instance, and label values are limited to 63"),
		)

		It("defaults the method to Online and keeps the spec as it was created", func(ctx context.Context) {
			b := newBackup("record", withMethod(""), withCluster("ghost"))
			Expect(s.c.Create(ctx, b)).To(Succeed())
			Expect(b.Spec.Method).To(Equal(databasev1alpha1.BackupOnline))
			for change, message := range map[string]string{
				`{"spec":{"clusterName":"other"}}`:                 "clusterName is immutable",
				`{"spec":{"method":"Offline"}}`:                    "spec is immutable: a DatabaseBackup is the record of one backup; create a new DatabaseBackup to back up again",
				`{"spec":{"volumeSnapshotClassName":"sim-other"}}`: "spec is immutable: a DatabaseBackup is the record of one backup",
			} {
				err := s.c.Patch(ctx, b.DeepCopy(), client.RawPatch("application/merge-patch+json", []byte(change)))
				Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%s: expected Invalid, got %v", change, err)
				Expect(err.Error()).To(ContainSubstring(message), change)
			}
		})
	})

	It("Online: snapshots every member together, owned by the backup, and completes when every one is ready", func(ctx context.Context) {
		ns := s.namespace(ctx)
		dc := inNamespace(ns, newCluster("db"))
		Expect(s.c.Create(ctx, dc)).To(Succeed())
		b := inNamespace(ns, newBackup("nightly"))
		Expect(s.c.Create(ctx, b)).To(Succeed())

		By("waiting for the claims to be Bound before any snapshot")
		waiting := s.phase(ctx, b, databasev1alpha1.BackupPending)
		Expect(conditionOf(waiting.Status.Conditions, "Completed")).To(Equal([]string{"Completed", "False", "WaitingForClaims",
			"waiting for claim data-db-0 of cluster db to exist"}))
		Expect(waiting.Status.StartTime).To(BeNil())
		s.boundClaims(ctx, dc)

		running := s.phase(ctx, b, databasev1alpha1.BackupRunning)
		for ordinal := range int32(3) {
			got := s.snapshot(ctx, ns, b.SnapshotName(ordinal))(Default)
			Expect(got.Spec).To(Equal(snapshotv1.VolumeSnapshotSpec{
				Source:                  snapshotv1.VolumeSnapshotSource{PersistentVolumeClaimName: ptr.To(dc.ClaimName(ordinal))},
				VolumeSnapshotClassName: ptr.To("sim-default"),
			}))
			Expect(got.Labels).To(Equal(b.Labels()))
			Expect(got.OwnerReferences).To(Equal([]metav1.OwnerReference{{
				APIVersion: "database.seed1b407122.io/v1alpha1", Kind: "DatabaseBackup", Name: "nightly", UID: running.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}}), "owned by the backup alone, never by the cluster: deleting the backup deletes its snapshots")
		}
		Expect(running.Status.VolumeSnapshotClassName).To(Equal("sim-default"))
		Expect(running.Status.ClusterReplicas).To(Equal(int32(3)))
		Expect(running.Status.StorageSize).To(Equal("1Gi"))
		Expect(running.Status.StartTime).NotTo(BeNil())
		Expect(running.Status.Members).To(Equal([]databasev1alpha1.BackupMember{
			{Ordinal: 0, ClaimName: "data-db-0", VolumeSnapshotName: "nightly-0"},
			{Ordinal: 1, ClaimName: "data-db-1", VolumeSnapshotName: "nightly-1"},
			{Ordinal: 2, ClaimName: "data-db-2", VolumeSnapshotName: "nightly-2"},
		}))
		Expect(conditionOf(running.Status.Conditions, "Completed")).To(Equal([]string{"Completed", "False", "Snapshotting", "0/3 VolumeSnapshots are ready to use"}))
		Expect(s.cluster(ctx, dc)(Default).Annotations).NotTo(HaveKey(databasev1alpha1.OfflineBackupAnnotation), "an Online backup never stops the cluster")

		for ordinal := range int32(3) {
			s.setSnapshotStatus(ctx, ns, b.SnapshotName(ordinal), ready("1Gi"))
		}
		done := s.phase(ctx, b, databasev1alpha1.BackupCompleted)
		Expect(done.Status.CompletionTime).NotTo(BeNil())
		Expect(done.Status.StartTime).To(Equal(running.Status.StartTime))
		for _, m := range done.Status.Members {
			Expect(m.ReadyToUse).To(BeTrue())
			Expect(m.RestoreSize).To(Equal(ptr.To(resource.MustParse("1Gi"))))
		}
		Expect(conditionOf(done.Status.Conditions, "Completed")).To(Equal([]string{"Completed", "True", "SnapshotsReady", "3/3 VolumeSnapshots are ready to use"}))
		Expect(conditionOf(done.Status.Conditions, "Failed")).To(Equal([]string{"Failed", "False", "AsExpected", "nothing keeps the backup from completing"}))
		Eventually(s.events(ctx, b)).Should(ConsistOf(
			"Normal Started: Started the Online backup of cluster db",
			"Normal SnapshotsCreated: Created VolumeSnapshots nightly-0, nightly-1, nightly-2 of class sim-default",
			"Normal Completed: Every VolumeSnapshot of cluster db is ready to use",
		))

		Eventually(func() (map[string]float64, error) { return testenv.ConditionSeries(kind, ns, "nightly") }).
			Should(Equal(testenv.WantConditionSeries(map[string]string{"Completed": "true", "Failed": "false"})))

		By("outliving its cluster")
		Expect(s.c.Delete(ctx, dc)).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(s.c.Get(ctx, client.ObjectKeyFromObject(dc), dc)) }).Should(BeTrue())
		Consistently(func(g Gomega) databasev1alpha1.BackupPhase { return s.backup(ctx, b)(g).Status.Phase }, "1s").
			Should(Equal(databasev1alpha1.BackupCompleted))

		By("going when deleted, its snapshots with it by their owner reference")
		Expect(s.c.Delete(ctx, b)).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(s.c.Get(ctx, client.ObjectKeyFromObject(b), b)) }).Should(BeTrue())
		Eventually(func() (map[string]float64, error) { return testenv.ConditionSeries(kind, ns, "nightly") }).
			Should(BeEmpty(), "the series of a backup that is gone are forgotten")
	})

	It("uses the class the spec names", func(ctx context.Context) {
		ns := s.namespace(ctx)
		s.clusterWithClaims(ctx, inNamespace(ns, newCluster("db", withReplicas(1))))
		b := inNamespace(ns, newBackup("named", withClass("sim-other")))
		Expect(s.c.Create(ctx, b)).To(Succeed())
		Expect(s.phase(ctx, b, databasev1alpha1.BackupRunning).Status.VolumeSnapshotClassName).To(Equal("sim-other"))
		Expect(s.snapshot(ctx, ns, "named-0")(Default).Spec.VolumeSnapshotClassName).To(Equal(ptr.To("sim-other")))
	})

	It("fails when a snapshot reports an error, naming the member and what to do", func(ctx context.Context) {
		ns := s.namespace(ctx)
		s.clusterWithClaims(ctx, inNamespace(ns, newCluster("db", withReplicas(2))))
		b := inNamespace(ns, newBackup("broken"))
		Expect(s.c.Create(ctx, b)).To(Succeed())
		s.phase(ctx, b, databasev1alpha1.BackupRunning)
		s.setSnapshotStatus(ctx, ns, "broken-0", ready("1Gi"))
		s.setSnapshotStatus(ctx, ns, "broken-1", failed("rpc error: code = Internal desc = disk full"))
		s.failedWith(ctx, b, "SnapshotFailed",
			"VolumeSnapshot broken-1 of member 1 (claim data-db-1) failed: rpc error: code = Internal desc = disk full; fix the CSI driver or the VolumeSnapshotClass, then create a new DatabaseBackup")
		Expect(s.backup(ctx, b)(Default).Status.Members[1].Error).To(Equal("rpc error: code = Internal desc = disk full"))
	})

	DescribeTable("fails with what to do",
		func(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, b *databasev1alpha1.DatabaseBackup, reason, message string) {
			ns := s.namespace(ctx)
			if dc != nil {
				s.clusterWithClaims(ctx, inNamespace(ns, dc))
			}
			b = inNamespace(ns, b)
			Expect(s.c.Create(ctx, b)).To(Succeed())
			if dc == nil {
				got := s.phase(ctx, b, databasev1alpha1.BackupPending)
				Expect(conditionOf(got.Status.Conditions, "Completed")).To(Equal([]string{"Completed", "False", "WaitingForCluster",
					"DatabaseCluster ghost not found in namespace " + ns + " yet: the backup fails if it does not exist 2s after the backup was created"}))
			}
			s.failedWith(ctx, b, reason, strings.ReplaceAll(message, "NS", ns))
			var list snapshotv1.VolumeSnapshotList
			Expect(s.c.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
			Expect(list.Items).To(BeEmpty())
		},
		Entry("the cluster does not exist", nil, newBackup("lost", withCluster("ghost")),
			"ClusterNotFound", "DatabaseCluster ghost not found in namespace NS"),
		Entry("the named class does not exist", newCluster("db"), newBackup("noclass", withClass("gone")),
			"NoSnapshotClass", "VolumeSnapshotClass gone not found: create it, or name another class in a new DatabaseBackup"),
		Entry("no default class for the cluster's driver", newCluster("db", withStorageClass("nosnap")), newBackup("nodefault"),
			"NoSnapshotClass", `no VolumeSnapshotClass of driver other.example.com is annotated snapshot.storage.kubernetes.io/is-default-class: "true": create one, or name a class in spec.volumeSnapshotClassName`),
		Entry("the cluster's StorageClass does not exist", newCluster("db", withStorageClass("absent")), newBackup("nostorage"),
			"NoSnapshotClass", "StorageClass absent of cluster db not found: the default VolumeSnapshotClass is the one of its provisioner; name a class in spec.volumeSnapshotClassName"),
		Entry("Offline, the cluster not Available", newCluster("db"), newBackup("cold", withMethod(databasev1alpha1.BackupOffline)),
			"ClusterNotAvailable", "cluster db is not Available: an Offline backup needs every member Ready; retry when it is, or use method Online"),
	)

	It("Offline: stops the cluster, cuts the snapshots, starts it again before they are ready", func(ctx context.Context) {
		By("stopping the cluster through the annotation; the DatabaseCluster controller scales it to zero")
		dc, b := s.offlineHold(ctx, 2, "cold")
		ns := dc.Namespace
		Eventually(func(g Gomega) *int32 { return s.statefulSet(ctx, dc)(g).Spec.Replicas }).Should(Equal(ptr.To[int32](0)))
		stopping := s.phase(ctx, b, databasev1alpha1.BackupRunning)
		Expect(conditionOf(stopping.Status.Conditions, "Completed")).To(Equal([]string{"Completed", "False", "StoppingCluster",
			"waiting for 2 member pods of cluster db to stop before the snapshots are cut"}))
		Expect(stopping.Finalizers).To(ContainElement(databasev1alpha1.BackupFinalizer))
		var list snapshotv1.VolumeSnapshotList
		Expect(s.c.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
		Expect(list.Items).To(BeEmpty(), "no snapshot while a member runs")

		By("cutting the snapshots once no member runs")
		s.setPods(ctx, dc, 0)
		Eventually(func(g Gomega) { s.snapshot(ctx, ns, "cold-1")(g) }).Should(Succeed())
		s.snapshot(ctx, ns, "cold-0")(Default)
		Eventually(func(g Gomega) []string {
			return conditionOf(s.cluster(ctx, dc)(g).Status.Conditions, databasev1alpha1.ConditionHibernated)
		}).Should(Equal([]string{"Hibernated", "True", "Hibernated", "stopped for offline backup cold: no pod runs; claims, Services and status are kept"}))
		Consistently(func(g Gomega) map[string]string { return s.cluster(ctx, dc)(g).Annotations }, "1s").
			Should(HaveKey(databasev1alpha1.OfflineBackupAnnotation), "the cluster stays stopped until every snapshot is cut")

		By("starting the cluster again once every snapshot is cut, not waiting for readyToUse")
		s.setSnapshotStatus(ctx, ns, "cold-0", cut())
		s.setSnapshotStatus(ctx, ns, "cold-1", cut())
		Eventually(func(g Gomega) map[string]string { return s.cluster(ctx, dc)(g).Annotations }).
			ShouldNot(HaveKey(databasev1alpha1.OfflineBackupAnnotation))
		Eventually(func(g Gomega) *int32 { return s.statefulSet(ctx, dc)(g).Spec.Replicas }).Should(Equal(ptr.To[int32](2)))
		Expect(s.backup(ctx, b)(Default).Status.Phase).To(Equal(databasev1alpha1.BackupRunning))

		s.setSnapshotStatus(ctx, ns, "cold-0", ready("1Gi"))
		s.setSnapshotStatus(ctx, ns, "cold-1", ready("1Gi"))
		done := s.phase(ctx, b, databasev1alpha1.BackupCompleted)
		Expect(done.Status.ClusterReplicas).To(Equal(int32(2)))
		Eventually(s.events(ctx, b)).Should(ConsistOf(
			"Normal Started: Started the Offline backup of cluster db",
			"Normal SnapshotsCreated: Created VolumeSnapshots cold-0, cold-1 of class sim-default",
			"Normal Completed: Every VolumeSnapshot of cluster db is ready to use",
		))
	})

	// The StatefulSet controller reports 0 replicas while the last pod still terminates (its
	// grace period, a kubelet slow to confirm): nothing of the StatefulSet changes after that, so
	// only the pod's deletion can tell the backup that no member runs any more.
	It("Offline: cuts the snapshots when the last pod is gone after the StatefulSet reported 0 replicas", func(ctx context.Context) {
		dc, b := s.offlineHold(ctx, 1, "late")
		ns := dc.Namespace
		Eventually(func(g Gomega) *int32 { return s.statefulSet(ctx, dc)(g).Spec.Replicas }).Should(Equal(ptr.To[int32](0)))
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: dc.StatefulSetName() + "-0", Finalizers: []string{"test.example.com/terminating"},
				Labels: s.statefulSet(ctx, dc)(Default).Spec.Template.Labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "database", Image: "db"}}},
		}
		Expect(s.c.Create(ctx, pod)).To(Succeed())
		Expect(s.c.Delete(ctx, pod)).To(Succeed())
		s.setPods(ctx, dc, 0)
		Eventually(func(g Gomega) []string { return conditionOf(s.backup(ctx, b)(g).Status.Conditions, "Completed") }).Should(Equal([]string{
			"Completed", "False", "StoppingCluster", "waiting for 1 member pods of cluster db to stop before the snapshots are cut"}))
		Consistently(func() error {
			return s.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "late-0"}, &snapshotv1.VolumeSnapshot{})
		}, "1s").
			Should(Satisfy(apierrors.IsNotFound), "no snapshot while the pod terminates")

		By("the pod is gone: the backup cuts its snapshot with nothing else changed")
		Expect(s.c.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		pod.Finalizers = nil
		Expect(s.c.Update(ctx, pod)).To(Succeed())
		Eventually(func(g Gomega) { s.snapshot(ctx, ns, "late-0")(g) }).WithTimeout(10 * time.Second).Should(Succeed())
	})

	It("Offline: a backup deleted while it holds the cluster stopped starts the cluster again", func(ctx context.Context) {
		dc, b := s.offlineHold(ctx, 2, "abandoned")
		Eventually(func(g Gomega) *int32 { return s.statefulSet(ctx, dc)(g).Spec.Replicas }).Should(Equal(ptr.To[int32](0)))

		Expect(s.c.Delete(ctx, b)).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(s.c.Get(ctx, client.ObjectKeyFromObject(b), b)) }).Should(BeTrue())
		Expect(s.cluster(ctx, dc)(Default).Annotations).NotTo(HaveKey(databasev1alpha1.OfflineBackupAnnotation))
		Eventually(func(g Gomega) *int32 { return s.statefulSet(ctx, dc)(g).Spec.Replicas }).Should(Equal(ptr.To[int32](2)))
	})

	It("Offline: refuses a cluster another Offline backup holds", func(ctx context.Context) {
		dc, _ := s.offlineHold(ctx, 1, "first")
		second := inNamespace(dc.Namespace, newBackup("second", withMethod(databasev1alpha1.BackupOffline)))
		Expect(s.c.Create(ctx, second)).To(Succeed())
		s.failedWith(ctx, second, "ClusterBusy", "cluster db is stopped for offline backup first: retry when that backup is done, or use method Online")
		Expect(s.cluster(ctx, dc)(Default).Annotations).To(HaveKeyWithValue(databasev1alpha1.OfflineBackupAnnotation, "first"),
			"the failed backup leaves the other's hold alone")
	})
})

var _ = Describe("DatabaseBackup controller with a cache that lags", Ordered, Label("integration"), func() {
	env := testenv.StartInBeforeAll(setupLagging)

	It("Offline: a cluster the cache holds as not Available but the API server as Available is stopped, not failed", func(ctx context.Context) {
		s := suite{c: env.Client}
		Expect(s.c.Create(ctx, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "standard"}, Provisioner: simDriver})).To(Succeed())
		Expect(s.c.Create(ctx, ptr.To(snapshotClass("sim-default", simDriver, true)))).To(Succeed())
		dc, b := s.offlineHold(ctx, 2, "fresh")
		Eventually(func(g Gomega) *int32 { return s.statefulSet(ctx, dc)(g).Spec.Replicas }).Should(Equal(ptr.To[int32](0)))
		Expect(conditionOf(s.phase(ctx, b, databasev1alpha1.BackupRunning).Status.Conditions, "Completed")).To(Equal([]string{
			"Completed", "False", "StoppingCluster", "waiting for 2 member pods of cluster db to stop before the snapshots are cut"}))
	})
})

var _ = Describe("DatabaseBackup controller without the snapshot API", Ordered, Label("integration"), func() {
	env := testenv.StartInBeforeAll(setupController)

	It("fails with what to install", func(ctx context.Context) {
		s := suite{c: env.Client}
		ns := s.namespace(ctx)
		Expect(s.c.Create(ctx, inNamespace(ns, newCluster("db")))).To(Succeed())
		b := inNamespace(ns, newBackup("nosnapshots"))
		Expect(s.c.Create(ctx, b)).To(Succeed())
		s.failedWith(ctx, b, "NoSnapshotAPI",
			"the cluster has no VolumeSnapshot API (snapshot.storage.k8s.io/v1): install the CSI snapshot CRDs and snapshot-controller")
	})
})
