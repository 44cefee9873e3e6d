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

package opmetrics

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

const conflictHelp = `
# HELP database_operator_resource_child_conflict 1 while a child's name is held by an object the resource does not control.
# TYPE database_operator_resource_child_conflict gauge
`

func TestChildConflictFollowsTheReasonAndForgetRemovesIt(t *testing.T) {
	ChildConflict.Reset()
	held := []metav1.Condition{{Type: "Degraded", Status: metav1.ConditionTrue, Reason: "ChildConflict"}}
	free := []metav1.Condition{{Type: "Degraded", Status: metav1.ConditionFalse, Reason: "AsExpected"}}
	// A ScheduledDatabaseBackup says it with Ready False.
	runHeld := []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "ChildConflict"}}
	RecordConditions("DatabaseCluster", "ns", "db", held)
	RecordConditions("Echo", "ns", "db", held)
	RecordConditions("Echo", "ns", "db", free)
	RecordConditions("ScheduledDatabaseBackup", "ns", "nightly", runHeld)
	compare(t, ChildConflict, conflictHelp+`database_operator_resource_child_conflict{kind="DatabaseCluster",name="db",namespace="ns"} 1
database_operator_resource_child_conflict{kind="Echo",name="db",namespace="ns"} 0
database_operator_resource_child_conflict{kind="ScheduledDatabaseBackup",name="nightly",namespace="ns"} 1
`)
	Forget("DatabaseCluster", "ns", "db")
	Forget("ScheduledDatabaseBackup", "ns", "nightly")
	compare(t, ChildConflict, conflictHelp+`database_operator_resource_child_conflict{kind="Echo",name="db",namespace="ns"} 0
`)
}

const storageHelp = `
# HELP database_operator_databasecluster_storage_requested_bytes Storage a DatabaseCluster asks for per member (spec.storage.size), in bytes.
# TYPE database_operator_databasecluster_storage_requested_bytes gauge
# HELP database_operator_databasecluster_storage_capacity_bytes Smallest capacity reported by the data claims of a DatabaseCluster (status.capacity), in bytes.
# TYPE database_operator_databasecluster_storage_capacity_bytes gauge
`

// claimWithCapacity is a claim whose status reports capacity ("" for none yet).
func claimWithCapacity(capacity string) corev1.PersistentVolumeClaim {
	c := corev1.PersistentVolumeClaim{}
	if capacity != "" {
		c.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(capacity)}
	}
	return c
}

func TestRecordStorageTakesTheSmallestCapacityAndForgetClusterRemovesIt(t *testing.T) {
	StorageRequested.Reset()
	StorageCapacity.Reset()
	// A growth to 2Gi under way: one claim grown, one not yet, one not bound.
	RecordStorage("ns", "db", "2Gi", []corev1.PersistentVolumeClaim{
		claimWithCapacity("2Gi"), claimWithCapacity("1Gi"), claimWithCapacity(""),
	})
	RecordStorage("ns", "new", "500M", []corev1.PersistentVolumeClaim{claimWithCapacity("")})
	want := storageHelp + `database_operator_databasecluster_storage_capacity_bytes{name="db",namespace="ns"} 1.073741824e+09
database_operator_databasecluster_storage_requested_bytes{name="db",namespace="ns"} 2.147483648e+09
database_operator_databasecluster_storage_requested_bytes{name="new",namespace="ns"} 5e+08
`
	if err := testutil.CollectAndCompare(StorageRequested, strings.NewReader(want),
		"database_operator_databasecluster_storage_requested_bytes"); err != nil {
		t.Fatal(err)
	}
	if err := testutil.CollectAndCompare(StorageCapacity, strings.NewReader(want),
		"database_operator_databasecluster_storage_capacity_bytes"); err != nil {
		t.Fatal(err)
	}

	// Once every claim reports 2Gi the two series agree.
	RecordStorage("ns", "db", "2Gi", []corev1.PersistentVolumeClaim{claimWithCapacity("2Gi"), claimWithCapacity("2Gi")})
	grown := storageHelp + `database_operator_databasecluster_storage_capacity_bytes{name="db",namespace="ns"} 2.147483648e+09
`
	if err := testutil.CollectAndCompare(StorageCapacity, strings.NewReader(grown),
		"database_operator_databasecluster_storage_capacity_bytes"); err != nil {
		t.Fatalf("after the growth: %v", err)
	}
	ForgetCluster("ns", "db")
	ForgetCluster("ns", "new")
	if n := testutil.CollectAndCount(StorageRequested) + testutil.CollectAndCount(StorageCapacity); n != 0 {
		t.Fatalf("%d storage series left after ForgetCluster", n)
	}
}

func TestErrorReason(t *testing.T) {
	gr := schema.GroupResource{Group: "apps", Resource: "statefulsets"}
	for _, c := range []struct {
		err  error
		want string
	}{
		{apierrors.NewConflict(gr, "db", errors.New("modified")), ReasonConflict},
		{fmt.Errorf("creating: %w", apierrors.NewAlreadyExists(gr, "db")), ReasonConflict},
		{apierrors.NewInvalid(schema.GroupKind{Kind: "StatefulSet"}, "db", nil), ReasonInvalid},
		{apierrors.NewBadRequest("no"), ReasonInvalid},
		{reconcile.TerminalError(fmt.Errorf("patching: %w", apierrors.NewForbidden(gr, "db", errors.New("rbac")))), ReasonForbidden},
		{apierrors.NewUnauthorized("token"), ReasonForbidden},
		{errors.Join(errors.New("first"), apierrors.NewNotFound(gr, "db")), ReasonNotFound},
		{apierrors.NewTimeoutError("slow", 1), ReasonTimeout},
		{apierrors.NewServerTimeout(gr, "get", 1), ReasonTimeout},
		{apierrors.NewTooManyRequests("busy", 1), ReasonTimeout},
		{fmt.Errorf("listing: %w", context.DeadlineExceeded), ReasonTimeout},
		{apierrors.NewInternalError(errors.New("etcd")), ReasonOther},
		{errors.New("invalid cron schedule"), ReasonOther},
	} {
		if got := ErrorReason(c.err); got != c.want {
			t.Errorf("ErrorReason(%v) = %s, want %s", c.err, got, c.want)
		}
	}
}

func TestRecordReconcileErrorCountsByKindAndReason(t *testing.T) {
	ReconcileErrors.Reset()
	InitReconcileErrors("Echo")
	RecordReconcileError("Echo", nil)
	RecordReconcileError("Echo", apierrors.NewConflict(schema.GroupResource{Resource: "jobs"}, "x", errors.New("modified")))
	RecordReconcileError("Echo", errors.New("boom"))
	RecordReconcileError("Echo", errors.New("boom"))
	want := map[string]float64{"conflict": 1, "invalid": 0, "forbidden": 0, "notfound": 0, "timeout": 0, "other": 2}
	if n := testutil.CollectAndCount(ReconcileErrors); n != len(want) {
		t.Fatalf("%d error series, want %d (every reason of the kind from the start)", n, len(want))
	}
	for reason, n := range want {
		if got := testutil.ToFloat64(ReconcileErrors.WithLabelValues("Echo", reason)); got != n {
			t.Errorf("reason %s: %v errors, want %v", reason, got, n)
		}
	}
}

const backupHelp = `
# HELP database_operator_databasecluster_last_backup_completion_timestamp_seconds When the newest Completed DatabaseBackup of a DatabaseCluster completed, in seconds since the epoch.
# TYPE database_operator_databasecluster_last_backup_completion_timestamp_seconds gauge
# HELP database_operator_databasecluster_last_backup_succeeded 1 when the newest finished DatabaseBackup of a DatabaseCluster Completed, 0 when it Failed.
# TYPE database_operator_databasecluster_last_backup_succeeded gauge
`

// backupSeries is the exposition of the backup series of cluster db in namespace ns: completed
// is the timestamp (0: no series), succeeded the last result.
func backupSeries(completed int64, succeeded int) string {
	s := backupHelp
	if completed != 0 {
		s += fmt.Sprintf("database_operator_databasecluster_last_backup_completion_timestamp_seconds{name=\"db\",namespace=\"ns\"} %d\n", completed)
	}
	return s + fmt.Sprintf("database_operator_databasecluster_last_backup_succeeded{name=\"db\",namespace=\"ns\"} %d\n", succeeded)
}

func TestBackupSeries(t *testing.T) {
	backups.reset()
	t.Cleanup(backups.reset)
	at := func(minute int) time.Time { return time.Date(2026, 11, 25, 3, minute, 0, 0, time.UTC) }
	base := at(0).Unix()

	RecordBackup("ns", "first", "db", true, at(0))
	compare(t, backups, backupHelp)
	t.Log("no series before the cluster controller reported the cluster")

	RecordReplicas("ns", "db", 3, 3)
	compare(t, backups, backupSeries(base, 1))

	// A later failure: the last result is 0, the last completion stays.
	RecordBackup("ns", "second", "db", false, at(10))
	// Backups of another cluster, and of a cluster of the same name elsewhere, count for theirs.
	RecordBackup("ns", "other", "orders", true, at(20))
	RecordBackup("elsewhere", "third", "db", true, at(30))
	compare(t, backups, backupSeries(base, 0))

	// A success after it.
	RecordBackup("ns", "third", "db", true, at(20))
	compare(t, backups, backupSeries(at(20).Unix(), 1))

	// A failure in the same second as the newest success wins: a failure is never hidden.
	RecordBackup("ns", "fourth", "db", false, at(20))
	compare(t, backups, backupSeries(at(20).Unix(), 0))

	// Only failures left: the result without a completion time.
	ForgetBackup("ns", "first")
	ForgetBackup("ns", "third")
	compare(t, backups, backupSeries(0, 0))

	// No finished backup left: no series.
	ForgetBackup("ns", "second")
	ForgetBackup("ns", "fourth")
	compare(t, backups, backupHelp)

	// The cluster gone while its backups are kept: no series either.
	RecordBackup("ns", "fifth", "db", true, at(40))
	compare(t, backups, backupSeries(at(40).Unix(), 1))
	ForgetCluster("ns", "db")
	compare(t, backups, backupHelp)
}
