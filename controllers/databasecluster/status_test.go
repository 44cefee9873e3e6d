/*
Copyright 2026 The database-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package databasecluster

import (
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// stsWithStatus is a StatefulSet at generation 2 with the given status counts.
func stsWithStatus(replicas, ready, updated int32, current, update string) *appsv1.StatefulSet {
	sts, _ := BuildStatefulSet(newCluster("db"))
	sts.Generation = 2
	sts.Status = appsv1.StatefulSetStatus{
		ObservedGeneration: 2, Replicas: replicas, ReadyReplicas: ready, UpdatedReplicas: updated,
		CurrentRevision: current, UpdateRevision: update,
	}
	return sts
}

// claim is a data claim with the given reported capacity ("" for a claim not bound yet).
func claim(capacity string) corev1.PersistentVolumeClaim {
	c := corev1.PersistentVolumeClaim{}
	if capacity != "" {
		c.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(capacity)}
	}
	return c
}

// conditionOf returns type, status, reason and message of one condition, for exact comparison.
func conditionOf(conditions []metav1.Condition, conditionType string) []string {
	c := meta.FindStatusCondition(conditions, conditionType)
	if c == nil {
		return nil
	}
	return []string{c.Type, string(c.Status), c.Reason, c.Message}
}

var _ = Describe("Conditions", Label("unit"), func() {
	DescribeTable("Available",
		func(sts *appsv1.StatefulSet, want []string) {
			var conditions []metav1.Condition
			setAvailableCondition(&conditions, newCluster("db"), sts)
			Expect(conditionOf(conditions, "Available")).To(Equal(want))
		},
		Entry("no StatefulSet yet", nil,
			[]string{"Available", "False", "ReplicasNotReady", "0/3 replicas are ready"}),
		Entry("2 of 3 ready", stsWithStatus(3, 2, 3, "r1", "r1"),
			[]string{"Available", "False", "ReplicasNotReady", "2/3 replicas are ready"}),
		Entry("all ready", stsWithStatus(3, 3, 3, "r1", "r1"),
			[]string{"Available", "True", "AllReplicasReady", "3/3 replicas are ready"}),
	)

	DescribeTable("Progressing",
		func(sts *appsv1.StatefulSet, want []string) {
			var conditions []metav1.Condition
			setProgressingCondition(&conditions, newCluster("db"), sts)
			Expect(conditionOf(conditions, "Progressing")).To(Equal(want))
		},
		Entry("creating", nil,
			[]string{"Progressing", "True", "Creating", "the StatefulSet does not exist yet"}),
		Entry("scaling", stsWithStatus(1, 1, 1, "r1", "r1"),
			[]string{"Progressing", "True", "Scaling", "scaling from 1 to 3 pods"}),
		Entry("rolling", stsWithStatus(3, 3, 1, "r1", "r2"),
			[]string{"Progressing", "True", "RollingUpdate", "1/3 pods run the current revision"}),
		Entry("done", stsWithStatus(3, 3, 3, "r2", "r2"),
			[]string{"Progressing", "False", "RolloutComplete", "all 3 pods run the current revision"}),
		Entry("generation not observed", func() *appsv1.StatefulSet {
			sts := stsWithStatus(3, 3, 3, "r2", "r2")
			sts.Generation = 3
			return sts
		}(), []string{"Progressing", "True", "RollingUpdate", "waiting for the StatefulSet controller to observe generation 3"}),
	)

	DescribeTable("Degraded",
		func(err error, want []string) {
			var conditions []metav1.Condition
			setDegradedCondition(&conditions, newCluster("db"), err)
			Expect(conditionOf(conditions, "Degraded")).To(Equal(want))
		},
		Entry("no error", nil, []string{"Degraded", "False", "AsExpected", "every child is as specified"}),
		Entry("write failed", errors.New("creating StatefulSet default/db: forbidden"),
			[]string{"Degraded", "True", "ReconcileFailed", "creating StatefulSet default/db: forbidden"}),
	)

	DescribeTable("Paused",
		func(dc *databasev1alpha1.DatabaseCluster, want []string) {
			var conditions []metav1.Condition
			setPausedCondition(&conditions, dc)
			Expect(conditionOf(conditions, "Paused")).To(Equal(want))
		},
		Entry("running", newCluster("db"), []string{"Paused", "False", "NotPaused", "changes to the spec are applied"}),
		Entry("paused", newCluster("db", withPaused(true)),
			[]string{"Paused", "True", "PausedByUser", "spec.paused is true: no child is changed until it is false"}),
	)

	DescribeTable("Resizing",
		func(sts *appsv1.StatefulSet, claims []corev1.PersistentVolumeClaim, want []string) {
			var conditions []metav1.Condition
			setResizingCondition(&conditions, newCluster("db", withSize("2Gi")), sts, claims)
			Expect(conditionOf(conditions, "Resizing")).To(Equal(want))
		},
		Entry("no claims yet", nil, nil,
			[]string{"Resizing", "False", "StorageAsRequested", "0/0 bound claims have 2Gi"}),
		Entry("claims not bound yet are not resizing", nil, []corev1.PersistentVolumeClaim{claim(""), claim("")},
			[]string{"Resizing", "False", "StorageAsRequested", "0/0 bound claims have 2Gi"}),
		Entry("one claim still small", nil, []corev1.PersistentVolumeClaim{claim("2Gi"), claim("1Gi")},
			[]string{"Resizing", "True", "StorageExpanding", "1/2 bound claims have 2Gi"}),
		Entry("claims grown, StatefulSet template still small", stsWithStatus(3, 3, 3, "r1", "r1"),
			[]corev1.PersistentVolumeClaim{claim("2Gi"), claim("4Gi")},
			[]string{"Resizing", "True", "StorageExpanding", "2/2 bound claims have 2Gi"}),
		Entry("done", func() *appsv1.StatefulSet {
			sts, _ := BuildStatefulSet(newCluster("db", withSize("2Gi")))
			return sts
		}(), []corev1.PersistentVolumeClaim{claim("2Gi"), claim("2Gi")},
			[]string{"Resizing", "False", "StorageAsRequested", "2/2 bound claims have 2Gi"}),
	)

	It("computes the status from the StatefulSet and keeps transition times of unchanged conditions", func() {
		dc := newCluster("db")
		dc.Generation = 4
		first := computeStatus(dc, observation{statefulSet: stsWithStatus(3, 2, 3, "r1", "r1")})
		Expect(first.ObservedGeneration).To(Equal(int64(4)))
		Expect(first.Replicas).To(Equal(int32(3)))
		Expect(first.ReadyReplicas).To(Equal(int32(2)))
		Expect(first.UpdatedReplicas).To(Equal(int32(3)))
		Expect(first.CurrentImage).To(Equal("registry.example/db:1.0"))
		Expect(first.Conditions).To(HaveLen(5))
		for _, c := range first.Conditions {
			Expect(c.ObservedGeneration).To(Equal(int64(4)))
		}

		past := metav1.NewTime(first.Conditions[0].LastTransitionTime.Add(-3600e9))
		for i := range first.Conditions {
			first.Conditions[i].LastTransitionTime = past
		}
		dc.Status = first
		second := computeStatus(dc, observation{statefulSet: stsWithStatus(3, 3, 3, "r1", "r1")})
		Expect(meta.FindStatusCondition(second.Conditions, "Available").LastTransitionTime).NotTo(Equal(past))
		Expect(meta.FindStatusCondition(second.Conditions, "Paused").LastTransitionTime).To(Equal(past))
	})
})
