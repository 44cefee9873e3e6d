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
	"time"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// backupOption changes a DatabaseBackup fixture.
type backupOption func(*databasev1alpha1.DatabaseBackup)

// newBackup is an Online backup of cluster "db" in "default".
func newBackup(name string, opts ...backupOption) *databasev1alpha1.DatabaseBackup {
	return testenv.Apply(&databasev1alpha1.DatabaseBackup{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: "uid-backup", Generation: 1},
		Spec:       databasev1alpha1.DatabaseBackupSpec{ClusterName: "db", Method: databasev1alpha1.BackupOnline},
	}, opts...)
}

func withMethod(m databasev1alpha1.BackupMethod) backupOption {
	return func(b *databasev1alpha1.DatabaseBackup) { b.Spec.Method = m }
}

func withCluster(name string) backupOption {
	return func(b *databasev1alpha1.DatabaseBackup) { b.Spec.ClusterName = name }
}

func withClass(name string) backupOption {
	return func(b *databasev1alpha1.DatabaseBackup) { b.Spec.VolumeSnapshotClassName = name }
}

// clusterOption changes a DatabaseCluster fixture.
type clusterOption func(*databasev1alpha1.DatabaseCluster)

// newCluster is a 3-member cluster of StorageClass "standard" in "default".
func newCluster(name string, opts ...clusterOption) *databasev1alpha1.DatabaseCluster {
	dc := &databasev1alpha1.DatabaseCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: databasev1alpha1.DatabaseClusterSpec{
			Replicas: ptr.To[int32](3),
			Image:    "registry.example/db:1",
			Storage:  databasev1alpha1.StorageSpec{StorageClassName: "standard", Size: "1Gi"},
		},
	}
	for _, opt := range opts {
		opt(dc)
	}
	return dc
}

func withReplicas(n int32) clusterOption {
	return func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Replicas = ptr.To(n) }
}

func withStorageClass(name string) clusterOption {
	return func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Storage.StorageClassName = name }
}

// snapshotOption changes a VolumeSnapshot fixture's status.
type snapshotOption func(*snapshotv1.VolumeSnapshot)

var t0 = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))

// newSnapshot is the snapshot of member ordinal of newBackup("nightly") with the given status.
func newSnapshot(ordinal int32, opts ...snapshotOption) *snapshotv1.VolumeSnapshot {
	s := BuildVolumeSnapshot(newBackup("nightly"), newCluster("db"), ordinal, "csi-snapclass")
	for _, opt := range opts {
		opt(s)
	}
	return s
}

func cut() snapshotOption {
	return func(s *snapshotv1.VolumeSnapshot) {
		s.Status = &snapshotv1.VolumeSnapshotStatus{CreationTime: &t0, ReadyToUse: ptr.To(false)}
	}
}

func ready(size string) snapshotOption {
	return func(s *snapshotv1.VolumeSnapshot) {
		s.Status = &snapshotv1.VolumeSnapshotStatus{CreationTime: &t0, ReadyToUse: ptr.To(true),
			RestoreSize: ptr.To(resource.MustParse(size))}
	}
}

func failed(message string) snapshotOption {
	return func(s *snapshotv1.VolumeSnapshot) {
		s.Status = &snapshotv1.VolumeSnapshotStatus{ReadyToUse: ptr.To(false),
			Error: &snapshotv1.VolumeSnapshotError{Time: &t0, Message: ptr.To(message)}}
	}
}

// snapshotClass is a VolumeSnapshotClass of driver; isDefault annotates it as the default.
func snapshotClass(name, driver string, isDefault bool) snapshotv1.VolumeSnapshotClass {
	c := snapshotv1.VolumeSnapshotClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Driver: driver,
		DeletionPolicy: snapshotv1.VolumeSnapshotContentDelete}
	if isDefault {
		c.Annotations = map[string]string{DefaultClassAnnotation: "true"}
	}
	return c
}

// conditionOf is a condition as type, status, reason and message, nil when it is not set.
var conditionOf = testenv.ConditionOf
