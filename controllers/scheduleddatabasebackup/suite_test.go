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
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

func TestScheduledDatabaseBackup(t *testing.T) {
	testenv.RunSuite(t, "ScheduledDatabaseBackup controller")
}

// reconciler is the controller under test, with the specs' clock; setupController registers it.
var reconciler *Reconciler

// specClock is what reconciler reads; the envtest specs set it.
var specClock = &syncClock{}

// setupController registers the controller alone, on the specs' clock.
func setupController(mgr ctrl.Manager) error {
	reconciler = &Reconciler{ReconcilerBase: testenv.ReconcilerBase(mgr), Now: specClock.Now}
	return reconciler.SetupWithManager(mgr)
}

// scheduleOption changes a test ScheduledDatabaseBackup.
type scheduleOption func(*databasev1alpha1.ScheduledDatabaseBackup)

// newSchedule returns a valid schedule of cluster "db" every five minutes, changed by opts.
func newSchedule(name string, opts ...scheduleOption) *databasev1alpha1.ScheduledDatabaseBackup {
	spec := databasev1alpha1.ScheduledDatabaseBackupSpec{ClusterName: "db", Schedule: "*/5 * * * *"}
	return testenv.Apply(&databasev1alpha1.ScheduledDatabaseBackup{ObjectMeta: testenv.Meta(name), Spec: spec}, opts...)
}

func withSchedule(schedule string) scheduleOption {
	return func(s *databasev1alpha1.ScheduledDatabaseBackup) { s.Spec.Schedule = schedule }
}

func withKeepLast(n int32) scheduleOption {
	return func(s *databasev1alpha1.ScheduledDatabaseBackup) { s.Spec.Retention.KeepLast = ptr.To(n) }
}

func withMaxAge(age string) scheduleOption {
	return func(s *databasev1alpha1.ScheduledDatabaseBackup) { s.Spec.Retention.MaxAge = age }
}

func withSuspend(suspend bool) scheduleOption {
	return func(s *databasev1alpha1.ScheduledDatabaseBackup) { s.Spec.Suspend = suspend }
}

func withDeadline(seconds int64) scheduleOption {
	return func(s *databasev1alpha1.ScheduledDatabaseBackup) { s.Spec.StartingDeadlineSeconds = ptr.To(seconds) }
}

func withBackupOwner(owner databasev1alpha1.BackupOwnerReference) scheduleOption {
	return func(s *databasev1alpha1.ScheduledDatabaseBackup) { s.Spec.BackupOwnerReference = owner }
}

// scheduleParent is the schedule name of UID uid as an owner reference names it.
func scheduleParent(name string, uid types.UID) testenv.Parent {
	return testenv.Parent{APIVersion: "database.seed1b407122.io/v1alpha1", Kind: "ScheduledDatabaseBackup", Name: name, UID: uid}
}

// backupOption changes a test DatabaseBackup.
type backupOption func(*databasev1alpha1.DatabaseBackup)

// newBackup returns a backup of cluster "db" in namespace "default" with no label, annotation or
// owner, changed by opts.
func newBackup(name string, opts ...backupOption) *databasev1alpha1.DatabaseBackup {
	b := &databasev1alpha1.DatabaseBackup{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       databasev1alpha1.DatabaseBackupSpec{ClusterName: "db"},
	}
	return testenv.Apply(b, opts...)
}

func withScheduleLabel(schedule string) backupOption {
	return func(b *databasev1alpha1.DatabaseBackup) {
		b.ObjectMeta.Labels = map[string]string{"database.seed1b407122.io/schedule": schedule}
	}
}

func withScheduleUID(uid string) backupOption {
	return func(b *databasev1alpha1.DatabaseBackup) {
		if b.Annotations == nil {
			b.Annotations = map[string]string{}
		}
		b.Annotations["database.seed1b407122.io/schedule-uid"] = uid
	}
}

// controlledBy appends p as the backup's controller, as 0.3.0 (and backupOwnerReference
// schedule) sets it.
func controlledBy(p testenv.Parent) backupOption {
	return func(b *databasev1alpha1.DatabaseBackup) {
		b.OwnerReferences = append(b.OwnerReferences, p.OwnerReferences()...)
	}
}

// ownedBy appends p as an owner of the backup that is not its controller.
func ownedBy(p testenv.Parent) backupOption {
	return func(b *databasev1alpha1.DatabaseBackup) {
		b.OwnerReferences = append(b.OwnerReferences, metav1.OwnerReference{APIVersion: p.APIVersion, Kind: p.Kind, Name: p.Name, UID: p.UID})
	}
}

func deleting() backupOption {
	return func(b *databasev1alpha1.DatabaseBackup) { b.DeletionTimestamp = ptr.To(metav1.NewTime(at(1, 0))) }
}

// at is a minute of 2 January 2030 (UTC).
func at(hour, minute int) time.Time {
	return time.Date(2030, time.January, 2, hour, minute, 0, 0, time.UTC)
}

// backupAt returns a backup of schedule "sdbb" scheduled at t in phase, created at t.
func backupAt(t time.Time, phase databasev1alpha1.BackupPhase) databasev1alpha1.DatabaseBackup {
	b := BuildBackup(newSchedule("sdbb"), t)
	b.CreationTimestamp = metav1.NewTime(t)
	b.Status.Phase = phase
	return *b
}
