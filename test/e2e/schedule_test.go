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
	"time"

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
		// An older backup of the schedule's own (controlled by it, as a run's is), and a foreign one
		// that carries the schedule's label but no controller: both Completed by the real controller.
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
				if metav1.IsControlledBy(&b, s) && b.Name != own.Name {
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
		Expect(metav1.IsControlledBy(run, s)).To(BeTrue())
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
		var events eventsv1.EventList
		Expect(k8s.List(ctx, &events, client.InNamespace(ns))).To(Succeed())
		var notes []string
		for _, e := range events.Items {
			if e.Regarding.Kind == "ScheduledDatabaseBackup" && e.Regarding.Name == s.Name {
				notes = append(notes, e.Reason+": "+e.Note)
			}
		}
		Expect(notes).To(ContainElements(
			"BackupCreated: Created DatabaseBackup "+run.Name+" of cluster ledger for the run of "+minute.UTC().Format(time.RFC3339),
			"BackupsDeleted: Deleted 1 backup(s) by retention: minutely-old",
		))
		// The schedule is suspended again so that no run starts while the suite goes on.
		Expect(k8s.Patch(ctx, s, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"suspend":true}}`)))).To(Succeed())
	})
})
