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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/cachecfg"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
)

// withHibernated sets spec.hibernated.
func withHibernated(hibernated bool) clusterOption {
	return func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Hibernated = hibernated }
}

// withWhenScaled sets spec.pvcRetentionPolicy.whenScaled.
func withWhenScaled(policy databasev1alpha1.PVCRetentionPolicyType) clusterOption {
	return func(dc *databasev1alpha1.DatabaseCluster) {
		dc.Spec.PVCRetentionPolicy = &databasev1alpha1.PVCRetentionPolicy{WhenScaled: policy}
	}
}

// withSecurityContext sets spec.securityContext.
func withSecurityContext(sc *databasev1alpha1.SecurityContextSpec) clusterOption {
	return func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.SecurityContext = sc }
}

var _ = Describe("Hibernation and the security context", Label("unit"), func() {
	DescribeTable("the StatefulSet's replicas and claim retention",
		func(dc *databasev1alpha1.DatabaseCluster, replicas int32, whenScaled appsv1.PersistentVolumeClaimRetentionPolicyType) {
			sts, err := specs.BuildStatefulSet(dc, specs.Inputs{})
			Expect(err).NotTo(HaveOccurred())
			Expect(sts.Spec.Replicas).To(Equal(ptr.To(replicas)))
			Expect(sts.Spec.PersistentVolumeClaimRetentionPolicy).To(Equal(&appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType, WhenScaled: whenScaled,
			}))
			Expect(specs.RetentionPolicy(dc)).To(Equal(sts.Spec.PersistentVolumeClaimRetentionPolicy),
				"the deletion path aligns the StatefulSet to the same policy")
		},
		Entry("running", newCluster("db"), int32(3), appsv1.RetainPersistentVolumeClaimRetentionPolicyType),
		Entry("running, whenScaled Delete", newCluster("db", withWhenScaled(databasev1alpha1.DeletePVC)),
			int32(3), appsv1.DeletePersistentVolumeClaimRetentionPolicyType),
		Entry("hibernated: no pods", newCluster("db", withHibernated(true)),
			int32(0), appsv1.RetainPersistentVolumeClaimRetentionPolicyType),
		Entry("hibernated keeps the claims even with whenScaled Delete",
			newCluster("db", withHibernated(true), withWhenScaled(databasev1alpha1.DeletePVC)),
			int32(0), appsv1.RetainPersistentVolumeClaimRetentionPolicyType),
	)

	DescribeTable("conditions of a hibernated cluster",
		func(dc *databasev1alpha1.DatabaseCluster, sts *appsv1.StatefulSet, want [][]string) {
			status := computeStatus(dc, observation{statefulSet: cachecfg.ViewStatefulSet(sts)})
			for _, w := range want {
				Expect(conditionOf(status.Conditions, w[0])).To(Equal(w))
			}
		},
		Entry("running", newCluster("db"), stsWithStatus(3, 3, 3, "r1", "r1"), [][]string{
			{"Hibernated", "False", "NotHibernated", "the cluster runs spec.replicas (3) pods"},
			{"Available", "True", "AllReplicasReady", "3/3 replicas are ready"},
		}),
		Entry("stopping", newCluster("db", withHibernated(true)), stsWithStatus(3, 3, 3, "r1", "r1"), [][]string{
			{"Hibernated", "True", "Hibernating", "spec.hibernated is true: stopping 3 pods; claims, Services and status are kept"},
			{"Available", "False", "Hibernated", "spec.hibernated is true: the cluster is stopped (3 ready pods left); its claims are kept"},
			{"Progressing", "True", "Scaling", "scaling from 3 to 0 pods"},
		}),
		Entry("stopped", newCluster("db", withHibernated(true)), stsWithStatus(0, 0, 0, "r1", "r1"), [][]string{
			{"Hibernated", "True", "Hibernated", "spec.hibernated is true: no pod runs; claims, Services and status are kept"},
			{"Available", "False", "Hibernated", "spec.hibernated is true: the cluster is stopped (0 ready pods left); its claims are kept"},
			{"Progressing", "False", "RolloutComplete", "all 0 pods run the current revision"},
			{"Degraded", "False", "AsExpected", "every child is as specified"},
		}),
		Entry("waking", newCluster("db"), stsWithStatus(0, 0, 0, "r1", "r1"), [][]string{
			{"Hibernated", "False", "NotHibernated", "the cluster runs spec.replicas (3) pods"},
			{"Available", "False", "ReplicasNotReady", "0/3 replicas are ready"},
			{"Progressing", "True", "Scaling", "scaling from 0 to 3 pods"},
		}),
	)

	DescribeTable("the pod's security context",
		func(dc *databasev1alpha1.DatabaseCluster, want *corev1.PodSecurityContext) {
			sts, err := specs.BuildStatefulSet(dc, specs.Inputs{})
			Expect(err).NotTo(HaveOccurred())
			Expect(sts.Spec.Template.Spec.SecurityContext).To(Equal(want))
			// The container keeps the restricted profile whatever the spec says.
			Expect(sts.Spec.Template.Spec.Containers[0].SecurityContext).To(Equal(&corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr.To(false),
				RunAsNonRoot:             ptr.To(true),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			}))
		},
		Entry("unset: the image's user, fsGroup 65532", newCluster("db"), &corev1.PodSecurityContext{
			RunAsNonRoot:        ptr.To(true),
			SeccompProfile:      &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			FSGroup:             ptr.To[int64](65532),
			FSGroupChangePolicy: ptr.To(corev1.FSGroupChangeOnRootMismatch),
		}),
		Entry("postgres: uid, gid and fsGroup 999", newCluster("db", withSecurityContext(&databasev1alpha1.SecurityContextSpec{
			RunAsUser: ptr.To[int64](999), RunAsGroup: ptr.To[int64](999), FSGroup: ptr.To[int64](999),
		})), &corev1.PodSecurityContext{
			RunAsNonRoot:        ptr.To(true),
			RunAsUser:           ptr.To[int64](999),
			RunAsGroup:          ptr.To[int64](999),
			SeccompProfile:      &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			FSGroup:             ptr.To[int64](999),
			FSGroupChangePolicy: ptr.To(corev1.FSGroupChangeOnRootMismatch),
		}),
		Entry("only runAsUser: fsGroup stays 65532", newCluster("db", withSecurityContext(&databasev1alpha1.SecurityContextSpec{
			RunAsUser: ptr.To[int64](65532),
		})), &corev1.PodSecurityContext{
			RunAsNonRoot:        ptr.To(true),
			RunAsUser:           ptr.To[int64](65532),
			SeccompProfile:      &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			FSGroup:             ptr.To[int64](65532),
			FSGroupChangePolicy: ptr.To(corev1.FSGroupChangeOnRootMismatch),
		}),
	)

	It("passes spec.command and spec.args to the container", func() {
		dc := newCluster("db")
		dc.Spec.Command = []string{"/usr/local/bin/etcd"}
		dc.Spec.Args = []string{"--name=$(POD_NAME)"}
		sts, err := specs.BuildStatefulSet(dc, specs.Inputs{})
		Expect(err).NotTo(HaveOccurred())
		Expect(sts.Spec.Template.Spec.Containers[0].Command).To(Equal([]string{"/usr/local/bin/etcd"}))
		Expect(sts.Spec.Template.Spec.Containers[0].Args).To(Equal([]string{"--name=$(POD_NAME)"}))
	})

	It("reports desired replicas 0 while hibernated", func() {
		Expect(newCluster("db", withHibernated(true)).DesiredReplicas()).To(Equal(int32(0)))
		Expect(newCluster("db").DesiredReplicas()).To(Equal(int32(3)))
		var conditions []metav1.Condition
		setHibernatedCondition(&conditions, newCluster("db", withHibernated(true)), nil)
		Expect(conditionOf(conditions, "Hibernated")).To(Equal([]string{
			"Hibernated", "True", "Hibernated", "spec.hibernated is true: no pod runs; claims, Services and status are kept",
		}))
	})
})

var _ = Describe("templateInSync and the user", Label("unit"), func() {
	DescribeTable("sees the removal of a field the API server does not default",
		func(change func(*corev1.PodTemplateSpec)) {
			dc := newCluster("db", withSecurityContext(&databasev1alpha1.SecurityContextSpec{
				RunAsUser: ptr.To[int64](999), RunAsGroup: ptr.To[int64](999),
			}))
			dc.Spec.Command = []string{"/usr/local/bin/etcd"}
			stored, err := specs.BuildStatefulSet(dc, specs.Inputs{})
			Expect(err).NotTo(HaveOccurred())
			desired := stored.Spec.Template.DeepCopy()
			change(desired)
			Expect(templateInSync(*desired, stored.Spec.Template)).To(BeFalse())
			Expect(templateInSync(stored.Spec.Template, stored.Spec.Template)).To(BeTrue())
		},
		Entry("runAsUser removed", func(t *corev1.PodTemplateSpec) { t.Spec.SecurityContext.RunAsUser = nil }),
		Entry("runAsGroup removed", func(t *corev1.PodTemplateSpec) { t.Spec.SecurityContext.RunAsGroup = nil }),
		Entry("command removed", func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Command = nil }),
		Entry("fsGroup changed", func(t *corev1.PodTemplateSpec) { t.Spec.SecurityContext.FSGroup = ptr.To[int64](1) }),
	)
})
