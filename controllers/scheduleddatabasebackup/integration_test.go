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

package scheduleddatabasebackup

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/testenv"
)

// The envtest specs run the controller in a manager against a real kube-apiserver and etcd, on a
// clock they move (specClock): a schedule of minutes is driven in milliseconds. envtest runs no
// backup controller: the specs write the backups' status themselves.
var _ = Describe("ScheduledDatabaseBackup controller", Ordered, Label("integration"), func() {
	k8s := testenv.StartInBeforeAll(setupController)
	schedules := testenv.Kind[*databasev1alpha1.ScheduledDatabaseBackup, *databasev1alpha1.DatabaseBackup]{
		Env: k8s, Name: "ScheduledDatabaseBackup",
		ChildName: func(s *databasev1alpha1.ScheduledDatabaseBackup) string { return s.Status.LastBackupName },
	}

	// A few seconds past a minute of the schedule, as a real clock would read it.
	BeforeAll(func() { specClock.Set(at(2, 0).Add(7 * time.Second)) })

	// reconcileAt moves the clock to t and runs one reconcile of s, as the requeue at the next run
	// would (a requeue on the specs' clock would wait for real time).
	reconcileAt := func(ctx SpecContext, s *databasev1alpha1.ScheduledDatabaseBackup, t time.Time) {
		GinkgoHelper()
		specClock.Set(t)
		Eventually(func(g Gomega) {
			_, err := reconciler.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(s)})
			g.Expect(err).NotTo(HaveOccurred())
		}).Should(Succeed())
	}
	// complete writes what the backup controller would once the backup's snapshots are ready.
	complete := func(ctx SpecContext, ns, name string, done time.Time) {
		GinkgoHelper()
		b := &databasev1alpha1.DatabaseBackup{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, b)).To(Succeed())
		patch := client.MergeFrom(b.DeepCopy())
		b.Status.Phase = databasev1alpha1.BackupCompleted
		b.Status.CompletionTime = ptr.To(metav1.NewTime(done))
		Expect(k8s.Status().Patch(ctx, b, patch)).To(Succeed())
	}
	// backupNames lists the names of the backups in ns.
	backupNames := func(ctx SpecContext, ns string) func(Gomega) []string {
		return func(g Gomega) []string {
			list := &databasev1alpha1.DatabaseBackupList{}
			g.Expect(k8s.List(ctx, list, client.InNamespace(ns))).To(Succeed())
			var names []string
			for _, b := range list.Items {
				if b.DeletionTimestamp == nil {
					names = append(names, b.Name)
				}
			}
			return names
		}
	}

	Describe("admission", func() {
		DescribeTable("refuses a spec that can never work, with a message",
			func(ctx SpecContext, change func(*databasev1alpha1.ScheduledDatabaseBackup), message string) {
				s := newSchedule("refused")
				s.Namespace = k8s.Namespace(ctx, "sdbb-")
				change(s)
				testenv.ExpectInvalid(k8s.Create(ctx, s), message)
			},
			Entry("no cluster", func(s *databasev1alpha1.ScheduledDatabaseBackup) { s.Spec.ClusterName = "" },
				`spec.clusterName: Invalid value: "": spec.clusterName in body should be at least 1 chars long`),
			Entry("a cluster name no DatabaseCluster can have", func(s *databasev1alpha1.ScheduledDatabaseBackup) { s.Spec.ClusterName = "Db_1" },
				`spec.clusterName: Invalid value: "Db_1": clusterName must be the name of a DatabaseCluster (a DNS-1035 label: lowercase letters, digits and '-', starting with a letter)`),
			Entry("a cluster name longer than a DatabaseCluster's", func(s *databasev1alpha1.ScheduledDatabaseBackup) { s.Spec.ClusterName = strings.Repeat("a", 53) },
				"spec.clusterName: Too long: may not be more than 52 bytes"),
			Entry("no schedule", withSchedule(""),
				`spec.schedule: Invalid value: "": spec.schedule in body should be at least 1 chars long`),
			Entry("a schedule of four fields", withSchedule("0 2 * *"),
				`spec.schedule: Invalid value: "0 2 * *": schedule must have five fields (minute hour day-of-month month day-of-week) or be one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly`),
			Entry("an unknown macro", withSchedule("@nightly"),
				"schedule must have five fields (minute hour day-of-month month day-of-week) or be one of @yearly"),
			Entry("an unknown method", func(s *databasev1alpha1.ScheduledDatabaseBackup) { s.Spec.Method = "Hot" },
				`spec.method: Unsupported value: "Hot": supported values: "Online", "Offline"`),
			Entry("a class name that is no object name", func(s *databasev1alpha1.ScheduledDatabaseBackup) { s.Spec.VolumeSnapshotClassName = "Fast Class" },
				`spec.volumeSnapshotClassName: Invalid value: "Fast Class": volumeSnapshotClassName must be a VolumeSnapshotClass name (a DNS subdomain: lowercase letters, digits, '-' and '.')`),
			Entry("a starting deadline of 0", withDeadline(0),
				"spec.startingDeadlineSeconds: Invalid value: 0: spec.startingDeadlineSeconds in body should be greater than or equal to 1"),
			Entry("keepLast 0", withKeepLast(0),
				"spec.retention.keepLast: Invalid value: 0: spec.retention.keepLast in body should be greater than or equal to 1"),
			Entry("a maxAge that is no duration", withMaxAge("7d"),
				`spec.retention.maxAge: Invalid value: "7d": maxAge must be a positive duration such as 168h or 90m (units h, m, s, ms)`),
			Entry("a maxAge of zero", withMaxAge("0s"),
				"maxAge must be a positive duration such as 168h or 90m"),
			Entry("a name too long for its backups' names", func(s *databasev1alpha1.ScheduledDatabaseBackup) { s.Name = strings.Repeat("s", 53) },
				"metadata.name must be at most 52 characters: each backup is named NAME-<unix time> and must fit in 63"),
		)

		It("defaults the method and the starting deadline, and takes a valid retention", func(ctx SpecContext) {
			s := newSchedule("defaults", withMaxAge("168h"), withKeepLast(7), withSuspend(true))
			s.Namespace = k8s.Namespace(ctx, "sdbb-")
			Expect(k8s.Create(ctx, s)).To(Succeed())
			Expect(s.Spec.Method).To(Equal(databasev1alpha1.BackupOnline))
			Expect(s.Spec.StartingDeadlineSeconds).To(Equal(ptr.To[int64](300)))
		})
	})

	It("creates each run's backup, keeps the last 2 Completed of 4, and leaves a foreign backup alone", func(ctx SpecContext) {
		ns := k8s.Namespace(ctx, "sdbb-")
		// A backup labelled as the schedule's but controlled by nothing: the schedule's own are
		// told by their controller reference, never by the label.
		foreign := BuildBackup(newSchedule("sdbb"), at(1, 0))
		foreign.Namespace, foreign.OwnerReferences = ns, nil
		Expect(k8s.Create(ctx, foreign)).To(Succeed())
		complete(ctx, ns, foreign.Name, at(1, 1))

		s := newSchedule("sdbb", withKeepLast(2))
		s.Namespace = ns
		Expect(k8s.Create(ctx, s)).To(Succeed())
		var first *databasev1alpha1.DatabaseBackup
		Eventually(func(g Gomega) {
			first = testenv.Read[*databasev1alpha1.DatabaseBackup](ctx, k8s, client.ObjectKey{Namespace: ns, Name: s.BackupName(at(2, 0))})(g)
		}).Should(Succeed())
		Expect(first.OwnerReferences).To(Equal(testenv.Parent{APIVersion: "database.seed1b407122.io/v1alpha1",
			Kind: "ScheduledDatabaseBackup", Name: "sdbb", UID: s.UID}.OwnerReferences()))
		Expect(first.ObjectMeta.Labels).To(HaveKeyWithValue("database.seed1b407122.io/schedule", "sdbb"))
		Expect(first.Spec).To(Equal(databasev1alpha1.DatabaseBackupSpec{ClusterName: "db", Method: databasev1alpha1.BackupOnline}))
		Eventually(schedules.Current(ctx, s)).Should(WithTransform(func(s *databasev1alpha1.ScheduledDatabaseBackup) databasev1alpha1.ScheduledDatabaseBackupStatus {
			st := s.Status
			st.Conditions = nil
			if st.LastScheduleTime != nil { // as read back, in the local zone
				st.LastScheduleTime = ptr.To(metav1.NewTime(st.LastScheduleTime.UTC()))
			}
			return st
		}, Equal(databasev1alpha1.ScheduledDatabaseBackupStatus{
			LastScheduleTime: ptr.To(metav1.NewTime(at(2, 0))), LastBackupName: first.Name,
			Active: []string{first.Name}, ObservedGeneration: 1,
		})))
		Eventually(k8s.Condition(ctx, s, "Ready")).Should(Equal([]string{"True", "Scheduled", `backs up cluster db on schedule "*/5 * * * *"`}))
		Eventually(k8s.Condition(ctx, s, "Suspended")).Should(Equal([]string{"False", "NotSuspended", "new runs start on schedule"}))
		Eventually(k8s.Condition(ctx, s, "Degraded")).Should(Equal([]string{"False", "AsExpected", "every child is controlled by this resource"}))

		// A reconcile again within the same minute finds the run's backup and makes no second.
		reconcileAt(ctx, s, at(2, 0).Add(40*time.Second))
		Expect(backupNames(ctx, ns)(Default)).To(ConsistOf(foreign.Name, first.Name))

		var runs []string
		for i, minute := range []int{0, 5, 10, 15} {
			if i > 0 {
				reconcileAt(ctx, s, at(2, minute).Add(3*time.Second))
			}
			runs = append(runs, s.BackupName(at(2, minute)))
			Eventually(backupNames(ctx, ns)).Should(ContainElement(runs[i]))
			complete(ctx, ns, runs[i], at(2, minute+2))
		}
		Eventually(backupNames(ctx, ns)).Should(ConsistOf(foreign.Name, runs[2], runs[3]))
		Eventually(func(g Gomega) {
			st := schedules.Current(ctx, s)(g).Status
			g.Expect(st.LastBackupName).To(Equal(runs[3]))
			g.Expect(st.LastScheduleTime.Time).To(BeTemporally("==", at(2, 15)))
			g.Expect(st.LastSuccessfulTime.Time).To(BeTemporally("==", at(2, 17)))
			g.Expect(st.Active).To(BeEmpty())
		}).Should(Succeed())
		Eventually(schedules.Events(ctx, s)).Should(ContainElements(
			"Normal BackupCreated: Created DatabaseBackup "+runs[0]+" of cluster db for the run of 2030-01-02T02:00:00Z",
			"Normal BackupCreated: Created DatabaseBackup "+runs[3]+" of cluster db for the run of 2030-01-02T02:15:00Z",
			"Normal BackupsDeleted: Deleted 1 backup(s) by retention: "+runs[0],
			"Normal BackupsDeleted: Deleted 1 backup(s) by retention: "+runs[1],
		))

		By("suspended, no run starts; resumed, the next one does")
		schedules.Update(ctx, s, func(s *databasev1alpha1.ScheduledDatabaseBackup) { s.Spec.Suspend = true })
		Eventually(k8s.Condition(ctx, s, "Suspended")).Should(Equal([]string{"True", "SuspendedByUser",
			"spec.suspend is true: no new run starts; retention still applies"}))
		reconcileAt(ctx, s, at(2, 20).Add(3*time.Second))
		Consistently(backupNames(ctx, ns), 2*time.Second).Should(ConsistOf(foreign.Name, runs[2], runs[3]))

		schedules.Update(ctx, s, func(s *databasev1alpha1.ScheduledDatabaseBackup) { s.Spec.Suspend = false })
		Eventually(k8s.Condition(ctx, s, "Suspended")).Should(Equal([]string{"False", "NotSuspended", "new runs start on schedule"}))
		Eventually(backupNames(ctx, ns)).Should(ConsistOf(foreign.Name, runs[2], runs[3], s.BackupName(at(2, 20))))

		By("the foreign backup is untouched")
		kept := &databasev1alpha1.DatabaseBackup{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(foreign), kept)).To(Succeed())
		Expect(kept.OwnerReferences).To(BeEmpty())
		Expect(kept.Status.Phase).To(Equal(databasev1alpha1.BackupCompleted))
	})

	It("leaves a run's name held by a backup it does not control alone, says so, and runs once it is free", func(ctx SpecContext) {
		ns := k8s.Namespace(ctx, "sdbb-")
		specClock.Set(at(4, 0).Add(5 * time.Second))
		s := newSchedule("held")
		s.Namespace = ns
		holder := BuildBackup(s, at(4, 0))
		holder.Namespace, holder.OwnerReferences = ns, nil
		Expect(k8s.Create(ctx, holder)).To(Succeed())
		Expect(k8s.Create(ctx, s)).To(Succeed())

		message := "DatabaseBackup " + holder.Name + " exists and is not controlled by this resource (held by no controller): it is left as it is until the name is free"
		Eventually(k8s.Condition(ctx, s, "Degraded")).Should(Equal([]string{"True", "ChildConflict", message}))
		Eventually(k8s.Condition(ctx, s, "Ready")).Should(Equal([]string{"False", "ChildConflict", message}))
		Eventually(schedules.Events(ctx, s)).Should(ConsistOf("Warning ChildConflict: " + message))
		kept := &databasev1alpha1.DatabaseBackup{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(holder), kept)).To(Succeed())
		Expect(kept.OwnerReferences).To(BeEmpty())
		Expect(kept.ResourceVersion).To(Equal(holder.ResourceVersion))

		k8s.DeleteAndWait(ctx, holder)
		reconcileAt(ctx, s, at(4, 0).Add(20*time.Second))
		Eventually(k8s.Condition(ctx, s, "Degraded")).Should(Equal([]string{"False", "AsExpected", "every child is controlled by this resource"}))
		run := testenv.Read[*databasev1alpha1.DatabaseBackup](ctx, k8s, client.ObjectKeyFromObject(holder))(Default)
		Expect(metav1.IsControlledBy(run, schedules.Current(ctx, s)(Default))).To(BeTrue())
	})

	It("skips a run missed by more than the starting deadline", func(ctx SpecContext) {
		ns := k8s.Namespace(ctx, "sdbb-")
		specClock.Set(at(3, 0).Add(90 * time.Second))
		s := newSchedule("late", withDeadline(60))
		s.Namespace = ns
		Expect(k8s.Create(ctx, s)).To(Succeed())
		Eventually(k8s.Condition(ctx, s, "Ready")).Should(Equal([]string{"True", "Scheduled", `backs up cluster db on schedule "*/5 * * * *"`}))
		Consistently(backupNames(ctx, ns), 2*time.Second).Should(BeEmpty())
		reconcileAt(ctx, s, at(3, 5).Add(59*time.Second))
		Eventually(backupNames(ctx, ns)).Should(ConsistOf(s.BackupName(at(3, 5))))
	})

	It("reports a schedule that never fires, and creates nothing", func(ctx SpecContext) {
		ns := k8s.Namespace(ctx, "sdbb-")
		s := newSchedule("never", withSchedule("0 0 30 2 *"))
		s.Namespace = ns
		Expect(k8s.Create(ctx, s)).To(Succeed())
		message := `invalid schedule "0 0 30 2 *": it never fires: no month it names has a day of the month it names (e.g. 30 February)`
		Eventually(k8s.Condition(ctx, s, "Ready")).Should(Equal([]string{"False", "InvalidSchedule", message}))
		Eventually(schedules.Events(ctx, s)).Should(ConsistOf("Warning InvalidSchedule: " + message))
		Expect(backupNames(ctx, ns)(Default)).To(BeEmpty())
		Eventually(schedules.Series(s)).Should(Equal(testenv.WantConditionSeries(
			map[string]string{"Ready": "false", "Suspended": "false", "Degraded": "false"})))

		By("its series forgotten once it is gone")
		k8s.DeleteAndWait(ctx, s)
		Eventually(schedules.Series(s)).Should(BeEmpty())
	})
})
