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

package databasecluster

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/cachecfg"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
)

// withOfflineBackup marks the cluster as held stopped by the Offline DatabaseBackup name.
func withOfflineBackup(name string) clusterOption {
	return func(dc *databasev1alpha1.DatabaseCluster) {
		dc.Annotations = map[string]string{databasev1alpha1.OfflineBackupAnnotation: name}
	}
}

var _ = Describe("A cluster held by an Offline backup", Label("unit"), func() {
	It("runs no pod and keeps every claim, whatever whenScaled says", func() {
		dc := newCluster("db", withOfflineBackup("nightly"), withWhenScaled(databasev1alpha1.DeletePVC))
		Expect(dc.DesiredReplicas()).To(Equal(int32(0)))
		sts, err := specs.BuildStatefulSet(dc, specs.Inputs{})
		Expect(err).NotTo(HaveOccurred())
		Expect(sts.Spec.Replicas).To(Equal(ptr.To[int32](0)))
		Expect(sts.Spec.PersistentVolumeClaimRetentionPolicy).To(Equal(&appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
			WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
			WhenScaled:  appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
		}))
	})

	DescribeTable("its Hibernated and Available conditions name the backup",
		func(sts *appsv1.StatefulSet, hibernated, available []string) {
			status := computeStatus(newCluster("db", withOfflineBackup("nightly")), observation{statefulSet: cachecfg.ViewStatefulSet(sts)})
			Expect(conditionOf(status.Conditions, "Hibernated")).To(Equal(hibernated))
			Expect(conditionOf(status.Conditions, "Available")).To(Equal(available))
		},
		Entry("pods still running", stsWithStatus(2, 2, 2, "r1", "r1"),
			[]string{"Hibernated", "True", "Hibernating", "stopped for offline backup nightly: stopping 2 pods; claims, Services and status are kept"},
			[]string{"Available", "False", "Hibernated", "stopped for offline backup nightly: the cluster is stopped (2 ready pods left); its claims are kept"},
		),
		Entry("every pod stopped", stsWithStatus(0, 0, 0, "r1", "r1"),
			[]string{"Hibernated", "True", "Hibernated", "stopped for offline backup nightly: no pod runs; claims, Services and status are kept"},
			[]string{"Available", "False", "Hibernated", "stopped for offline backup nightly: the cluster is stopped (0 ready pods left); its claims are kept"},
		),
	)

	It("runs spec.replicas again once the annotation is gone", func() {
		Expect(newCluster("db", withOfflineBackup("")).DesiredReplicas()).To(Equal(int32(3)))
	})
})
