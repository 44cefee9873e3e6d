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
	"errors"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/cachecfg"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// stsWithStatus is a StatefulSet at generation 2 with the given status counts.
func stsWithStatus(replicas, ready, updated int32, current, update string) *appsv1.StatefulSet {
	sts, _ := specs.BuildStatefulSet(newCluster("db"), specs.Inputs{})
	sts.Generation = 2
	sts.Status = appsv1.StatefulSetStatus{
		ObservedGeneration: 2, Replicas: replicas, ReadyReplicas: ready, UpdatedReplicas: updated,
		CurrentRevision: current, UpdateRevision: update,
	}
	return sts
}

// newStatefulSet is the StatefulSet of "db" as created (generation 1), with no pod, and its
// generation observedGeneration (0 or 1) observed by the StatefulSet controller.
func newStatefulSet(observedGeneration int64) *appsv1.StatefulSet {
	sts, _ := specs.BuildStatefulSet(newCluster("db"), specs.Inputs{})
	sts.Generation = 1
	sts.Status = appsv1.StatefulSetStatus{ObservedGeneration: observedGeneration}
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
var conditionOf = testenv.ConditionOf

// fromStatefulSet is the body of the table of a condition that set computes from the StatefulSet
// of the cluster "db": the condition conditionType it sets has the entry's status, reason and
// message.
func fromStatefulSet(conditionType string, set func(*[]metav1.Condition, *databasev1alpha1.DatabaseCluster, *cachecfg.StatefulSetView),
) func(sts *appsv1.StatefulSet, status, reason, message string) {
	return func(sts *appsv1.StatefulSet, status, reason, message string) {
		conditions := testenv.SetOn(func(c *[]metav1.Condition) { set(c, newCluster("db"), cachecfg.ViewStatefulSet(sts)) })
		Expect(conditionOf(conditions, conditionType)).To(Equal([]string{conditionType, status, reason, message}))
	}
}

var _ = Describe("Conditions", Label("unit"), func() {
	DescribeTable("Available", fromStatefulSet("Available", setAvailableCondition),
		Entry("no StatefulSet yet", nil, "False", "ReplicasNotReady", "0/3 replicas are ready"),
		Entry("2 of 3 ready", stsWithStatus(3, 2, 3, "r1", "r1"), "False", "ReplicasNotReady", "2/3 replicas are ready"),
		Entry("all ready", stsWithStatus(3, 3, 3, "r1", "r1"), "True", "AllReplicasReady", "3/3 replicas are ready"),
	)

	DescribeTable("Progressing", fromStatefulSet("Progressing", func(c *[]metav1.Condition, dc *databasev1alpha1.DatabaseCluster, sts *cachecfg.StatefulSetView) {
		setProgressingCondition(c, dc, sts, nil, rolloutObservation{})
	}),
		Entry("creating", nil, "True", "Creating", "the StatefulSet does not exist yet"),
		Entry("scaling", stsWithStatus(1, 1, 1, "r1", "r1"), "True", "Scaling", "scaling from 1 to 3 pods"),
		Entry("rolling", stsWithStatus(3, 3, 1, "r1", "r2"), "True", "RollingUpdate", "1/3 pods run the current revision"),
		Entry("done", stsWithStatus(3, 3, 3, "r2", "r2"), "False", "RolloutComplete", "all 3 pods run the current revision"),
		Entry("new, not observed yet", newStatefulSet(0), "True", "Creating", "the new StatefulSet has no pod yet; 3 to create"),
		Entry("new, observed, no pod yet", newStatefulSet(1), "True", "Creating", "the new StatefulSet has no pod yet; 3 to create"),
		Entry("new, its first pod made", func() *appsv1.StatefulSet {
			sts := newStatefulSet(1)
			sts.Status.Replicas = 1
			return sts
		}(), "True", "Scaling", "scaling from 1 to 3 pods"),
		Entry("generation not observed", func() *appsv1.StatefulSet {
			sts := stsWithStatus(3, 3, 3, "r2", "r2")
			sts.Generation = 3
			return sts
		}(), "True", "RollingUpdate", "waiting for the StatefulSet controller to observe generation 3"),
	)

	It("Progressing names the condemned claims a scale-up waits for", func() {
		var conditions []metav1.Condition
		setProgressingCondition(&conditions, newCluster("db"), cachecfg.ViewStatefulSet(stsWithStatus(1, 1, 1, "r1", "r1")), []string{"data-db-1", "data-db-2"}, rolloutObservation{})
		Expect(conditionOf(conditions, "Progressing")).To(Equal([]string{"Progressing", "True", "Scaling",
			"scaling from 1 to 3 pods; waiting for the claims of removed members to be deleted first: data-db-1, data-db-2"}))
	})

	DescribeTable("Degraded",
		func(obs observation, want []string) {
			var conditions []metav1.Condition
			setDegradedCondition(&conditions, newCluster("db"), obs)
			Expect(conditionOf(conditions, "Degraded")).To(Equal(want))
		},
		Entry("no error", observation{}, []string{"Degraded", "False", "AsExpected", "every child is as specified"}),
		Entry("write failed", observation{err: errors.New("creating StatefulSet default/db: forbidden")},
			[]string{"Degraded", "True", "ReconcileFailed", "creating StatefulSet default/db: forbidden"}),
		Entry("only the first line of a long API error", observation{err: errors.New("patching claim: invalid\n@@ diff")},
			[]string{"Degraded", "True", "ReconcileFailed", "patching claim: invalid"}),
		Entry("a child's name held by another object", observation{err: fmt.Errorf("reconciling: %w",
			&child.ConflictError{Kind: "Service", Name: "db-headless", Holder: "no controller"})},
			[]string{"Degraded", "True", "ChildConflict", "reconciling: Service db-headless exists and is not controlled by this resource (held by no controller): it is left as it is until the name is free"}),
		Entry("a pod stuck", observation{stuck: &stuckPod{name: "db-2", notReadyFor: 6 * time.Minute, detail: "ImagePullBackOff: no such image"}},
			[]string{"Degraded", "True", "PodNotReady", "pod db-2 has not been Ready for 6m0s (ImagePullBackOff: no such image)"}),
		Entry("a pod the StatefulSet controller cannot create", observation{createFailure: `create Pod db-0 in StatefulSet db failed error: pods "db-0" is forbidden: exceeded quota`},
			[]string{"Degraded", "True", "PodCreateFailed", `the StatefulSet cannot create every pod: create Pod db-0 in StatefulSet db failed error: pods "db-0" is forbidden: exceeded quota`}),
		Entry("a write error wins over a stuck pod", observation{err: errors.New("boom"), stuck: &stuckPod{name: "db-2", notReadyFor: time.Hour}},
			[]string{"Degraded", "True", "ReconcileFailed", "boom"}),
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
			setResizingCondition(&conditions, newCluster("db", withSize("2Gi")), cachecfg.ViewStatefulSet(sts), claims)
			Expect(conditionOf(conditions, "Resizing")).To(Equal(want))
		},
		Entry("no claims yet", nil, nil,
			[]string{"Resizing", "False", "StorageAsRequested", "every bound claim has at least 2Gi"}),
		Entry("claims not bound yet are not resizing", nil, []corev1.PersistentVolumeClaim{claim(""), claim("")},
			[]string{"Resizing", "False", "StorageAsRequested", "every bound claim has at least 2Gi"}),
		Entry("one claim still small", nil, []corev1.PersistentVolumeClaim{claim("2Gi"), claim("1Gi")},
			[]string{"Resizing", "True", "StorageExpanding", "1/2 bound claims have 2Gi"}),
		Entry("claims grown, StatefulSet template still small", stsWithStatus(3, 3, 3, "r1", "r1"),
			[]corev1.PersistentVolumeClaim{claim("2Gi"), claim("4Gi")},
			[]string{"Resizing", "True", "StorageExpanding", "2/2 bound claims have 2Gi"}),
		Entry("claims bound, none small: the same message as before they were bound", nil,
			[]corev1.PersistentVolumeClaim{claim("2Gi"), claim("4Gi")},
			[]string{"Resizing", "False", "StorageAsRequested", "every bound claim has at least 2Gi"}),
		Entry("every claim has spec.storage.size, one grown past it by auto-grow is being expanded", nil,
			[]corev1.PersistentVolumeClaim{claim("2Gi"), func() corev1.PersistentVolumeClaim {
				c := claim("2Gi")
				c.Name = "data-db-1"
				c.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("3Gi")}
				return c
			}()},
			[]string{"Resizing", "True", "StorageExpanding", "claim data-db-1 is being expanded from 2Gi to 3Gi"}),
		Entry("done", func() *appsv1.StatefulSet {
			sts, _ := specs.BuildStatefulSet(newCluster("db", withSize("2Gi")), specs.Inputs{})
			return sts
		}(), []corev1.PersistentVolumeClaim{claim("2Gi"), claim("2Gi")},
			[]string{"Resizing", "False", "StorageAsRequested", "every bound claim has at least 2Gi"}),
	)

	It("computes the status from the StatefulSet and keeps transition times of unchanged conditions", func() {
		dc := newCluster("db")
		dc.Generation = 4
		first := computeStatus(dc, observation{statefulSet: cachecfg.ViewStatefulSet(stsWithStatus(3, 2, 3, "r1", "r1"))})
		Expect(first.ObservedGeneration).To(Equal(int64(4)))
		Expect(first.Replicas).To(Equal(int32(3)))
		Expect(first.ReadyReplicas).To(Equal(int32(2)))
		Expect(first.UpdatedReplicas).To(Equal(int32(3)))
		Expect(first.CurrentImage).To(Equal("registry.example/db:1.0"))
		Expect(first.Conditions).To(HaveLen(7))
		for _, c := range first.Conditions {
			Expect(c.ObservedGeneration).To(Equal(int64(4)))
		}

		past := metav1.NewTime(first.Conditions[0].LastTransitionTime.Add(-3600e9))
		for i := range first.Conditions {
			first.Conditions[i].LastTransitionTime = past
		}
		dc.Status = first
		second := computeStatus(dc, observation{statefulSet: cachecfg.ViewStatefulSet(stsWithStatus(3, 3, 3, "r1", "r1"))})
		Expect(meta.FindStatusCondition(second.Conditions, "Available").LastTransitionTime).NotTo(Equal(past))
		Expect(meta.FindStatusCondition(second.Conditions, "Paused").LastTransitionTime).To(Equal(past))
	})

	It("records the image of a cached StatefulSet", func() {
		dc := newCluster("db")
		cached, err := cachecfg.NewShared().TrimStatefulSet(stsWithStatus(3, 3, 3, "r1", "r1"))
		Expect(err).NotTo(HaveOccurred())
		status := computeStatus(dc, observation{statefulSet: cachecfg.ViewStatefulSet(cached.(*appsv1.StatefulSet))})
		Expect(status.CurrentImage).To(Equal("registry.example/db:1.0"))
	})
})

// podWith is a pod of the cluster created at created, with a Ready condition that changed at
// since (no condition when since is zero).
func podWith(name string, created, since time.Time, ready bool, waiting *corev1.ContainerStateWaiting) corev1.Pod {
	pod := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created)}}
	if !since.IsZero() {
		status := corev1.ConditionFalse
		if ready {
			status = corev1.ConditionTrue
		}
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.NewTime(since)}}
	}
	if waiting != nil {
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "database", State: corev1.ContainerState{Waiting: waiting}}}
	}
	return pod
}

var _ = Describe("findStuckPod", Label("unit"), func() {
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	timeout := 5 * time.Minute

	DescribeTable("finds the pod not Ready for longer than the bound",
		func(pods []corev1.Pod, wantMessage string, wantWait time.Duration) {
			stuck, wait := findStuckPod(pods, now, timeout)
			if wantMessage == "" {
				Expect(stuck).To(BeNil())
			} else {
				Expect(stuck).NotTo(BeNil())
				Expect(stuck.message()).To(Equal(wantMessage))
			}
			Expect(wait).To(Equal(wantWait))
		},
		Entry("no pods", nil, "", time.Duration(0)),
		Entry("all Ready for long", []corev1.Pod{podWith("db-0", ago(time.Hour), ago(time.Hour), true, nil)}, "", time.Duration(0)),
		Entry("one not Ready for 2 minutes: look again in 3",
			[]corev1.Pod{podWith("db-0", ago(time.Hour), ago(2*time.Minute), false, nil)}, "", 3*time.Minute),
		Entry("a new pod without conditions counts from its creation",
			[]corev1.Pod{podWith("db-0", ago(time.Minute), time.Time{}, false, nil)}, "", 4*time.Minute),
		Entry("the nearest deadline wins", []corev1.Pod{
			podWith("db-0", ago(time.Hour), ago(time.Minute), false, nil),
			podWith("db-1", ago(time.Hour), ago(4*time.Minute), false, nil),
		}, "", time.Minute),
		Entry("not Ready for 6 minutes, with the kubelet's reason", []corev1.Pod{
			podWith("db-0", ago(time.Hour), ago(time.Hour), true, nil),
			podWith("db-1", ago(time.Hour), ago(6*time.Minute), false,
				&corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "Back-off pulling image"}),
		}, "pod db-1 has not been Ready for 6m0s (ImagePullBackOff: Back-off pulling image)", time.Duration(0)),
		Entry("a pod being deleted is not stuck", []corev1.Pod{func() corev1.Pod {
			pod := podWith("db-0", ago(time.Hour), ago(time.Hour), false, nil)
			pod.DeletionTimestamp = ptr.To(metav1.NewTime(now))
			return pod
		}()}, "", time.Duration(0)),
	)
})

var _ = Describe("podsMissing: when the StatefulSet controller's FailedCreate events are looked for", Label("unit"), func() {
	observed := func(generation int64, replicas int32) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{Status: appsv1.StatefulSetStatus{ObservedGeneration: generation, Replicas: replicas}}
	}
	DescribeTable("", func(sts *appsv1.StatefulSet, pods int, want bool) {
		Expect(podsMissing(cachecfg.ViewStatefulSet(sts), pods, 3)).To(Equal(want))
	},
		Entry("no StatefulSet", nil, 0, false),
		Entry("just created: its controller has not observed it", observed(0, 0), 0, false),
		Entry("observed, 1 of 3 pods created: it may have failed", observed(1, 1), 1, true),
		Entry("every pod created, the cache has seen 2", observed(1, 3), 2, false),
		Entry("every pod there", observed(1, 3), 3, false),
	)
})

var _ = DescribeTable("statusDeferred: a reconcile that created the StatefulSet leaves the status to the next one, unless something failed",
	func(obs observation, deferred bool) {
		Expect(statusDeferred(obs)).To(Equal(deferred))
	},
	Entry("StatefulSet created, nothing failed", observation{statefulSetCreated: true}, true),
	Entry("StatefulSet created, the PodMonitor failed: Degraded is written now",
		observation{statefulSetCreated: true, err: errors.New("creating PodMonitor db: forbidden")}, false),
	Entry("StatefulSet there already", observation{statefulSet: cachecfg.ViewStatefulSet(stsWithStatus(1, 1, 1, "a", "a"))}, false),
	Entry("no StatefulSet, a child failed", observation{err: errors.New("creating Service db: forbidden")}, false),
)
