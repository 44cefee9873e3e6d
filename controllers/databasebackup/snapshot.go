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
	"fmt"
	"sort"
	"strings"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// DefaultClassAnnotation marks a VolumeSnapshotClass as the default of its driver, as the CSI
// snapshot-controller reads it.
const DefaultClassAnnotation = "snapshot.storage.kubernetes.io/is-default-class"

// BuildVolumeSnapshot is the VolumeSnapshot of the data claim of the member ordinal of cluster,
// of the given class: named BACKUP-ORDINAL, labelled for the backup and the cluster, and
// controlled by the backup (never by the cluster: a backup outlives its cluster).
func BuildVolumeSnapshot(b *databasev1alpha1.DatabaseBackup, cluster *databasev1alpha1.DatabaseCluster,
	ordinal int32, class string,
) *snapshotv1.VolumeSnapshot {
	return &snapshotv1.VolumeSnapshot{
		ObjectMeta: metav1.ObjectMeta{
			Name:      b.SnapshotName(ordinal),
			Namespace: b.Namespace,
			Labels:    b.Labels(),
			OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(b, databasev1alpha1.GroupVersion.WithKind(kind)),
			},
		},
		Spec: snapshotv1.VolumeSnapshotSpec{
			Source:                  snapshotv1.VolumeSnapshotSource{PersistentVolumeClaimName: ptr.To(cluster.ClaimName(ordinal))},
			VolumeSnapshotClassName: ptr.To(class),
		},
	}
}

// DefaultClass chooses the VolumeSnapshotClass of a backup that names none: the one class of
// driver annotated as its default. It says what to do when there is none or more than one.
func DefaultClass(classes []snapshotv1.VolumeSnapshotClass, driver string) (string, error) {
	var defaults []string
	for i := range classes {
		c := &classes[i]
		if c.Driver == driver && c.Annotations[DefaultClassAnnotation] == "true" {
			defaults = append(defaults, c.Name)
		}
	}
	sort.Strings(defaults)
	switch len(defaults) {
	case 1:
		return defaults[0], nil
	case 0:
		return "", fmt.Errorf("no VolumeSnapshotClass of driver %s is annotated %s: \"true\": create one, or name a class in spec.volumeSnapshotClassName",
			driver, DefaultClassAnnotation)
	}
	return "", fmt.Errorf("VolumeSnapshotClasses %s are all annotated as the default of driver %s: keep the annotation on one, or name a class in spec.volumeSnapshotClassName",
		strings.Join(defaults, ", "), driver)
}

// snapshotCut reports whether the storage system has cut the snapshot: the data it holds is of
// that instant, so an Offline backup may start the cluster again even before it is ready.
func snapshotCut(s *snapshotv1.VolumeSnapshot) bool {
	return s != nil && s.Status != nil && s.Status.CreationTime != nil
}

// snapshotReady reports whether the snapshot can be restored from.
func snapshotReady(s *snapshotv1.VolumeSnapshot) bool {
	return s != nil && s.Status != nil && ptr.Deref(s.Status.ReadyToUse, false)
}

// snapshotError is the error the snapshot reports, or "".
func snapshotError(s *snapshotv1.VolumeSnapshot) string {
	if s == nil || s.Status == nil || s.Status.Error == nil {
		return ""
	}
	if m := ptr.Deref(s.Status.Error.Message, ""); m != "" {
		return m
	}
	return "the snapshot reports an error without a message"
}
