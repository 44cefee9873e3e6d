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
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
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

	It("creates each run's backup, keeps the last 2 Completed of 4, and leaves foreign backups alone", func(ctx SpecContext) {
		ns := k8s.Namespace(ctx, "sdbb-")
		// Backups labelled as the schedule's but made by hand, one with no annotation, one with
		// the UID annotation of another schedule: the schedule's own are told by its own UID
		// (or its controller reference), never by the label.
		foreign := BuildBackup(newSchedule("sdbb"), at(1, 0))
		foreign.Namespace = ns
		delete(foreign.Annotations, databasev1alpha1.ScheduleUIDAnnotation)
		forged := BuildBackup(newSchedule("sdbb"), at(1, 5))
		forged.Namespace = ns
		forged.Annotations[databasev1alpha1.ScheduleUIDAnnotation] = "5b0a1c2e-0000-4000-8000-0000000000aa"
		for _, b := range []*databasev1alpha1.DatabaseBackup{foreign, forged} {
			Expect(k8s.Create(ctx, b)).To(Succeed())
			complete(ctx, ns, b.Name, at(1, 6))
		}

		s := newSchedule("sdbb", withKeepLast(2))
		s.Namespace = ns
		Expect(k8s.Create(ctx, s)).To(Succeed())
		var first *databasev1alpha1.DatabaseBackup
		Eventually(func(g Gomega) {
			first = testenv.Read[*databasev1alpha1.DatabaseBackup](ctx, k8s, client.ObjectKey{Namespace: ns, Name: s.BackupName(at(2, 0))})(g)
		}).Should(Succeed())
		Expect(first.OwnerReferences).To(BeEmpty())
		Expect(first.ObjectMeta.Labels).To(Equal(map[string]string{
			"database.seed1b407122.io/schedule": "sdbb", "app.kubernetes.io/managed-by": "database-operator",
		}))
		Expect(first.Annotations).To(Equal(map[string]string{
			"database.seed1b407122.io/scheduled-at": "2030-01-02T02:00:00Z",
			"database.seed1b407122.io/schedule-uid": string(s.UID),
		}))
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
		Expect(backupNames(ctx, ns)(Default)).To(ConsistOf(foreign.Name, forged.Name, first.Name))

		var runs []string
		for i, minute := range []int{0, 5, 10, 15} {
			if i > 0 {
				reconcileAt(ctx, s, at(2, minute).Add(3*time.Second))
			}
			runs = append(runs, s.BackupName(at(2, minute)))
			Eventually(backupNames(ctx, ns)).Should(ContainElement(runs[i]))
			complete(ctx, ns, runs[i], at(2, minute+2))
		}
		Eventually(backupNames(ctx, ns)).Should(ConsistOf(foreign.Name, forged.Name, runs[2], runs[3]))
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
		Consistently(backupNames(ctx, ns), 2*time.Second).Should(ConsistOf(foreign.Name, forged.Name, runs[2], runs[3]))

		schedules.Update(ctx, s, func(s *databasev1alpha1.ScheduledDatabaseBackup) { s.Spec.Suspend = false })
		Eventually(k8s.Condition(ctx, s, "Suspended")).Should(Equal([]string{"False", "NotSuspended", "new runs start on schedule"}))
		Eventually(backupNames(ctx, ns)).Should(ConsistOf(foreign.Name, forged.Name, runs[2], runs[3], s.BackupName(at(2, 20))))

		By("the foreign backups are untouched")
		for _, b := range []*databasev1alpha1.DatabaseBackup{foreign, forged} {
			kept := testenv.Read[*databasev1alpha1.DatabaseBackup](ctx, k8s, client.ObjectKeyFromObject(b))(Default)
			Expect(kept.OwnerReferences).To(BeEmpty())
			Expect(kept.Annotations).To(Equal(b.Annotations))
			Expect(kept.Status.Phase).To(Equal(databasev1alpha1.BackupCompleted))
			Expect(kept.DeletionTimestamp).To(BeNil())
		}
	})

	It("leaves a run's name held by a backup it does not control alone, says so, and runs once it is free", func(ctx SpecContext) {
		ns := k8s.Namespace(ctx, "sdbb-")
		specClock.Set(at(4, 0).Add(5 * time.Second))
		s := newSchedule("held")
		s.Namespace = ns
		// As a run of the schedule would be, but annotated with the UID of another schedule.
		holder := BuildBackup(s, at(4, 0))
		holder.Namespace = ns
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

		// The deletion of a backup labelled with the schedule's name wakes the schedule, which may
		// take the freed name at once: what is waited for is the holder's UID gone.
		Expect(k8s.Delete(ctx, holder)).To(Succeed())
		Eventually(func(g Gomega) types.UID {
			b := &databasev1alpha1.DatabaseBackup{}
			err := k8s.Get(ctx, client.ObjectKeyFromObject(holder), b)
			if apierrors.IsNotFound(err) {
				return ""
			}
			g.Expect(err).NotTo(HaveOccurred())
			return b.UID
		}).ShouldNot(Equal(holder.UID))
		reconcileAt(ctx, s, at(4, 0).Add(20*time.Second))
		Eventually(k8s.Condition(ctx, s, "Degraded")).Should(Equal([]string{"False", "AsExpected", "every child is controlled by this resource"}))
		run := testenv.Read[*databasev1alpha1.DatabaseBackup](ctx, k8s, client.ObjectKeyFromObject(holder))(Default)
		Expect(run.Annotations).To(HaveKeyWithValue("database.seed1b407122.io/schedule-uid", string(schedules.Current(ctx, s)(Default).UID)))
		Expect(run.OwnerReferences).To(BeEmpty())
	})

	// envtest runs no garbage collector: deleting a schedule here cannot show what the
	// collector would do to its backups. What decides it is whether a backup carries an owner
	// reference to the schedule, so that is what these specs assert; the e2e suite, on a
	// control plane with kube-controller-manager, deletes schedules for real
	// (test/e2e/schedule_test.go, test/e2e/datasafety_test.go).
	Describe("what deleting a schedule does to its backups", func() {
		// backupOf reads the backup of s's run of minute t.
		backupOf := func(ctx SpecContext, s *databasev1alpha1.ScheduledDatabaseBackup, t time.Time) func(Gomega) *databasev1alpha1.DatabaseBackup {
			return testenv.Read[*databasev1alpha1.DatabaseBackup](ctx, k8s, client.ObjectKey{Namespace: s.Namespace, Name: s.BackupName(t)})
		}
		// annotations are those of s's run of minute t.
		annotations := func(t time.Time, uid types.UID) map[string]string {
			return map[string]string{
				"database.seed1b407122.io/scheduled-at": t.UTC().Format(time.RFC3339),
				"database.seed1b407122.io/schedule-uid": string(uid),
			}
		}
		// unchanged says that b is stored as it was when read, for a while: nothing wrote it.
		unchanged := func(ctx SpecContext, b *databasev1alpha1.DatabaseBackup) {
			GinkgoHelper()
			Consistently(func(g Gomega) string {
				return testenv.Current(ctx, k8s, b)(g).GetResourceVersion()
			}, 2*time.Second).Should(Equal(b.ResourceVersion), b.Name)
		}

		It("sets no owner reference on a run's backup by default, so deleting the schedule leaves it", func(ctx SpecContext) {
			ns := k8s.Namespace(ctx, "sdbb-")
			specClock.Set(at(5, 0).Add(4 * time.Second))
			s := newSchedule("kept")
			s.Namespace = ns
			Expect(k8s.Create(ctx, s)).To(Succeed())
			Expect(s.Spec.BackupOwnerReference).To(Equal(databasev1alpha1.BackupOwnerNone), "the default")
			Eventually(backupOf(ctx, s, at(5, 0))).Should(Not(BeNil()))
			complete(ctx, ns, s.BackupName(at(5, 0)), at(5, 2))
			run := backupOf(ctx, s, at(5, 0))(Default)
			Expect(run.OwnerReferences).To(BeEmpty())
			Expect(run.Annotations).To(Equal(annotations(at(5, 0), s.UID)))

			k8s.DeleteAndWait(ctx, s)
			unchanged(ctx, run)
			Expect(run.Status.Phase).To(Equal(databasev1alpha1.BackupCompleted))
			Expect(run.DeletionTimestamp).To(BeNil())
		})

		It("controls a run's backup under backupOwnerReference schedule, and releases it and 0.3.0's when that changes to none", func(ctx SpecContext) {
			ns := k8s.Namespace(ctx, "sdbb-")
			specClock.Set(at(6, 0).Add(4 * time.Second))
			s := newSchedule("owning", withBackupOwner(databasev1alpha1.BackupOwnerSchedule))
			s.Namespace = ns
			Expect(k8s.Create(ctx, s)).To(Succeed())
			Eventually(backupOf(ctx, s, at(6, 0))).Should(Not(BeNil()))
			run := backupOf(ctx, s, at(6, 0))(Default)
			controller := scheduleParent("owning", s.UID).OwnerReferences()
			Expect(run.OwnerReferences).To(Equal(controller), "deleting the schedule would delete it")
			Expect(run.Annotations).To(Equal(annotations(at(6, 0), s.UID)))

			By("a backup 0.3.0 made stays controlled under backupOwnerReference schedule")
			old := BuildBackup(s, at(5, 55))
			delete(old.Annotations, databasev1alpha1.ScheduleUIDAnnotation)
			Expect(k8s.Create(ctx, old)).To(Succeed())
			Expect(old.OwnerReferences).To(Equal(controller))
			unchanged(ctx, old)

			By("changed to none, both lose the controller reference and carry the schedule's UID")
			schedules.Update(ctx, s, func(s *databasev1alpha1.ScheduledDatabaseBackup) {
				s.Spec.BackupOwnerReference = databasev1alpha1.BackupOwnerNone
			})
			for _, t := range []time.Time{at(5, 55), at(6, 0)} {
				Eventually(func(g Gomega) {
					b := backupOf(ctx, s, t)(g)
					g.Expect(b.OwnerReferences).To(BeEmpty())
					g.Expect(b.Annotations).To(Equal(annotations(t, s.UID)))
					g.Expect(b.ObjectMeta.Labels).To(Equal(map[string]string{
						"database.seed1b407122.io/schedule": "owning", "app.kubernetes.io/managed-by": "database-operator",
					}))
				}).Should(Succeed())
			}
			Eventually(schedules.Events(ctx, s)).Should(ContainElement(
				"Normal BackupsReleased: Removed the schedule's controller reference from 2 backup(s), which now outlive it (backupOwnerReference none): " +
					old.Name + ", " + run.Name))
		})

		It("releases the backups 0.3.0 made for the schedule, and leaves backups controlled by anything else as they are", func(ctx SpecContext) {
			ns := k8s.Namespace(ctx, "sdbb-")
			// Suspended: no run, only the backups below.
			s := newSchedule("upgraded", withSuspend(true))
			s.Namespace = ns
			Expect(k8s.Create(ctx, s)).To(Succeed())
			tool := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "tool", Namespace: ns}}
			Expect(k8s.Create(ctx, tool)).To(Succeed())
			// v030 is a backup of the schedule's name and label as 0.3.0 made a run: annotated
			// with its minute, not with a UID, and controlled by controller.
			v030 := func(t time.Time, controller testenv.Parent) *databasev1alpha1.DatabaseBackup {
				b := BuildBackup(s, t)
				delete(b.Annotations, databasev1alpha1.ScheduleUIDAnnotation)
				b.OwnerReferences = controller.OwnerReferences()
				return b
			}
			ours := v030(at(1, 0), scheduleParent("upgraded", s.UID))
			// Controlled by a ConfigMap, and by an earlier schedule of the same name (another UID).
			theirs := v030(at(1, 5), testenv.Parent{APIVersion: "v1", Kind: "ConfigMap", Name: "tool", UID: tool.UID})
			earlier := v030(at(1, 10), scheduleParent("upgraded", "5b0a1c2e-0000-4000-8000-0000000000ee"))
			for _, b := range []*databasev1alpha1.DatabaseBackup{ours, theirs, earlier} {
				Expect(k8s.Create(ctx, b)).To(Succeed())
			}
			complete(ctx, ns, ours.Name, at(1, 2))

			Eventually(func(g Gomega) {
				b := testenv.Current(ctx, k8s, ours)(g)
				g.Expect(b.OwnerReferences).To(BeEmpty())
				g.Expect(b.Annotations).To(Equal(annotations(at(1, 0), s.UID)))
				g.Expect(b.ObjectMeta.Labels).To(Equal(ours.ObjectMeta.Labels))
				g.Expect(b.Status.Phase).To(Equal(databasev1alpha1.BackupCompleted))
			}).Should(Succeed())
			Eventually(schedules.Events(ctx, s)).Should(ConsistOf(
				"Normal BackupsReleased: Removed the schedule's controller reference from 1 backup(s), which now outlive it (backupOwnerReference none): " + ours.Name))
			for _, b := range []*databasev1alpha1.DatabaseBackup{theirs, earlier} {
				kept := testenv.Current(ctx, k8s, b)(Default)
				Expect(kept.OwnerReferences).To(Equal(b.OwnerReferences), b.Name)
				Expect(kept.Annotations).To(Equal(b.Annotations), b.Name)
				Expect(kept.ResourceVersion).To(Equal(b.ResourceVersion), b.Name)
				unchanged(ctx, kept)
			}
			Eventually(func(g Gomega) {
				done := schedules.Current(ctx, s)(g).Status.LastSuccessfulTime
				g.Expect(done).NotTo(BeNil())
				g.Expect(done.Time).To(BeTemporally("==", at(1, 2)))
			}).Should(Succeed(), "the released backup is still the schedule's own")
		})

		It("never lets a schedule created again under the same name delete the backups of the one before", func(ctx SpecContext) {
			ns := k8s.Namespace(ctx, "sdbb-")
			specClock.Set(at(7, 0).Add(3 * time.Second))
			before := newSchedule("again", withKeepLast(1))
			before.Namespace = ns
			// twoRuns waits for the run of s at first, completes it a minute later, wakes s at
			// second and does the same with that run: retention (keepLast 1) then has two to act on.
			twoRuns := func(s *databasev1alpha1.ScheduledDatabaseBackup, first, second time.Time) {
				GinkgoHelper()
				Eventually(backupOf(ctx, s, first)).Should(Not(BeNil()))
				complete(ctx, ns, s.BackupName(first), first.Add(time.Minute))
				reconcileAt(ctx, s, second.Add(3*time.Second))
				Eventually(backupOf(ctx, s, second)).Should(Not(BeNil()))
				complete(ctx, ns, s.BackupName(second), second.Add(time.Minute))
			}
			Expect(k8s.Create(ctx, before)).To(Succeed())
			twoRuns(before, at(7, 0), at(7, 5))
			Eventually(backupNames(ctx, ns)).Should(ConsistOf(before.BackupName(at(7, 5))))
			k8s.DeleteAndWait(ctx, before)
			left := backupOf(ctx, before, at(7, 5))(Default)

			By("created again: a new UID, whose retention acts on its own runs only")
			specClock.Set(at(7, 10).Add(3 * time.Second))
			s := newSchedule("again", withKeepLast(1))
			s.Namespace = ns
			Expect(k8s.Create(ctx, s)).To(Succeed())
			Expect(s.UID).NotTo(Equal(before.UID))
			twoRuns(s, at(7, 10), at(7, 15))
			Eventually(backupNames(ctx, ns)).Should(ConsistOf(left.Name, s.BackupName(at(7, 15))))
			Eventually(schedules.Events(ctx, s)).Should(ContainElement(
				"Normal BackupsDeleted: Deleted 1 backup(s) by retention: " + s.BackupName(at(7, 10))))
			unchanged(ctx, left)
			Expect(left.Annotations).To(Equal(annotations(at(7, 5), before.UID)))
			Expect(left.Status.Phase).To(Equal(databasev1alpha1.BackupCompleted))
			Expect(schedules.Events(ctx, s)(Default)).NotTo(ContainElement(
				And(HavePrefix("Normal BackupsDeleted:"), ContainSubstring(left.Name))))
		})
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
