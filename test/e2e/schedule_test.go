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
	"context"
	"fmt"
	"time"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// ScheduledDatabaseBackup on the real clock: a schedule of every minute, its runs backed up by
// the real backup controller, snapshot-controller and simulated CSI driver. One run is waited
// for (at most a minute to the next minute, then the backup), not four: envtest drives the
// clock through the longer story (4 runs, 2 kept), this spec proves the parts fit together.
var _ = Describe("ScheduledDatabaseBackup on the local control plane", Ordered, func() {
	const ns = "e2e-schedule"
	dc := &databasev1alpha1.DatabaseCluster{}

	BeforeAll(func(ctx SpecContext) {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		dc = smallCluster(ns, "ledger", 1)
		createAvailable(ctx, dc)
	})

	It("backs up on the minute and lets the older backup go (keepLast 1), never a foreign one", func(ctx SpecContext) {
		// Suspended first, so that the backups made by hand below exist before any run.
		s := &databasev1alpha1.ScheduledDatabaseBackup{
			ObjectMeta: metav1.ObjectMeta{Name: "minutely", Namespace: ns},
			Spec: databasev1alpha1.ScheduledDatabaseBackupSpec{
				ClusterName: dc.Name, Schedule: "* * * * *", Suspend: true,
				StartingDeadlineSeconds: ptr.To[int64](30),
				Retention:               databasev1alpha1.BackupRetention{KeepLast: ptr.To[int32](1)},
			},
		}
		Expect(k8s.Create(ctx, s)).To(Succeed())
		// An older backup of the schedule's own as 0.3.0 made a run (labelled, controlled by the
		// schedule, no UID annotation: the operator releases it from the controller reference and
		// its retention still counts it), and a foreign one that carries the schedule's label and
		// nothing else: both Completed by the real controller.
		own := &databasev1alpha1.DatabaseBackup{
			ObjectMeta: metav1.ObjectMeta{Name: "minutely-old", Namespace: ns,
				Labels:          map[string]string{databasev1alpha1.ScheduleLabel: s.Name},
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(s, databasev1alpha1.GroupVersion.WithKind("ScheduledDatabaseBackup"))}},
			Spec: databasev1alpha1.DatabaseBackupSpec{ClusterName: dc.Name},
		}
		foreign := &databasev1alpha1.DatabaseBackup{
			ObjectMeta: metav1.ObjectMeta{Name: "minutely-by-hand", Namespace: ns,
				Labels: map[string]string{databasev1alpha1.ScheduleLabel: s.Name}},
			Spec: databasev1alpha1.DatabaseBackupSpec{ClusterName: dc.Name},
		}
		for _, b := range []*databasev1alpha1.DatabaseBackup{own, foreign} {
			Expect(k8s.Create(ctx, b)).To(Succeed())
		}
		for _, b := range []*databasev1alpha1.DatabaseBackup{own, foreign} {
			Eventually(func(g Gomega) databasev1alpha1.BackupPhase {
				g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
				return b.Status.Phase
			}).Should(Equal(databasev1alpha1.BackupCompleted), b.Name)
		}

		began := time.Now()
		Expect(k8s.Patch(ctx, s, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"suspend":false}}`)))).To(Succeed())
		// The run: the one backup the schedule controls besides the old one. Its minute is the
		// first after the resume, or one missed within startingDeadlineSeconds before it (a
		// resumed schedule catches up one run, as a CronJob does).
		run := &databasev1alpha1.DatabaseBackup{}
		Eventually(func(g Gomega) databasev1alpha1.BackupPhase {
			var list databasev1alpha1.DatabaseBackupList
			g.Expect(k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
			var runs []databasev1alpha1.DatabaseBackup
			for _, b := range list.Items {
				if b.Annotations[databasev1alpha1.ScheduleUIDAnnotation] == string(s.UID) && b.Name != own.Name {
					runs = append(runs, b)
				}
			}
			g.Expect(runs).To(HaveLen(1))
			*run = runs[0]
			return run.Status.Phase
		}).WithTimeout(100 * time.Second).WithPolling(time.Second).Should(Equal(databasev1alpha1.BackupCompleted))
		minute, err := time.Parse(time.RFC3339, run.Annotations["database.seed1b407122.io/scheduled-at"])
		Expect(err).NotTo(HaveOccurred())
		Expect(run.Name).To(Equal(s.BackupName(minute)))
		Expect(minute).To(BeTemporally(">=", began.Add(-30*time.Second)))
		Expect(minute).To(BeTemporally("<=", began.Add(time.Minute)))
		AddReportEntry("resume → the next minute's run Completed", time.Since(began).Round(time.Millisecond).String())
		Expect(run.OwnerReferences).To(BeEmpty(), "a run outlives its schedule by default")
		Expect(run.ObjectMeta.Labels).To(HaveKeyWithValue(databasev1alpha1.ScheduleLabel, s.Name))
		Expect(run.Spec).To(Equal(databasev1alpha1.DatabaseBackupSpec{ClusterName: dc.Name, Method: databasev1alpha1.BackupOnline}))
		Expect(run.Status.Members).To(HaveLen(1))

		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(own), &databasev1alpha1.DatabaseBackup{}))
		}).Should(BeTrue(), "the older backup of the schedule is let go")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(foreign), foreign)).To(Succeed())
		Expect(foreign.DeletionTimestamp).To(BeNil(), "a backup the schedule does not control is never deleted")

		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
			g.Expect(s.Status.LastBackupName).To(Equal(run.Name))
			g.Expect(s.Status.LastScheduleTime.Time).To(BeTemporally("==", minute))
			g.Expect(s.Status.LastSuccessfulTime).NotTo(BeNil())
			g.Expect(s.Status.Active).To(BeEmpty())
			g.Expect(meta.IsStatusConditionTrue(s.Status.Conditions, databasev1alpha1.ConditionScheduleReady)).To(BeTrue())
		}).Should(Succeed())
		// The recorder sends events from a queue after the status write: awaited, not read once.
		Eventually(func(g Gomega) []string {
			var events eventsv1.EventList
			g.Expect(k8s.List(ctx, &events, client.InNamespace(ns))).To(Succeed())
			var notes []string
			for _, e := range events.Items {
				if e.Regarding.Kind == "ScheduledDatabaseBackup" && e.Regarding.Name == s.Name {
					notes = append(notes, e.Reason+": "+e.Note)
				}
			}
			return notes
		}).Should(ContainElements(
			"BackupsReleased: Removed the schedule's controller reference from 1 backup(s), which now outlive it (backupOwnerReference none): minutely-old",
			"BackupCreated: Created DatabaseBackup "+run.Name+" of cluster ledger for the run of "+minute.UTC().Format(time.RFC3339),
			"BackupsDeleted: Deleted 1 backup(s) by retention: minutely-old",
		))
		// The schedule is suspended again so that no run starts while the suite goes on.
		Expect(k8s.Patch(ctx, s, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"suspend":true}}`)))).To(Succeed())
	})

	It("keeps the backups and snapshots of a deleted schedule; under backupOwnerReference schedule they go with it", func(ctx SpecContext) {
		// Two schedules of every minute, created together so that one wait covers both runs.
		minutely := func(name string, owner databasev1alpha1.BackupOwnerReference) *databasev1alpha1.ScheduledDatabaseBackup {
			return &databasev1alpha1.ScheduledDatabaseBackup{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				Spec: databasev1alpha1.ScheduledDatabaseBackupSpec{
					ClusterName: dc.Name, Schedule: "* * * * *", StartingDeadlineSeconds: ptr.To[int64](30),
					BackupOwnerReference: owner,
				},
			}
		}
		kept, owning := minutely("kept", databasev1alpha1.BackupOwnerNone), minutely("owning", databasev1alpha1.BackupOwnerSchedule)
		for _, s := range []*databasev1alpha1.ScheduledDatabaseBackup{kept, owning} {
			Expect(k8s.Create(ctx, s)).To(Succeed())
		}
		keptRun, owningRun := completedRun(ctx, kept), completedRun(ctx, owning)
		for _, s := range []*databasev1alpha1.ScheduledDatabaseBackup{kept, owning} {
			Expect(k8s.Patch(ctx, s, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"suspend":true}}`)))).To(Succeed())
		}
		Expect(keptRun.OwnerReferences).To(BeEmpty())
		Expect(owningRun.OwnerReferences).To(Equal([]metav1.OwnerReference{
			*metav1.NewControllerRef(owning, databasev1alpha1.GroupVersion.WithKind("ScheduledDatabaseBackup")),
		}))
		keptState := backupAndSnapshots(ctx, keptRun)(Default)
		Expect(keptState).To(HaveLen(2), "the backup and the snapshot of the one member")
		owningSnapshot := owningRun.Status.Members[0].VolumeSnapshotName

		By("deleting both schedules: the garbage collector deletes the run of the one that controls it")
		deleteScheduleAndWaitForCollector(ctx, kept)
		deleteScheduleAndWaitForCollector(ctx, owning)
		Eventually(func(g Gomega) {
			g.Expect(apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(owningRun), &databasev1alpha1.DatabaseBackup{}))).To(BeTrue())
			err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: owningSnapshot}, &snapshotv1.VolumeSnapshot{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the snapshot goes with its backup")
		}).Should(Succeed())
		Consistently(backupAndSnapshots(ctx, keptRun), 3*time.Second).Should(Equal(keptState),
			"the backup of the schedule that does not control it is kept, Completed, with its ready snapshot")
	})
})

// completedRun waits for the first run of s to be Completed and returns it: the backup annotated
// with s's UID. A schedule of every minute runs within a minute (plus the backup's time).
func completedRun(ctx SpecContext, s *databasev1alpha1.ScheduledDatabaseBackup) *databasev1alpha1.DatabaseBackup {
	GinkgoHelper()
	run := &databasev1alpha1.DatabaseBackup{}
	Eventually(func(g Gomega) databasev1alpha1.BackupPhase {
		var list databasev1alpha1.DatabaseBackupList
		g.Expect(k8s.List(ctx, &list, client.InNamespace(s.Namespace))).To(Succeed())
		var runs []databasev1alpha1.DatabaseBackup
		for _, b := range list.Items {
			if b.Annotations[databasev1alpha1.ScheduleUIDAnnotation] == string(s.UID) {
				runs = append(runs, b)
			}
		}
		g.Expect(runs).NotTo(BeEmpty())
		*run = runs[0]
		return run.Status.Phase
	}).WithTimeout(100*time.Second).WithPolling(time.Second).Should(Equal(databasev1alpha1.BackupCompleted), s.Name)
	return run
}

// backupAndSnapshots reads b and its VolumeSnapshots as a deletion would change them: of the
// backup its UID, phase, owners and deletion, of each snapshot its UID, readiness and deletion. A
// backup that is not Completed with every snapshot ready, or is being deleted, fails the read.
func backupAndSnapshots(ctx context.Context, b *databasev1alpha1.DatabaseBackup) func(Gomega) []string {
	return func(g Gomega) []string {
		current := &databasev1alpha1.DatabaseBackup{}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), current)).To(Succeed())
		g.Expect(current.Status.Phase).To(Equal(databasev1alpha1.BackupCompleted), b.Name)
		g.Expect(current.DeletionTimestamp).To(BeNil(), b.Name)
		state := []string{fmt.Sprintf("backup %s uid=%s owners=%v", current.Name, current.UID, current.OwnerReferences)}
		for _, m := range current.Status.Members {
			snap := &snapshotv1.VolumeSnapshot{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: m.VolumeSnapshotName}, snap)).To(Succeed())
			g.Expect(snap.DeletionTimestamp).To(BeNil(), snap.Name)
			g.Expect(snap.Status).NotTo(BeNil(), snap.Name)
			g.Expect(ptr.Deref(snap.Status.ReadyToUse, false)).To(BeTrue(), snap.Name)
			state = append(state, fmt.Sprintf("snapshot %s uid=%s content=%s", snap.Name, snap.UID,
				ptr.Deref(snap.Status.BoundVolumeSnapshotContentName, "")))
		}
		return state
	}
}

// deleteScheduleAndWaitForCollector deletes s and waits until the garbage collector has acted on
// its dependents: a ConfigMap made a dependent of s (an owner reference that is not a
// controller's) is gone. From then on, a backup the collector would delete with s is being
// deleted or gone.
func deleteScheduleAndWaitForCollector(ctx SpecContext, s *databasev1alpha1.ScheduledDatabaseBackup) {
	GinkgoHelper()
	sentinel := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: s.Name + "-sentinel", Namespace: s.Namespace,
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: databasev1alpha1.GroupVersion.String(), Kind: "ScheduledDatabaseBackup", Name: s.Name, UID: s.UID,
		}},
	}}
	Expect(k8s.Create(ctx, sentinel)).To(Succeed())
	Expect(k8s.Delete(ctx, s)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(s), &databasev1alpha1.ScheduledDatabaseBackup{}))).To(BeTrue())
		g.Expect(apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(sentinel), &corev1.ConfigMap{}))).To(BeTrue(),
			"the garbage collector deleted the schedule's dependent")
	}).Should(Succeed())
}
