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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
	"github.com/seed1b407122/database-operator/controllers/internal/cronschedule"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

var _ = Describe("planRuns", Label("unit"), func() {
	type want struct{ due, missed, next time.Time }
	var zero time.Time

	DescribeTable("starts the most recent run within the starting deadline, at most one",
		func(schedule string, last, now time.Time, deadline time.Duration, expected want) {
			sched, err := cronschedule.Parse(schedule)
			Expect(err).NotTo(HaveOccurred())
			p := planRuns(sched, last, now, deadline)
			Expect(want(p)).To(Equal(expected))
		},
		Entry("nothing due before the first minute", "*/5 * * * *", at(2, 1), at(2, 4), 5*time.Minute,
			want{zero, zero, at(2, 5)}),
		Entry("the run of this minute", "*/5 * * * *", at(2, 0), at(2, 5), 5*time.Minute,
			want{at(2, 5), zero, at(2, 10)}),
		Entry("a run 30 s late still starts", "*/5 * * * *", at(2, 0), at(2, 5).Add(30*time.Second), 5*time.Minute,
			want{at(2, 5), zero, at(2, 10)}),
		Entry("already started: nothing due", "*/5 * * * *", at(2, 5), at(2, 7), 5*time.Minute,
			want{zero, zero, at(2, 10)}),
		Entry("three runs missed within the deadline: only the newest starts", "*/5 * * * *", at(2, 0), at(2, 17), 20*time.Minute,
			want{at(2, 15), zero, at(2, 20)}),
		Entry("a run missed by more than the deadline is skipped", "*/5 * * * *", at(2, 0), at(2, 7), 60*time.Second,
			want{zero, at(2, 5), at(2, 10)}),
		Entry("a day of outage: the run of the last minute within the deadline", "0 * * * *", at(2, 0), at(2, 0).AddDate(0, 0, 1).Add(2*time.Minute), 300*time.Second,
			want{at(2, 0).AddDate(0, 0, 1), zero, at(3, 0).AddDate(0, 0, 1)}),
		Entry("a day of outage, deadline passed: skipped, the missed one told", "0 * * * *", at(2, 0), at(2, 0).AddDate(0, 0, 1).Add(6*time.Minute), 300*time.Second,
			want{zero, at(3, 0), at(3, 0).AddDate(0, 0, 1)}),
		Entry("in UTC, whatever the zone of the clock", "0 2 * * *", at(1, 0), at(2, 0).In(time.FixedZone("UTC+2", 2*3600)), 300*time.Second,
			want{at(2, 0), zero, at(2, 0).AddDate(0, 0, 1)}),
		Entry("a macro", "@daily", at(0, 0), at(0, 0).AddDate(0, 0, 1).Add(time.Second), 300*time.Second,
			want{at(0, 0).AddDate(0, 0, 1), zero, at(0, 0).AddDate(0, 0, 2)}),
	)
})

var _ = Describe("chooseDeletions", Label("unit"), func() {
	// name is the name of the backup of schedule sdbb at minute m of 02:00.
	name := func(m int) string { return newSchedule("sdbb").BackupName(at(2, m)) }
	keep := func(n int32) databasev1alpha1.BackupRetention {
		return databasev1alpha1.BackupRetention{KeepLast: ptr.To(n)}
	}
	// b is the backup of minute m of 02:00 in phase, named by its API value.
	b := func(m int, phase databasev1alpha1.BackupPhase) databasev1alpha1.DatabaseBackup {
		return backupAt(at(2, m), phase)
	}
	now := at(3, 0)

	DescribeTable("deletes exactly what the retention lets go, oldest first",
		func(retention databasev1alpha1.BackupRetention, backups []databasev1alpha1.DatabaseBackup, expected []string) {
			Expect(chooseDeletions(retention, backups, now)).To(Equal(expected))
		},
		Entry("no retention: keeps all", databasev1alpha1.BackupRetention{},
			[]databasev1alpha1.DatabaseBackup{b(1, "Completed"), b(2, "Completed"), b(3, "Failed")}, nil),
		Entry("keepLast 2 of 4 Completed", keep(2),
			[]databasev1alpha1.DatabaseBackup{b(3, "Completed"), b(1, "Completed"), b(4, "Completed"), b(2, "Completed")},
			[]string{name(1), name(2)}),
		Entry("Running and Pending are never deleted, however old", keep(1),
			[]databasev1alpha1.DatabaseBackup{b(1, "Running"), b(2, "Pending"), b(3, "Completed"), b(4, "Completed"), b(5, "")},
			[]string{name(3)}),
		Entry("Failed older than the newest Completed go, newer ones stay", keep(5),
			[]databasev1alpha1.DatabaseBackup{b(1, "Failed"), b(2, "Completed"), b(3, "Failed")},
			[]string{name(1)}),
		Entry("Failed stay while nothing Completed", keep(1),
			[]databasev1alpha1.DatabaseBackup{b(1, "Failed"), b(2, "Failed")}, []string{}),
		Entry("maxAge deletes the old Completed ones", databasev1alpha1.BackupRetention{MaxAge: "30m"},
			[]databasev1alpha1.DatabaseBackup{b(10, "Completed"), b(40, "Completed"), b(50, "Completed")},
			[]string{name(10)}),
		Entry("maxAge keeps the newest Completed one, however old", databasev1alpha1.BackupRetention{MaxAge: "1m"},
			[]databasev1alpha1.DatabaseBackup{b(10, "Completed"), b(20, "Completed")},
			[]string{name(10)}),
		Entry("both: whichever lets more go", databasev1alpha1.BackupRetention{KeepLast: ptr.To[int32](2), MaxAge: "15m"},
			[]databasev1alpha1.DatabaseBackup{b(10, "Completed"), b(20, "Completed"), b(30, "Completed"), b(50, "Completed")},
			[]string{name(10), name(20), name(30)}),
	)

	It("leaves a backup already being deleted alone", func() {
		old := b(1, "Completed")
		old.DeletionTimestamp = ptr.To(old.CreationTimestamp)
		Expect(chooseDeletions(keep(1), []databasev1alpha1.DatabaseBackup{old, b(2, "Completed"), b(3, "Completed")}, now)).
			To(Equal([]string{name(2)}))
	})
})

var _ = Describe("BuildBackup", Label("unit"), func() {
	It("names the run for its minute, labels it, annotates the schedule's UID, and sets no owner reference by default", func() {
		s := newSchedule("nightly")
		s.Spec.Method = databasev1alpha1.BackupOffline
		s.Spec.VolumeSnapshotClassName = "fast"
		b := BuildBackup(s, at(2, 0))
		Expect(b.Name).To(Equal("nightly-1893549600"))
		Expect(b.Namespace).To(Equal("default"))
		Expect(b.ObjectMeta.Labels).To(Equal(map[string]string{
			"database.seed1b407122.io/schedule": "nightly", "app.kubernetes.io/managed-by": "database-operator",
		}))
		Expect(b.ObjectMeta.Annotations).To(Equal(map[string]string{
			"database.seed1b407122.io/scheduled-at": "2030-01-02T02:00:00Z",
			"database.seed1b407122.io/schedule-uid": "uid-1234",
		}))
		Expect(b.OwnerReferences).To(BeNil())
		Expect(b.Spec).To(Equal(databasev1alpha1.DatabaseBackupSpec{
			ClusterName: "db", VolumeSnapshotClassName: "fast", Method: databasev1alpha1.BackupOffline,
		}))
	})

	It("is controlled by the schedule under backupOwnerReference schedule, and annotated too", func() {
		s := newSchedule("nightly", withBackupOwner(databasev1alpha1.BackupOwnerSchedule))
		b := BuildBackup(s, at(2, 0))
		Expect(b.OwnerReferences).To(Equal(scheduleParent("nightly", "uid-1234").OwnerReferences()))
		Expect(b.ObjectMeta.Annotations).To(HaveKeyWithValue("database.seed1b407122.io/schedule-uid", "uid-1234"))
	})
})

var _ = Describe("ownBackups", Label("unit"), func() {
	// s is the schedule "sdbb" of UID uid-1234.
	s := newSchedule("sdbb")

	DescribeTable("retention acts only on the backups the schedule made, never on the label alone",
		func(b *databasev1alpha1.DatabaseBackup, own bool) {
			var want []databasev1alpha1.DatabaseBackup
			if own {
				want = []databasev1alpha1.DatabaseBackup{*b}
			}
			Expect(ownBackups(s, []databasev1alpha1.DatabaseBackup{*b})).To(Equal(want))
		},
		Entry("made by the schedule (label, its UID)", newBackup("a", withScheduleLabel("sdbb"), withScheduleUID("uid-1234")), true),
		Entry("made under backupOwnerReference schedule (label, its UID, controlled)",
			newBackup("a", withScheduleLabel("sdbb"), withScheduleUID("uid-1234"), controlledBy(scheduleParent("sdbb", "uid-1234"))), true),
		Entry("made by 0.3.0 (label, controlled by the schedule, no annotation)",
			newBackup("a", withScheduleLabel("sdbb"), controlledBy(scheduleParent("sdbb", "uid-1234"))), true),
		Entry("made by hand with the label", newBackup("a", withScheduleLabel("sdbb")), false),
		Entry("made by hand with the label and another schedule's UID",
			newBackup("a", withScheduleLabel("sdbb"), withScheduleUID("uid-other")), false),
		Entry("made by an earlier schedule of the same name", newBackup("a", withScheduleLabel("sdbb"), withScheduleUID("uid-earlier")), false),
		Entry("made by 0.3.0 for an earlier schedule of the same name",
			newBackup("a", withScheduleLabel("sdbb"), controlledBy(scheduleParent("sdbb", "uid-earlier"))), false),
		Entry("another schedule's UID, even if controlled by this one: the annotation decides",
			newBackup("a", withScheduleLabel("sdbb"), withScheduleUID("uid-other"), controlledBy(scheduleParent("sdbb", "uid-1234"))), false),
		Entry("the schedule's UID without its label (a user took it out)", newBackup("a", withScheduleUID("uid-1234")), false),
		Entry("the schedule's UID with another schedule's label", newBackup("a", withScheduleLabel("weekly"), withScheduleUID("uid-1234")), false),
		Entry("an owner reference to the schedule that is not a controller's",
			newBackup("a", withScheduleLabel("sdbb"), ownedBy(scheduleParent("sdbb", "uid-1234"))), false),
	)

	It("lets retention delete only the schedule's own backups, oldest first", func() {
		ours := func(m int) databasev1alpha1.DatabaseBackup {
			return backupAt(at(2, m), databasev1alpha1.BackupCompleted)
		}
		theirs := func(m int, opt backupOption) databasev1alpha1.DatabaseBackup {
			b := backupAt(at(2, m), databasev1alpha1.BackupCompleted)
			b.Name += "-theirs"
			b.Annotations = map[string]string{ScheduledAtAnnotation: b.Annotations[ScheduledAtAnnotation]}
			opt(&b)
			return b
		}
		backups := []databasev1alpha1.DatabaseBackup{
			theirs(0, withScheduleUID("uid-earlier")), ours(5), theirs(1, func(*databasev1alpha1.DatabaseBackup) {}),
			ours(10), theirs(2, withScheduleUID("uid-other")), ours(15),
		}
		Expect(chooseDeletions(databasev1alpha1.BackupRetention{KeepLast: ptr.To[int32](1)}, ownBackups(s, backups), at(3, 0))).
			To(Equal([]string{"sdbb-1893549900", "sdbb-1893550200"}))
	})
})

var _ = Describe("releasedBackup", Label("unit"), func() {
	s := newSchedule("sdbb")
	parent := scheduleParent("sdbb", "uid-1234")
	tool := testenv.Parent{APIVersion: "v1", Kind: "ConfigMap", Name: "tool", UID: "uid-tool"}

	DescribeTable("moves a backup the schedule controls to backupOwnerReference none, and nothing else",
		func(s *databasev1alpha1.ScheduledDatabaseBackup, b, want *databasev1alpha1.DatabaseBackup) {
			before := b.DeepCopy()
			Expect(releasedBackup(s, b)).To(Equal(want))
			Expect(b).To(Equal(before), "the observed backup is not changed")
		},
		Entry("made by 0.3.0: the controller reference removed, the UID annotated",
			s, newBackup("a", withScheduleLabel("sdbb"), controlledBy(parent)),
			newBackup("a", withScheduleLabel("sdbb"), withScheduleUID("uid-1234"))),
		Entry("made by 0.3.0, also owned by someone else: that owner reference kept",
			s, newBackup("a", withScheduleLabel("sdbb"), ownedBy(tool), controlledBy(parent)),
			newBackup("a", withScheduleLabel("sdbb"), ownedBy(tool), withScheduleUID("uid-1234"))),
		Entry("made under backupOwnerReference schedule, which changed to none: the reference removed",
			s, newBackup("a", withScheduleLabel("sdbb"), withScheduleUID("uid-1234"), controlledBy(parent)),
			newBackup("a", withScheduleLabel("sdbb"), withScheduleUID("uid-1234"))),
		Entry("controlled by the schedule without its label: released too",
			s, newBackup("a", controlledBy(parent)), newBackup("a", withScheduleUID("uid-1234"))),
		Entry("controlled by the schedule but annotated with another UID: released, the annotation kept as it is",
			s, newBackup("a", withScheduleLabel("sdbb"), withScheduleUID("uid-other"), controlledBy(parent)),
			newBackup("a", withScheduleLabel("sdbb"), withScheduleUID("uid-other"))),
		Entry("under backupOwnerReference schedule: kept controlled",
			newSchedule("sdbb", withBackupOwner(databasev1alpha1.BackupOwnerSchedule)),
			newBackup("a", withScheduleLabel("sdbb"), controlledBy(parent)), nil),
		Entry("already released", s, newBackup("a", withScheduleLabel("sdbb"), withScheduleUID("uid-1234")), nil),
		Entry("made by hand with the label", s, newBackup("a", withScheduleLabel("sdbb")), nil),
		Entry("controlled by an earlier schedule of the same name",
			s, newBackup("a", withScheduleLabel("sdbb"), controlledBy(scheduleParent("sdbb", "uid-earlier"))), nil),
		Entry("controlled by something else", s, newBackup("a", withScheduleLabel("sdbb"), controlledBy(tool)), nil),
		Entry("owned by the schedule, not controlled", s, newBackup("a", withScheduleLabel("sdbb"), ownedBy(parent)), nil),
		Entry("being deleted", s, newBackup("a", withScheduleLabel("sdbb"), controlledBy(parent), deleting()), nil),
	)
})

var _ = Describe("computeStatus", Label("unit"), func() {
	It("reports the run started, the active backups and the last success", func() {
		s := newSchedule("sdbb", withSuspend(true))
		done := backupAt(at(2, 0), databasev1alpha1.BackupCompleted)
		done.Status.CompletionTime = ptr.To(metav1.NewTime(at(2, 3)))
		obs := observation{
			started: at(2, 10),
			backups: []databasev1alpha1.DatabaseBackup{done, backupAt(at(2, 10), ""), backupAt(at(2, 5), databasev1alpha1.BackupRunning),
				backupAt(at(1, 0), databasev1alpha1.BackupFailed)},
		}
		status := computeStatus(s, obs)
		Expect(status.LastScheduleTime.Time).To(Equal(at(2, 10)))
		Expect(status.LastBackupName).To(Equal("sdbb-1893550200"))
		Expect(status.LastSuccessfulTime.Time).To(Equal(at(2, 3)))
		Expect(status.Active).To(Equal([]string{"sdbb-1893549900", "sdbb-1893550200"}))
		Expect(status.ObservedGeneration).To(Equal(int64(1)))
		Expect(testenv.ConditionOf(status.Conditions, "Ready")).To(Equal([]string{"Ready", "True", "Scheduled",
			`backs up cluster db on schedule "*/5 * * * *"`}))
		Expect(testenv.ConditionOf(status.Conditions, "Suspended")).To(Equal([]string{"Suspended", "True", "SuspendedByUser",
			"spec.suspend is true: no new run starts; retention still applies"}))
	})

	It("reports a run's name held by another backup as Degraded, and Ready False", func() {
		conflict := &child.ConflictError{Kind: "DatabaseBackup", Name: "sdbb-1893549600", Holder: "no controller"}
		status := computeStatus(newSchedule("sdbb"), observation{err: conflict})
		message := "DatabaseBackup sdbb-1893549600 exists and is not controlled by this resource (held by no controller): it is left as it is until the name is free"
		Expect(testenv.ConditionOf(status.Conditions, "Degraded")).To(Equal([]string{"Degraded", "True", "ChildConflict", message}))
		Expect(testenv.ConditionOf(status.Conditions, "Ready")).To(Equal([]string{"Ready", "False", "ChildConflict", message}))
		Expect(status.LastScheduleTime).To(BeNil())
	})

	It("says why a schedule is invalid", func() {
		s := newSchedule("sdbb", withSchedule("0 0 30 2 *"))
		status := computeStatus(s, observation{scheduleErr: cronschedule.Check("0 0 30 2 *")})
		Expect(testenv.ConditionOf(status.Conditions, "Ready")).To(Equal([]string{"Ready", "False", "InvalidSchedule",
			`invalid schedule "0 0 30 2 *": it never fires: no month it names has a day of the month it names (e.g. 30 February)`}))
		Expect(testenv.ConditionOf(status.Conditions, "Suspended")).To(Equal([]string{"Suspended", "False", "NotSuspended",
			"new runs start on schedule"}))
	})
})
