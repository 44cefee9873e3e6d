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
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/cachecfg"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
)

// rolloutNow is the clock of the rollout tables; rolloutDeadline their progress deadline.
var rolloutNow = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

const rolloutDeadline = 10 * time.Minute

// podOption changes a test pod.
type podOption func(*corev1.Pod)

// rolloutSts is the StatefulSet "db" (UID sts-uid) of 3 replicas at generation 2, observed,
// rolling from revision db-old to db-new.
func rolloutSts() *appsv1.StatefulSet {
	sts := stsWithStatus(3, 2, 1, "db-old", "db-new")
	sts.UID = "sts-uid"
	return sts
}

// member is pod db-<ordinal> of rolloutSts, of revision, Ready since an hour, changed by opts.
func member(ordinal int, revision string, opts ...podOption) corev1.Pod {
	pod := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("db-%d", ordinal), Namespace: "default", UID: types.UID(fmt.Sprintf("uid-%d", ordinal)),
			CreationTimestamp: metav1.NewTime(rolloutNow.Add(-2 * time.Hour)),
			Labels:            map[string]string{revisionLabel: revision},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db", UID: "sts-uid",
				Controller: ptr.To(true)}},
		},
		Status: corev1.PodStatus{
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue,
				LastTransitionTime: metav1.NewTime(rolloutNow.Add(-time.Hour))}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: specs.ContainerName, Ready: true,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}},
		},
	}
	for _, opt := range opts {
		opt(&pod)
	}
	return pod
}

// notReadyFor makes the pod not Ready since d ago, its container running but not ready.
func notReadyFor(d time.Duration) podOption {
	return func(p *corev1.Pod) {
		p.Status.Conditions[0].Status = corev1.ConditionFalse
		p.Status.Conditions[0].LastTransitionTime = metav1.NewTime(rolloutNow.Add(-d))
		p.Status.ContainerStatuses[0].Ready = false
	}
}

// waiting makes the pod's database container wait for reason (not Ready for a minute), after
// exitCode when it is not negative.
func waiting(reason, message string, exitCode int32) podOption {
	return func(p *corev1.Pod) {
		notReadyFor(time.Minute)(p)
		s := &p.Status.ContainerStatuses[0]
		s.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}
		if exitCode >= 0 {
			s.RestartCount = 4
			s.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: exitCode, StartedAt: metav1.NewTime(rolloutNow.Add(-20 * time.Second))}}
		}
	}
}

// runningAfterCrash: the database container runs again after exiting with code 1, and the pod
// has not been Ready since ready ago (the crashed run started 20s ago).
func runningAfterCrash(ready time.Duration) podOption {
	return func(p *corev1.Pod) {
		waiting("", "", 1)(p)
		notReadyFor(ready)(p)
		p.Status.ContainerStatuses[0].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	}
}

// initWaiting adds an init container "setup" waiting for reason.
func initWaiting(reason string) podOption {
	return func(p *corev1.Pod) {
		notReadyFor(time.Minute)(p)
		p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}
		p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "setup",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}}}
	}
}

func terminating(p *corev1.Pod) {
	p.DeletionTimestamp = ptr.To(metav1.NewTime(rolloutNow))
}

func notControlled(p *corev1.Pod) { p.OwnerReferences = nil }

func withUID(uid types.UID) podOption { return func(p *corev1.Pod) { p.UID = uid } }

var _ = Describe("Stuck rollout", Label("unit"), func() {
	DescribeTable("a member is stuck or not (memberStuck)",
		func(pod corev1.Pod, detail string, wait time.Duration) {
			gotDetail, gotWait := memberStuck(&pod, rolloutNow, rolloutDeadline)
			Expect(gotDetail).To(Equal(detail))
			Expect(gotWait).To(Equal(wait))
		},
		Entry("Ready: not stuck, nothing to wait for", member(0, "r"), "", time.Duration(0)),
		Entry("not Ready for a minute: 9 minutes left", member(0, "r", notReadyFor(time.Minute)), "", 9*time.Minute),
		Entry("not Ready for exactly the deadline: stuck", member(0, "r", notReadyFor(rolloutDeadline)),
			"not Ready within spec.rollout.progressDeadlineSeconds (600s): container database running but failing its readiness probe", time.Duration(0)),
		Entry("no Ready condition, created 2h ago: stuck, measured from the creation", func() corev1.Pod {
			p := member(0, "r")
			p.Status = corev1.PodStatus{Phase: corev1.PodPending}
			return p
		}(), "not Ready within spec.rollout.progressDeadlineSeconds (600s)", time.Duration(0)),
		Entry("ImagePullBackOff: stuck at once", member(0, "r", waiting("ImagePullBackOff", `Back-off pulling image "db:bad"`, -1)),
			"container database ImagePullBackOff", time.Duration(0)),
		Entry("ErrImagePull: told as ImagePullBackOff, so the message does not flap", member(0, "r", waiting("ErrImagePull", "rpc error", -1)),
			"container database ImagePullBackOff", time.Duration(0)),
		Entry("CrashLoopBackOff: with the last exit code", member(0, "r", waiting("CrashLoopBackOff", "back-off 40s", 1)),
			"container database CrashLoopBackOff (last exit code 1)", time.Duration(0)),
		Entry("CreateContainerConfigError: with the kubelet's message", member(0, "r",
			waiting("CreateContainerConfigError", `secret "db-creds" not found`, -1)),
			`container database CreateContainerConfigError: secret "db-creds" not found`, time.Duration(0)),
		Entry("running between two back-offs of a crash loop: still CrashLoopBackOff", member(0, "r", runningAfterCrash(time.Minute)),
			"container database CrashLoopBackOff (last exit code 1)", time.Duration(0)),
		Entry("running again after a crash of a member that had been Ready: not stuck yet",
			member(0, "r", runningAfterCrash(10*time.Second)), "", rolloutDeadline-10*time.Second),
		Entry("an init container in ImagePullBackOff", member(0, "r", initWaiting("ImagePullBackOff")),
			"container setup ImagePullBackOff", time.Duration(0)),
		Entry("ContainerCreating for a minute: not stuck yet", member(0, "r", waiting("ContainerCreating", "", -1)),
			"", 9*time.Minute),
		Entry("terminating, even crash-looping: not stuck (the StatefulSet replaces it)",
			member(0, "r", waiting("CrashLoopBackOff", "", 1), terminating), "", time.Duration(0)),
	)

	DescribeTable("the rollout is stuck or not (findStuckRollout)",
		func(sts *appsv1.StatefulSet, pods []corev1.Pod, stuck *stuckMember, wait time.Duration) {
			got, gotWait := findStuckRollout(cachecfg.ViewStatefulSet(sts), pods, rolloutNow, rolloutDeadline)
			Expect(got).To(Equal(stuck))
			Expect(gotWait).To(Equal(wait))
		},
		Entry("no StatefulSet", nil, []corev1.Pod{member(0, "db-new", waiting("CrashLoopBackOff", "", 1))}, nil, time.Duration(0)),
		Entry("every member Ready", rolloutSts(), []corev1.Pod{member(0, "db-old"), member(1, "db-old"), member(2, "db-new")},
			nil, time.Duration(0)),
		Entry("the updated member crash-loops: stuck, named with its container's state", rolloutSts(),
			[]corev1.Pod{member(0, "db-old"), member(1, "db-old"), member(2, "db-new", waiting("CrashLoopBackOff", "", 1))},
			&stuckMember{pod: "db-2", uid: "uid-2", revision: "db-new", detail: "container database CrashLoopBackOff (last exit code 1)"},
			time.Duration(0)),
		Entry("the updated member not Ready for 4 minutes: the deadline in 6", rolloutSts(),
			[]corev1.Pod{member(0, "db-old"), member(1, "db-old"), member(2, "db-new", notReadyFor(4*time.Minute))},
			nil, 6*time.Minute),
		Entry("a member of an older revision crash-loops: not the rollout's (the replacement's business)", rolloutSts(),
			[]corev1.Pod{member(0, "db-old"), member(1, "db-old", waiting("CrashLoopBackOff", "", 1)), member(2, "db-new")},
			nil, time.Duration(0)),
		Entry("a pod the StatefulSet does not control: not a member", rolloutSts(),
			[]corev1.Pod{member(2, "db-new", waiting("CrashLoopBackOff", "", 1), notControlled)}, nil, time.Duration(0)),
		Entry("two stuck: the first by name", rolloutSts(),
			[]corev1.Pod{member(1, "db-new", waiting("ImagePullBackOff", "", -1)), member(2, "db-new", waiting("ImagePullBackOff", "", -1))},
			&stuckMember{pod: "db-1", uid: "uid-1", revision: "db-new", detail: "container database ImagePullBackOff"},
			time.Duration(0)),
	)

	DescribeTable("which stuck member is replaced (stuckPodToReplace)",
		func(sts *appsv1.StatefulSet, pods []corev1.Pod, replaced map[string]types.UID, want string) {
			got := stuckPodToReplace(cachecfg.ViewStatefulSet(sts), pods, rolloutNow, rolloutDeadline, replaced)
			if want == "" {
				Expect(got).To(BeNil())
				return
			}
			Expect(got).NotTo(BeNil())
			Expect(got.pod).To(Equal(want))
		},
		Entry("after a revert: the crash-looping member of the revision left", rolloutSts(),
			[]corev1.Pod{member(0, "db-new"), member(1, "db-new"), member(2, "db-old", waiting("CrashLoopBackOff", "", 1))}, nil, "db-2"),
		Entry("a member of the update revision is never deleted, however stuck", rolloutSts(),
			[]corev1.Pod{member(0, "db-old"), member(1, "db-old"), member(2, "db-new", waiting("CrashLoopBackOff", "", 1))}, nil, ""),
		Entry("a Ready member of an older revision is never deleted", rolloutSts(),
			[]corev1.Pod{member(0, "db-old"), member(1, "db-old"), member(2, "db-new")}, nil, ""),
		Entry("two stuck members of older revisions: only one, the highest ordinal", rolloutSts(),
			[]corev1.Pod{member(0, "db-new"), member(1, "db-old", waiting("ImagePullBackOff", "", -1)),
				member(2, "db-old", waiting("CrashLoopBackOff", "", 1))}, nil, "db-2"),
		Entry("a stuck pod the StatefulSet does not control is never deleted", rolloutSts(),
			[]corev1.Pod{member(0, "db-new"), member(1, "db-new"), member(2, "db-new"),
				member(3, "db-old", waiting("CrashLoopBackOff", "", 1), notControlled)}, nil, ""),
		Entry("not Ready but within the deadline, no container failing: not yet", rolloutSts(),
			[]corev1.Pod{member(0, "db-new"), member(1, "db-new"), member(2, "db-old", notReadyFor(9*time.Minute))}, nil, ""),
		Entry("not Ready past the deadline: replaced", rolloutSts(),
			[]corev1.Pod{member(0, "db-new"), member(1, "db-new"), member(2, "db-old", notReadyFor(rolloutDeadline))}, nil, "db-2"),
		Entry("a member is terminating: none, one at a time", rolloutSts(),
			[]corev1.Pod{member(0, "db-new", terminating), member(1, "db-new"), member(2, "db-old", waiting("CrashLoopBackOff", "", 1))}, nil, ""),
		Entry("a member is missing (being recreated): none, one at a time", rolloutSts(),
			[]corev1.Pod{member(1, "db-old", waiting("CrashLoopBackOff", "", 1)), member(2, "db-new")}, nil, ""),
		Entry("the pod deleted before, still in the cache: not again", rolloutSts(),
			[]corev1.Pod{member(0, "db-new"), member(1, "db-new"), member(2, "db-old", waiting("CrashLoopBackOff", "", 1))},
			map[string]types.UID{"db-2": "uid-2"}, ""),
		Entry("the same name recreated (a new UID) and stuck again on an old revision: replaced again", rolloutSts(),
			[]corev1.Pod{member(0, "db-new"), member(1, "db-new"), member(2, "db-old", waiting("CrashLoopBackOff", "", 1), withUID("uid-2b"))},
			map[string]types.UID{"db-2": "uid-2"}, "db-2"),
		Entry("the StatefulSet controller has not observed the new template: its update revision may be stale", func() *appsv1.StatefulSet {
			sts := rolloutSts()
			sts.Generation = 3
			return sts
		}(), []corev1.Pod{member(0, "db-new"), member(1, "db-new"), member(2, "db-old", waiting("CrashLoopBackOff", "", 1))}, nil, ""),
		Entry("no StatefulSet", nil, []corev1.Pod{member(2, "db-old", waiting("CrashLoopBackOff", "", 1))}, nil, ""),
		Entry("a pod without a revision label: not a rolled member", rolloutSts(),
			[]corev1.Pod{member(0, "db-new"), member(1, "db-new"), member(2, "", waiting("CrashLoopBackOff", "", 1))}, nil, ""),
	)

	DescribeTable("Progressing tells a stuck rollout and a replacement",
		func(rollout rolloutObservation, want []string) {
			var conditions []metav1.Condition
			setProgressingCondition(&conditions, newCluster("db"), cachecfg.ViewStatefulSet(rolloutSts()), nil, rollout)
			Expect(conditionOf(conditions, "Progressing")).To(Equal(want))
		},
		Entry("stuck", rolloutObservation{stuck: &stuckMember{pod: "db-2", revision: "db-new", detail: "container database CrashLoopBackOff (last exit code 1)"}},
			[]string{"Progressing", "False", "RolloutStuck", "pod db-2: container database CrashLoopBackOff (last exit code 1)"}),
		Entry("replaced", rolloutObservation{statefulSet: cachecfg.ViewStatefulSet(rolloutSts()),
			replaced: &stuckMember{pod: "db-2", revision: "db-old", detail: "container database CrashLoopBackOff (last exit code 1)"}},
			[]string{"Progressing", "True", "StuckPodReplaced",
				"deleted pod db-2 of revision db-old (container database CrashLoopBackOff (last exit code 1)) so that StatefulSet db recreates it from revision db-new"}),
		Entry("neither: the rolling update", rolloutObservation{},
			[]string{"Progressing", "True", "RollingUpdate", "1/3 pods run the current revision"}),
	)

	DescribeTable("the warning is told once per stuck rollout (reasonBegan)",
		func(before, after string, told bool) {
			conditions := func(reason, message string) []metav1.Condition {
				if reason == "" {
					return nil
				}
				return []metav1.Condition{{Type: "Progressing", Status: metav1.ConditionFalse, Reason: reason, Message: message}}
			}
			got := reasonBegan(conditions(before, "pod db-2: a"), conditions(after, "pod db-2: b"), "Progressing", "RolloutStuck")
			Expect(got != nil).To(Equal(told))
		},
		Entry("rolling → stuck", "RollingUpdate", "RolloutStuck", true),
		Entry("a new cluster stuck from its first status", "", "RolloutStuck", true),
		Entry("stuck → stuck with another message", "RolloutStuck", "RolloutStuck", false),
		Entry("stuck → replaced", "RolloutStuck", "StuckPodReplaced", false),
		Entry("rolling → complete", "RollingUpdate", "RolloutComplete", false),
	)

	DescribeTable("spec.rollout.progressDeadlineSeconds",
		func(rollout *databasev1alpha1.RolloutSpec, want time.Duration) {
			dc := newCluster("db")
			dc.Spec.Rollout = rollout
			Expect(dc.ProgressDeadline()).To(Equal(want))
		},
		Entry("unset: 600s", nil, 10*time.Minute),
		Entry("set without a deadline: 600s", &databasev1alpha1.RolloutSpec{}, 10*time.Minute),
		Entry("30s", &databasev1alpha1.RolloutSpec{ProgressDeadlineSeconds: ptr.To[int32](30)}, 30*time.Second),
	)
})
