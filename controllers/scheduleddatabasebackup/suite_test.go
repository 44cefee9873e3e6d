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
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/testenv"
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
	reconciler = &Reconciler{Deps: testenv.Deps(mgr), Now: specClock.Now}
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
