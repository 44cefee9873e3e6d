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

package plugin

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// update rewrites the golden files: go test ./cmd/kubectl-dbc/plugin/ -run TestRender -update
var update = flag.Bool("update", false, "rewrite testdata/*.golden with the output of this run")

// now is the fixed clock of the rendering tests.
var now = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// before is a time d before now.
func before(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

const uid = types.UID("5b0a1c2e-0000-4000-8000-000000000001")

func newCluster(replicas int32) databasev1alpha1.DatabaseCluster {
	return databasev1alpha1.DatabaseCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: "shop", UID: uid, CreationTimestamp: before(72 * time.Hour)},
		Spec: databasev1alpha1.DatabaseClusterSpec{
			Replicas: ptr.To(replicas),
			Image:    "registry.example.com/db:1.1",
			Storage:  databasev1alpha1.StorageSpec{StorageClassName: "standard", Size: "2Gi"},
		},
	}
}

func condition(t, status, reason, message string, age time.Duration) metav1.Condition {
	return metav1.Condition{Type: t, Status: metav1.ConditionStatus(status), Reason: reason, Message: message, LastTransitionTime: before(age)}
}

// runningPod is member i, Running and Ready on node for age, with restarts.
func runningPod(i int, node string, age time.Duration, restarts int32) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("orders-%d", i), Namespace: "shop", CreationTimestamp: before(age)},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "database"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
			Name: "database", Ready: true, RestartCount: restarts, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
		}}},
	}
}

// claim is member i's data claim, requesting requested with capacity (empty: none reported).
func claim(i int, requested, capacity string, phase corev1.PersistentVolumeClaimPhase) corev1.PersistentVolumeClaim {
	c := corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("data-orders-%d", i), Namespace: "shop"},
		Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(requested)},
		}},
		Status: corev1.PersistentVolumeClaimStatus{Phase: phase},
	}
	if capacity != "" {
		c.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(capacity)}
	}
	return c
}

func backup(name string, method databasev1alpha1.BackupMethod, phase databasev1alpha1.BackupPhase, age time.Duration) databasev1alpha1.DatabaseBackup {
	b := databasev1alpha1.DatabaseBackup{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", CreationTimestamp: before(age)},
		Spec:       databasev1alpha1.DatabaseBackupSpec{ClusterName: "orders", Method: method},
		Status:     databasev1alpha1.DatabaseBackupStatus{Phase: phase, StartTime: ptr.To(before(age - time.Second))},
	}
	if phase == databasev1alpha1.BackupCompleted || phase == databasev1alpha1.BackupFailed {
		b.Status.CompletionTime = ptr.To(before(age - 40*time.Second))
	}
	return b
}

// madeBy marks b as a run of the schedule name of UID scheduleUID, as the operator creates it.
func madeBy(b databasev1alpha1.DatabaseBackup, name string, scheduleUID types.UID) databasev1alpha1.DatabaseBackup {
	b.ObjectMeta.Labels = map[string]string{databasev1alpha1.ScheduleLabel: name}
	b.Annotations = map[string]string{databasev1alpha1.ScheduleUIDAnnotation: string(scheduleUID)}
	return b
}

func event(name, typ, reason, note string, age time.Duration) eventsv1.Event {
	return eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"},
		EventTime:  metav1.NewMicroTime(now.Add(-age)),
		Regarding:  corev1.ObjectReference{Kind: "DatabaseCluster", Name: "orders", UID: uid},
		Type:       typ, Reason: reason, Note: note,
	}
}

// degraded is a cluster of 3 growing its claims to 2Gi: member 1 crash-loops, member 2 has no
// claim capacity yet, the claim of member 3 is kept after a scale-down; its newest backup
// (made by hand) failed, the newest Completed one is a run of the schedule "nightly"; more
// events than the screen shows, one of them a series.
func degraded() *clusterState {
	dc := newCluster(3)
	dc.Annotations = map[string]string{databasev1alpha1.RestartedAtAnnotation: "2026-11-25T11:30:00Z"}
	dc.Status = databasev1alpha1.DatabaseClusterStatus{
		Replicas: 3, ReadyReplicas: 2, UpdatedReplicas: 3, CurrentImage: "registry.example.com/db:1.0",
		Conditions: []metav1.Condition{
			condition("Available", "False", "ReplicasNotReady", "2/3 replicas are ready", 25*time.Minute),
			condition("Progressing", "False", "RolloutComplete", "every pod runs the current revision", 28*time.Minute),
			condition("Degraded", "True", "PodNotReady", "pod orders-1 has not been Ready for 5m0s", 20*time.Minute),
			condition("Resizing", "True", "StorageExpanding", "1/3 claims have 2Gi", 90*time.Second),
			condition("Paused", "False", "NotPaused", "spec.paused is false", 72*time.Hour),
			condition("Hibernated", "False", "NotHibernated", "spec.hibernated is false", 72*time.Hour),
		},
	}
	crashing := runningPod(1, "node-b", 30*time.Minute, 7)
	crashing.Status.ContainerStatuses[0].Ready = false
	crashing.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
	failed := backup("orders-x7k2p", databasev1alpha1.BackupOffline, databasev1alpha1.BackupFailed, 10*time.Minute)
	failed.Status.Conditions = []metav1.Condition{condition("Failed", "True", "ClusterNotAvailable", "the cluster is not Available", 9*time.Minute)}
	series := event("orders.2", "Warning", "PodNotReady", "pod orders-1 has not been Ready for 5m0s", 20*time.Minute)
	series.Series = &eventsv1.EventSeries{Count: 4, LastObservedTime: metav1.NewMicroTime(now.Add(-2 * time.Minute))}
	return &clusterState{
		Cluster: dc,
		Pods:    []corev1.Pod{runningPod(2, "node-c", 3*time.Hour, 0), crashing, runningPod(0, "node-a", 72*time.Hour, 0)},
		Claims: []corev1.PersistentVolumeClaim{
			claim(0, "2Gi", "2Gi", corev1.ClaimBound), claim(1, "2Gi", "1Gi", corev1.ClaimBound),
			claim(2, "2Gi", "", corev1.ClaimPending), claim(3, "1Gi", "1Gi", corev1.ClaimBound),
		},
		Backups: []databasev1alpha1.DatabaseBackup{
			madeBy(backup("nightly-1", databasev1alpha1.BackupOnline, databasev1alpha1.BackupCompleted, 26*time.Hour), "nightly", "uid-nightly"),
			failed,
			madeBy(backup("nightly-2", databasev1alpha1.BackupOnline, databasev1alpha1.BackupCompleted, 2*time.Hour), "nightly", "uid-nightly"),
		},
		Events: []eventsv1.Event{
			event("orders.1", "Normal", "Created", "created StatefulSet orders", 72*time.Hour),
			series,
			event("orders.3", "Normal", "Scaled", "replicas 4 -> 3", 3*time.Hour),
			event("orders.4", "Normal", "Available", "3/3 replicas are ready", 70*time.Hour),
			event("orders.5", "Normal", "Restarted", "pods restarted at 2026-11-25T11:30:00Z", 30*time.Minute),
			event("orders.6", "Normal", "Resizing", "claims grow from 1Gi to 2Gi", 90*time.Second),
			event("orders.7", "Warning", "Unavailable", "2/3 replicas are ready", 25*time.Minute),
		},
	}
}

// hibernatedState is a hibernated cluster: no pod, its claims kept, no backup, no event.
func hibernatedState() *clusterState {
	dc := newCluster(2)
	dc.Spec.Hibernated = true
	dc.Spec.Paused = true
	dc.Status = databasev1alpha1.DatabaseClusterStatus{
		CurrentImage: "registry.example.com/db:1.1",
		Conditions: []metav1.Condition{
			condition("Available", "False", "Hibernated", "spec.hibernated is true: no pod runs", 47*time.Hour),
			condition("Hibernated", "True", "Hibernated", "no pod runs", 47*time.Hour),
		},
	}
	return &clusterState{
		Cluster: dc,
		Claims:  []corev1.PersistentVolumeClaim{claim(0, "2Gi", "2Gi", corev1.ClaimBound), claim(1, "2Gi", "2Gi", corev1.ClaimBound)},
	}
}

// created is a cluster the operator has not seen yet, held by nothing.
func created() *clusterState {
	dc := newCluster(1)
	dc.CreationTimestamp = before(3 * time.Second)
	return &clusterState{Cluster: dc}
}

// offline is an Available cluster stopped by an Offline backup and restored from another. The
// backup is a run of the schedule "weekly" that controls it and carries no UID annotation (made
// by 0.3.0, or under backupOwnerReference schedule before the annotation).
func offline() *clusterState {
	cold := backup("orders-cold", databasev1alpha1.BackupOffline, databasev1alpha1.BackupRunning, 6*time.Second)
	cold.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: "database.seed1b407122.io/v1alpha1", Kind: "ScheduledDatabaseBackup", Name: "weekly", UID: "uid-weekly",
		Controller: ptr.To(true),
	}}
	dc := newCluster(1)
	dc.Annotations = map[string]string{databasev1alpha1.OfflineBackupAnnotation: "orders-cold"}
	dc.Status = databasev1alpha1.DatabaseClusterStatus{
		RestoredFromBackup: "nightly-1",
		Conditions: []metav1.Condition{
			condition("Available", "False", "Hibernated", "stopped by the Offline backup orders-cold", 5*time.Second),
		},
	}
	pod := runningPod(0, "node-a", time.Hour, 0)
	pod.DeletionTimestamp = ptr.To(before(5 * time.Second))
	return &clusterState{
		Cluster: dc,
		Pods:    []corev1.Pod{pod},
		Claims:  []corev1.PersistentVolumeClaim{claim(0, "2Gi", "2Gi", corev1.ClaimBound)},
		Backups: []databasev1alpha1.DatabaseBackup{cold},
	}
}

// withRole is pod carrying the role label role.
func withRole(pod corev1.Pod, role databasev1alpha1.MemberRole) corev1.Pod {
	pod.Labels = map[string]string{databasev1alpha1.RoleLabel: string(role)}
	return pod
}

// switchingOver is a PostgreSQL cluster of 3 in the middle of a switchover asked for from
// orders-0 to orders-1: orders-0 still the primary, orders-2's agent did not answer the last read
// (it keeps its replica label).
func switchingOver() *clusterState {
	dc := newCluster(3)
	dc.Spec.Engine = databasev1alpha1.EnginePostgreSQL
	dc.Status = databasev1alpha1.DatabaseClusterStatus{
		Replicas: 3, ReadyReplicas: 3, UpdatedReplicas: 3, CurrentImage: "registry.example.com/db:1.1",
		CurrentPrimary: "orders-0", TargetPrimary: "orders-1",
		Switchover: &databasev1alpha1.SwitchoverStatus{From: "orders-0", To: "orders-1", Reason: "Requested", StartedAt: before(40 * time.Second)},
		Members: []databasev1alpha1.MemberStatus{
			{Name: "orders-0", Role: databasev1alpha1.MemberRolePrimary, Position: "0/5000148"},
			{Name: "orders-1", Role: databasev1alpha1.MemberRoleReplica, Position: "0/5000060"},
			{Name: "orders-2", Role: databasev1alpha1.MemberRoleUnknown},
		},
		Conditions: []metav1.Condition{
			condition("Available", "True", "AllReplicasReady", "3/3 replicas are ready", 70*time.Hour),
		},
	}
	return &clusterState{
		Cluster: dc,
		Pods: []corev1.Pod{
			withRole(runningPod(0, "node-a", 72*time.Hour, 0), databasev1alpha1.MemberRolePrimary),
			withRole(runningPod(1, "node-b", 72*time.Hour, 0), databasev1alpha1.MemberRoleReplica),
			withRole(runningPod(2, "node-c", 72*time.Hour, 1), databasev1alpha1.MemberRoleReplica),
		},
		Claims: []corev1.PersistentVolumeClaim{
			claim(0, "2Gi", "2Gi", corev1.ClaimBound), claim(1, "2Gi", "2Gi", corev1.ClaimBound), claim(2, "2Gi", "2Gi", corev1.ClaimBound),
		},
		Events: []eventsv1.Event{
			event("orders.1", "Normal", "Switchover", "Switching over from orders-0 to orders-1.", 40*time.Second),
		},
	}
}

// switchoverRequested is an etcd cluster scaled from 3 to 4 with a switchover to any member
// asked for and not taken yet: orders-1 has lost its label, orders-3 is too new to be reported.
func switchoverRequested() *clusterState {
	dc := newCluster(4)
	dc.Spec.Engine = databasev1alpha1.EngineEtcd
	dc.Annotations = map[string]string{databasev1alpha1.SwitchoverAnnotation: databasev1alpha1.SwitchoverToAny}
	dc.Status = databasev1alpha1.DatabaseClusterStatus{
		Replicas: 4, ReadyReplicas: 3, UpdatedReplicas: 4, CurrentImage: "registry.example.com/db:1.1",
		CurrentPrimary: "orders-2",
		Members: []databasev1alpha1.MemberStatus{
			{Name: "orders-0", Role: databasev1alpha1.MemberRoleReplica, Position: "1042"},
			{Name: "orders-1", Role: databasev1alpha1.MemberRoleReplica, Position: "1040"},
			{Name: "orders-2", Role: databasev1alpha1.MemberRolePrimary, Position: "1042"},
		},
		Conditions: []metav1.Condition{
			condition("Available", "False", "ReplicasNotReady", "3/4 replicas are ready", 10*time.Second),
		},
	}
	starting := runningPod(3, "node-a", 10*time.Second, 0)
	starting.Status.ContainerStatuses[0].Ready = false
	return &clusterState{
		Cluster: dc,
		Pods: []corev1.Pod{
			withRole(runningPod(0, "node-a", 72*time.Hour, 0), databasev1alpha1.MemberRoleReplica),
			runningPod(1, "node-b", 72*time.Hour, 0),
			withRole(runningPod(2, "node-c", 72*time.Hour, 0), databasev1alpha1.MemberRolePrimary),
			starting,
		},
		Claims: []corev1.PersistentVolumeClaim{
			claim(0, "2Gi", "2Gi", corev1.ClaimBound), claim(1, "2Gi", "2Gi", corev1.ClaimBound),
			claim(2, "2Gi", "2Gi", corev1.ClaimBound), claim(3, "2Gi", "2Gi", corev1.ClaimBound),
		},
	}
}

// splitBrain is a PostgreSQL cluster scaled from 3 to 2 in which both members report the primary
// role: neither carries the primary label, the operator still reports the removed orders-2, and
// no member is known as the primary yet.
func splitBrain() *clusterState {
	dc := newCluster(2)
	dc.Spec.Engine = databasev1alpha1.EnginePostgreSQL
	dc.Annotations = map[string]string{databasev1alpha1.SwitchoverAnnotation: "orders-1"}
	dc.Status = databasev1alpha1.DatabaseClusterStatus{
		Replicas: 2, ReadyReplicas: 2, UpdatedReplicas: 2, CurrentImage: "registry.example.com/db:1.1",
		Members: []databasev1alpha1.MemberStatus{
			{Name: "orders-0", Role: databasev1alpha1.MemberRolePrimary, Position: "0/7000000"},
			{Name: "orders-1", Role: databasev1alpha1.MemberRolePrimary, Position: "0/6FFFF28"},
			{Name: "orders-2", Role: databasev1alpha1.MemberRoleReplica, Position: "0/6000000"},
		},
		Conditions: []metav1.Condition{
			condition("Degraded", "True", "SplitBrain", "Members orders-0, orders-1 all report the primary role; changing nothing until one is demoted.", 3*time.Minute),
		},
	}
	return &clusterState{
		Cluster: dc,
		Pods:    []corev1.Pod{runningPod(0, "node-a", 72*time.Hour, 0), runningPod(1, "node-b", 72*time.Hour, 0)},
		Claims:  []corev1.PersistentVolumeClaim{claim(0, "2Gi", "2Gi", corev1.ClaimBound), claim(1, "2Gi", "2Gi", corev1.ClaimBound)},
	}
}

func TestRender(t *testing.T) {
	for name, state := range map[string]*clusterState{
		"degraded": degraded(), "hibernated": hibernatedState(), "created": created(), "offline": offline(),
		// With an engine: the roles in the header and the members table.
		"switchover": switchingOver(), "switchover-requested": switchoverRequested(), "split-brain": splitBrain(),
	} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			if err := render(&out, state, now); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "status-"+name+".golden")
			if *update {
				if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if got := out.String(); got != string(want) {
				t.Errorf("status of %s differs from %s (run with -update to accept):\n--- got\n%s--- want\n%s", name, golden, got, want)
			}
		})
	}
}

// TestScheduleOf checks the SCHEDULE column: the schedule's UID annotation or its controller
// reference tells a run of a schedule, never the label alone.
func TestScheduleOf(t *testing.T) {
	controller := func(apiVersion, kind string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: "weekly", UID: "uid-weekly", Controller: ptr.To(true)}}
	}
	for _, tc := range []struct {
		name        string
		labels      map[string]string
		annotations map[string]string
		owners      []metav1.OwnerReference
		want        string
	}{
		{"a run: label and UID annotation", map[string]string{databasev1alpha1.ScheduleLabel: "nightly"},
			map[string]string{databasev1alpha1.ScheduleUIDAnnotation: "uid-nightly"}, nil, "nightly"},
		{"a run 0.3.0 made: controlled by the schedule", map[string]string{databasev1alpha1.ScheduleLabel: "weekly"}, nil,
			controller("database.seed1b407122.io/v1alpha1", "ScheduledDatabaseBackup"), "weekly"},
		{"made by hand with the label", map[string]string{databasev1alpha1.ScheduleLabel: "nightly"}, nil, nil, "-"},
		{"the UID annotation without the label", nil, map[string]string{databasev1alpha1.ScheduleUIDAnnotation: "uid-nightly"}, nil, "-"},
		{"controlled by a kind of the same name in another group", nil, nil, controller("backup.example.com/v1", "ScheduledDatabaseBackup"), "-"},
		{"made by hand", nil, nil, nil, "-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := backup("b", databasev1alpha1.BackupOnline, databasev1alpha1.BackupCompleted, time.Hour)
			b.ObjectMeta.Labels, b.Annotations, b.OwnerReferences = tc.labels, tc.annotations, tc.owners
			if got := scheduleOf(&b); got != tc.want {
				t.Fatalf("scheduleOf = %q, want %q", got, tc.want)
			}
		})
	}
}
