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
	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

var _ = Describe("Builders", Label("unit"), func() {
	It("builds the VolumeSnapshot of a member, owned by the backup and not by the cluster", func() {
		Expect(BuildVolumeSnapshot(newBackup("nightly"), newCluster("db"), 2, "csi-snapclass")).To(Equal(&snapshotv1.VolumeSnapshot{
			ObjectMeta: metav1.ObjectMeta{
				Name:      "nightly-2",
				Namespace: "default",
				Labels: map[string]string{
					"app.kubernetes.io/name":           "database-backup",
					"app.kubernetes.io/instance":       "nightly",
					"app.kubernetes.io/managed-by":     "database-operator",
					"database.seed1b407122.io/cluster": "db",
				},
				OwnerReferences: []metav1.OwnerReference{{
					APIVersion: "database.seed1b407122.io/v1alpha1", Kind: "DatabaseBackup", Name: "nightly", UID: "uid-backup",
					Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
				}},
			},
			Spec: snapshotv1.VolumeSnapshotSpec{
				Source:                  snapshotv1.VolumeSnapshotSource{PersistentVolumeClaimName: ptr.To("data-db-2")},
				VolumeSnapshotClassName: ptr.To("csi-snapclass"),
			},
		}))
	})

	DescribeTable("DefaultClass chooses the one default class of the driver",
		func(classes []snapshotv1.VolumeSnapshotClass, want, wantErr string) {
			got, err := DefaultClass(classes, "csi.example.com")
			Expect(got).To(Equal(want))
			if wantErr == "" {
				Expect(err).NotTo(HaveOccurred())
				return
			}
			Expect(err).To(MatchError(wantErr))
		},
		Entry("the default of the driver, among others", []snapshotv1.VolumeSnapshotClass{
			snapshotClass("other-default", "other.example.com", true),
			snapshotClass("plain", "csi.example.com", false),
			snapshotClass("fast", "csi.example.com", true),
		}, "fast", ""),
		Entry("no class at all", nil, "",
			`no VolumeSnapshotClass of driver csi.example.com is annotated snapshot.storage.kubernetes.io/is-default-class: "true": create one, or name a class in spec.volumeSnapshotClassName`),
		Entry("classes of the driver, none default; a default of another driver", []snapshotv1.VolumeSnapshotClass{
			snapshotClass("plain", "csi.example.com", false), snapshotClass("other-default", "other.example.com", true),
		}, "", `no VolumeSnapshotClass of driver csi.example.com is annotated snapshot.storage.kubernetes.io/is-default-class: "true": create one, or name a class in spec.volumeSnapshotClassName`),
		Entry("two defaults of the driver", []snapshotv1.VolumeSnapshotClass{
			snapshotClass("b", "csi.example.com", true), snapshotClass("a", "csi.example.com", true),
		}, "", "VolumeSnapshotClasses a, b are all annotated as the default of driver csi.example.com: keep the annotation on one, or name a class in spec.volumeSnapshotClassName"),
	)
})
