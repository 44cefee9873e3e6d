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
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// The envtest specs of a stuck rollout. envtest has no StatefulSet controller and no kubelet:
// the spec makes the member pods, writes their status as a kubelet would for a crash-looping
// container, and writes the StatefulSet's status (its revisions) as its controller would.
var _ = Describe("DatabaseCluster stuck rollout", Ordered, Label("integration"), func() {
	k8s := testenv.StartInBeforeAll(setupController)
	clusters := testenv.Kind[*databasev1alpha1.DatabaseCluster, *appsv1.StatefulSet]{
		Env: k8s, Name: "DatabaseCluster", ChildName: (*databasev1alpha1.DatabaseCluster).StatefulSetName,
	}

	// setRevisions plays the StatefulSet controller: it has observed the current generation,
	// rolls from current to update, with ready Ready pods and updated pods of the update revision.
	setRevisions := func(ctx SpecContext, dc *databasev1alpha1.DatabaseCluster, generation int64, current, update string, ready, updated int32) {
		Eventually(func(g Gomega) {
			sts := clusters.Child(ctx, dc)(g)
			g.Expect(sts.Generation).To(Equal(generation))
			sts.Status = appsv1.StatefulSetStatus{
				ObservedGeneration: sts.Generation, Replicas: 3, ReadyReplicas: ready, AvailableReplicas: ready,
				UpdatedReplicas: updated, CurrentReplicas: 3 - updated, CurrentRevision: current, UpdateRevision: update,
			}
			g.Expect(k8s.Status().Update(ctx, sts)).To(Succeed())
		}).Should(Succeed())
	}
	// makePod creates a member pod of revision, controlled by sts unless sts is nil, changed by
	// opts, and writes its status: Ready, or crash-looping with exit code 1.
	makePod := func(ctx SpecContext, dc *databasev1alpha1.DatabaseCluster, sts *appsv1.StatefulSet, name, revision string, ready bool,
		opts ...func(*corev1.Pod),
	) *corev1.Pod {
		podLabels := dc.Labels()
		podLabels[appsv1.ControllerRevisionHashLabelKey] = revision
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: dc.Namespace, Labels: podLabels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: specs.ContainerName, Image: dc.Spec.Image}}},
		}
		if sts != nil {
			pod.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(sts, appsv1.SchemeGroupVersion.WithKind("StatefulSet"))}
		}
		for _, opt := range opts {
			opt(pod)
		}
		Expect(k8s.Create(ctx, pod)).To(Succeed())
		now := metav1.Now()
		status := corev1.ContainerStatus{Name: specs.ContainerName, Image: dc.Spec.Image, Ready: ready,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}
		readyStatus := corev1.ConditionTrue
		if !ready {
			readyStatus = corev1.ConditionFalse
			status.RestartCount = 3
			status.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
				Message: "back-off 40s restarting failed container=database"}}
			status.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 1, Reason: "Error", StartedAt: now, FinishedAt: now}}
		}
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: readyStatus, LastTransitionTime: now}}
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{status}
		Expect(k8s.Status().Update(ctx, pod)).To(Succeed())
		return pod
	}
	// pods returns the UID of every pod of namespace, by name.
	pods := func(ctx SpecContext, ns string) func(Gomega) map[string]types.UID {
		return func(g Gomega) map[string]types.UID {
			var list corev1.PodList
			g.Expect(k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
			out := map[string]types.UID{}
			for _, p := range list.Items {
				out[p.Name] = p.UID
			}
			return out
		}
	}
	// rolloutEvents lists the events about dc of the stuck rollout, as "Type Reason: note".
	rolloutEvents := func(ctx SpecContext, dc *databasev1alpha1.DatabaseCluster) func(Gomega) []string {
		return func(g Gomega) []string {
			all := k8s.EventsAbout(ctx, "DatabaseCluster", dc, testenv.TypeReasonNote)(g)
			return slices.DeleteFunc(all, func(e string) bool {
				return !strings.Contains(e, EventRolloutStuck+":") && !strings.Contains(e, EventReplacedStuckPod+":")
			})
		}
	}
	stuckSeries := func(dc *databasev1alpha1.DatabaseCluster) func(Gomega) map[string]float64 {
		return func(g Gomega) map[string]float64 {
			got, err := testenv.Gauges("database_operator_databasecluster_rollout_stuck",
				map[string]string{"namespace": dc.Namespace, "name": dc.Name})
			g.Expect(err).NotTo(HaveOccurred())
			return got
		}
	}
	changeImage := func(ctx SpecContext, dc *databasev1alpha1.DatabaseCluster, image string) {
		clusters.Update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Image = image })
	}
	// progressingSeen watches dc from now on and returns a function that lists the Progressing
	// conditions written since, in order, as "Status Reason: message", without the wait for the
	// StatefulSet controller to observe a generation (whether a pass writes it depends on which
	// of the operator and the spec's writes of the StatefulSet comes first). StuckPodReplaced
	// lasts one pass: the next overwrites it before a read would see it.
	progressingSeen := func(ctx SpecContext, dc *databasev1alpha1.DatabaseCluster) func() []string {
		watcher, err := client.NewWithWatch(k8s.Config(), client.Options{Scheme: k8s.Scheme()})
		Expect(err).NotTo(HaveOccurred())
		w, err := watcher.Watch(ctx, &databasev1alpha1.DatabaseClusterList{}, client.InNamespace(dc.Namespace),
			client.MatchingFields{"metadata.name": dc.Name})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(w.Stop)
		var mu sync.Mutex
		var seen []string
		go func() {
			defer GinkgoRecover()
			for ev := range w.ResultChan() {
				got, ok := ev.Object.(*databasev1alpha1.DatabaseCluster)
				if !ok {
					continue
				}
				c := meta.FindStatusCondition(got.Status.Conditions, "Progressing")
				if c == nil || strings.HasPrefix(c.Message, "waiting for the StatefulSet controller to observe") {
					continue
				}
				line := string(c.Status) + " " + c.Reason + ": " + c.Message
				mu.Lock()
				if len(seen) == 0 || seen[len(seen)-1] != line {
					seen = append(seen, line)
				}
				mu.Unlock()
			}
		}()
		return func() []string {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(seen)
		}
	}

	// envtest runs no StatefulSet controller: nobody else deletes db-2, as on a Kubernetes whose
	// StatefulSet controller leaves it (MaxUnavailableStatefulSet on without
	// kubernetes/kubernetes#137666: 1.35.0 to 1.35.3, or the gate turned on before 1.37).
	It("tells a crash-looping member of the update revision, then replaces it once the spec moves on, and nothing else", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "rollout-")))
		dc.Spec.Rollout = &databasev1alpha1.RolloutSpec{ProgressDeadlineSeconds: ptr.To[int32](30)}
		sts := clusters.Create(ctx, dc)
		Expect(stuckSeries(dc)(Default)).To(Or(BeEmpty(), Equal(map[string]float64{"{}": 0})))

		By("an image that crash-loops: the rolling update replaced db-2 and waits for it")
		changeImage(ctx, dc, "registry.example/db:crash")
		setRevisions(ctx, dc, 2, "db-good", "db-crash", 2, 1)
		db0 := makePod(ctx, dc, sts, "db-0", "db-good", true)
		db1 := makePod(ctx, dc, sts, "db-1", "db-good", true)
		db2 := makePod(ctx, dc, sts, "db-2", "db-crash", false)
		// Someone else's pod with the cluster's labels, stuck on an old revision: never touched.
		decoy := makePod(ctx, dc, nil, "db-7", "db-good", false)
		all := map[string]types.UID{"db-0": db0.UID, "db-1": db1.UID, "db-2": db2.UID, "db-7": decoy.UID}

		Eventually(k8s.Condition(ctx, dc, "Progressing")).Should(Equal([]string{"False", "RolloutStuck",
			"pod db-2: container database CrashLoopBackOff (last exit code 1)"}))
		Eventually(stuckSeries(dc)).Should(Equal(map[string]float64{"{}": 1}))
		Eventually(rolloutEvents(ctx, dc)).Should(Equal([]string{
			"Warning RolloutStuck: pod db-2: container database CrashLoopBackOff (last exit code 1)"}))
		Consistently(pods(ctx, dc.Namespace), 2*time.Second).Should(Equal(all),
			"a member of the update revision is never deleted, however stuck")

		By("the spec is fixed: the StatefulSet's update revision moves on, db-2 is left on a revision no longer asked for")
		seen := progressingSeen(ctx, dc)
		changeImage(ctx, dc, "registry.example/db:1.1")
		setRevisions(ctx, dc, 3, "db-good", "db-fixed", 2, 0)
		Eventually(pods(ctx, dc.Namespace)).Should(Equal(map[string]types.UID{"db-0": db0.UID, "db-1": db1.UID, "db-7": decoy.UID}),
			"exactly db-2 is deleted; the Ready members of the old revision and the pod the StatefulSet does not control stay")
		Eventually(rolloutEvents(ctx, dc)).Should(Equal([]string{
			"Warning RolloutStuck: pod db-2: container database CrashLoopBackOff (last exit code 1)",
			"Normal ReplacedStuckPod: Deleted pod db-2 of revision db-crash (container database CrashLoopBackOff (last exit code 1)) " +
				"so that StatefulSet db recreates it from revision db-fixed",
		}))
		Eventually(k8s.Condition(ctx, dc, "Progressing")).Should(Equal([]string{"True", "RollingUpdate", "0/3 pods run the current revision"}))
		Eventually(seen).Should(Equal([]string{
			"False RolloutStuck: pod db-2: container database CrashLoopBackOff (last exit code 1)",
			"True StuckPodReplaced: deleted pod db-2 of revision db-crash (container database CrashLoopBackOff (last exit code 1)) " +
				"so that StatefulSet db recreates it from revision db-fixed",
			"True RollingUpdate: 0/3 pods run the current revision",
		}), "StuckPodReplaced is written in the pass that deleted db-2")
		Eventually(stuckSeries(dc)).Should(Equal(map[string]float64{"{}": 0}))

		By("the StatefulSet recreates db-2 from the fixed revision: nothing more is deleted")
		recreated := makePod(ctx, dc, sts, "db-2", "db-fixed", true)
		setRevisions(ctx, dc, 3, "db-good", "db-fixed", 3, 1)
		want := map[string]types.UID{"db-0": db0.UID, "db-1": db1.UID, "db-2": recreated.UID, "db-7": decoy.UID}
		Eventually(k8s.Condition(ctx, dc, "Progressing")).Should(Equal([]string{"True", "RollingUpdate", "1/3 pods run the current revision"}))
		Consistently(pods(ctx, dc.Namespace), 2*time.Second).Should(Equal(want))
		Expect(rolloutEvents(ctx, dc)(Default)).To(HaveLen(2), "one warning, one replacement")
	})

	// The StatefulSet controller of Kubernetes 1.37 (Parallel pod management, MaxUnavailableStatefulSet
	// on with kubernetes/kubernetes#137666), and of 1.34 and before, 1.35.4 and later and 1.36 (the
	// gate off), deletes db-2 itself in the sync that computes the new update revision, before it
	// writes that revision to the status. The spec plays it: db-2 is deleted (a finalizer keeps it
	// Terminating, as a kubelet stopping it would), then the status moves on, then db-2 is gone and
	// recreated. The operator deletes nothing and tells nothing.
	It("leaves a stuck member the StatefulSet controller replaces itself alone, and tells no replacement", func(ctx SpecContext) {
		const hold = "test.database.seed1b407122.io/terminating"
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "rollout-k8s-")))
		dc.Spec.Rollout = &databasev1alpha1.RolloutSpec{ProgressDeadlineSeconds: ptr.To[int32](30)}
		sts := clusters.Create(ctx, dc)

		By("an image that crash-loops: db-2 of the new revision is stuck")
		changeImage(ctx, dc, "registry.example/db:crash")
		setRevisions(ctx, dc, 2, "db-good", "db-crash", 2, 1)
		db0 := makePod(ctx, dc, sts, "db-0", "db-good", true)
		db1 := makePod(ctx, dc, sts, "db-1", "db-good", true)
		db2 := makePod(ctx, dc, sts, "db-2", "db-crash", false, func(p *corev1.Pod) { p.Finalizers = []string{hold} })
		stuck := "Warning RolloutStuck: pod db-2: container database CrashLoopBackOff (last exit code 1)"
		Eventually(rolloutEvents(ctx, dc)).Should(Equal([]string{stuck}))

		By("the spec is fixed; the StatefulSet controller deletes db-2, then writes the new update revision")
		seen := progressingSeen(ctx, dc)
		changeImage(ctx, dc, "registry.example/db:1.1")
		Eventually(func(g Gomega) int64 { return clusters.Child(ctx, dc)(g).Generation }).Should(Equal(int64(3)))
		Expect(k8s.Delete(ctx, db2)).To(Succeed())
		setRevisions(ctx, dc, 3, "db-good", "db-fixed", 2, 0)
		terminating := func(g Gomega) []string {
			got := &corev1.Pod{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(db2), got)).To(Succeed())
			return []string{string(got.UID), strconv.FormatBool(got.DeletionTimestamp != nil), strings.Join(got.Finalizers, ",")}
		}
		Eventually(k8s.Condition(ctx, dc, "Progressing")).Should(Equal([]string{"True", "RollingUpdate", "0/3 pods run the current revision"}))
		Consistently(terminating, 3*time.Second).Should(Equal([]string{string(db2.UID), "true", hold}),
			"db-2 stays as the StatefulSet controller left it: Terminating, the same pod")
		Expect(rolloutEvents(ctx, dc)(Default)).To(Equal([]string{stuck}), "no ReplacedStuckPod")

		By("db-2 is gone and recreated from the fixed revision: still nothing deleted, nothing told")
		testenv.Update(ctx, k8s, db2, func(p *corev1.Pod) { p.Finalizers = nil })
		Eventually(pods(ctx, dc.Namespace)).Should(Equal(map[string]types.UID{"db-0": db0.UID, "db-1": db1.UID}))
		recreated := makePod(ctx, dc, sts, "db-2", "db-fixed", true)
		setRevisions(ctx, dc, 3, "db-good", "db-fixed", 3, 1)
		Eventually(k8s.Condition(ctx, dc, "Progressing")).Should(Equal([]string{"True", "RollingUpdate", "1/3 pods run the current revision"}))
		Consistently(pods(ctx, dc.Namespace), 2*time.Second).Should(Equal(map[string]types.UID{
			"db-0": db0.UID, "db-1": db1.UID, "db-2": recreated.UID}))
		Expect(rolloutEvents(ctx, dc)(Default)).To(Equal([]string{stuck}), "one warning, no ReplacedStuckPod")
		Expect(seen()).To(Equal([]string{
			"False RolloutStuck: pod db-2: container database CrashLoopBackOff (last exit code 1)",
			"True RollingUpdate: 0/3 pods run the current revision",
			"True RollingUpdate: 1/3 pods run the current revision",
		}), "never StuckPodReplaced")
	})

	It("with autoRollback, returns the StatefulSet to the revision before a stuck rollout, once, and rolls forward when the spec changes", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "rollback-")))
		dc.Spec.Rollout = &databasev1alpha1.RolloutSpec{ProgressDeadlineSeconds: ptr.To[int32](30), AutoRollback: true}
		sts := clusters.Create(ctx, dc)
		good := sts.Spec.Template
		// The StatefulSet controller's record of the first revision, which a rollback returns to.
		data, err := json.Marshal(map[string]any{"spec": map[string]any{"template": good, "$patch": "replace"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(k8s.Create(ctx, &appsv1.ControllerRevision{
			ObjectMeta: metav1.ObjectMeta{Name: "db-good", Namespace: dc.Namespace,
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(sts, appsv1.SchemeGroupVersion.WithKind("StatefulSet"))}},
			Data: runtime.RawExtension{Raw: data}, Revision: 1,
		})).To(Succeed())
		rollbackEvents := func(g Gomega) []string {
			all := k8s.EventsAbout(ctx, "DatabaseCluster", dc, testenv.TypeReasonNote)(g)
			return slices.DeleteFunc(all, func(e string) bool { return !strings.Contains(e, EventRolledBack+":") })
		}
		image := func(g Gomega) string { return clusters.Child(ctx, dc)(g).Spec.Template.Spec.Containers[0].Image }

		By("an image that crash-loops: db-2 of the new revision is stuck")
		changeImage(ctx, dc, "registry.example/db:crash")
		Eventually(image).Should(Equal("registry.example/db:crash"))
		setRevisions(ctx, dc, 2, "db-good", "db-crash", 2, 1)
		db0 := makePod(ctx, dc, sts, "db-0", "db-good", true)
		db1 := makePod(ctx, dc, sts, "db-1", "db-good", true)
		makePod(ctx, dc, sts, "db-2", "db-crash", false)

		By("the operator returns the template to revision db-good and says so")
		Eventually(image).Should(Equal(good.Spec.Containers[0].Image))
		rolledBack := clusters.Child(ctx, dc)(Default)
		Expect(rolledBack.Generation).To(Equal(int64(3)))
		Expect(rolledBack.Annotations).To(HaveKeyWithValue(specs.RolledBackToAnnotation, "db-good"))
		Expect(rolledBack.Annotations[specs.RolledBackFromAnnotation]).NotTo(BeEmpty())
		Eventually(rollbackEvents).Should(Equal([]string{"Warning RolledBack: Returned StatefulSet db to revision db-good, " +
			"the last every member ran Ready: pod db-2: container database CrashLoopBackOff (last exit code 1) of revision db-crash; " +
			"the spec still asks for that template: change it to roll forward"}))

		By("the StatefulSet controller rolls back: db-2, on a revision no longer asked for, is replaced; the Ready members stay")
		setRevisions(ctx, dc, 3, "db-good", "db-good", 2, 2)
		Eventually(pods(ctx, dc.Namespace)).Should(Equal(map[string]types.UID{"db-0": db0.UID, "db-1": db1.UID}))
		recreated := makePod(ctx, dc, sts, "db-2", "db-good", true)
		setRevisions(ctx, dc, 3, "db-good", "db-good", 3, 3)
		Eventually(k8s.Condition(ctx, dc, "Progressing")).Should(Equal([]string{"False", "RolledBack",
			"spec.rollout.autoRollback returned StatefulSet db to revision db-good after the rollout of the spec's template " +
				"got stuck; change the spec to roll forward"}))
		Eventually(k8s.Condition(ctx, dc, "Available")).Should(Equal([]string{"True", "AllReplicasReady", "3/3 replicas are ready"}))

		By("held: the spec still asks for the crashing image, the StatefulSet is not written again")
		Consistently(func(g Gomega) int64 { return clusters.Child(ctx, dc)(g).Generation }, 2*time.Second).Should(Equal(int64(3)))
		Expect(rollbackEvents(Default)).To(HaveLen(1), "one rollback per template")
		Expect(pods(ctx, dc.Namespace)(Default)).To(Equal(map[string]types.UID{"db-0": db0.UID, "db-1": db1.UID, "db-2": recreated.UID}))

		By("the spec is fixed: it rolls forward, and the rollback is released")
		changeImage(ctx, dc, "registry.example/db:1.1")
		Eventually(image).Should(Equal("registry.example/db:1.1"))
		released := clusters.Child(ctx, dc)(Default)
		Expect(released.Annotations).NotTo(HaveKey(specs.RolledBackFromAnnotation), "removed, not left empty")
		Expect(released.Annotations).NotTo(HaveKey(specs.RolledBackToAnnotation), "removed, not left empty")
		setRevisions(ctx, dc, 4, "db-good", "db-fixed", 3, 0)
		Eventually(k8s.Condition(ctx, dc, "Progressing")).Should(Equal([]string{"True", "RollingUpdate", "0/3 pods run the current revision"}))
	})
})
