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
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/cachecfg"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
)

// Events about a stuck rollout.
const (
	// EventRolloutStuck is the warning that Progressing turned False with reason RolloutStuck.
	EventRolloutStuck = databasev1alpha1.ReasonRolloutStuck
	// EventReplacedStuckPod tells that the operator deleted a stuck member of a revision the spec
	// no longer asks for.
	EventReplacedStuckPod = "ReplacedStuckPod"
)

// Waiting reasons of a container that the kubelet will not get past by itself.
const (
	waitingImagePullBackOff  = "ImagePullBackOff"
	waitingErrImagePull      = "ErrImagePull"
	waitingCrashLoopBackOff  = "CrashLoopBackOff"
	waitingCreateConfigError = "CreateContainerConfigError"
)

// revisionLabel names the StatefulSet revision a pod was created from.
const revisionLabel = appsv1.ControllerRevisionHashLabelKey

// stuckMember is a member pod that keeps a rollout from finishing.
type stuckMember struct {
	pod      string
	uid      types.UID
	revision string
	// resourceVersion is the pod's as the operator saw it stuck (stuckPodToReplace only).
	resourceVersion string
	// detail says what keeps it from becoming Ready, e.g. "container database CrashLoopBackOff
	// (last exit code 1)".
	detail string
}

// message is the Progressing message of a stuck member of the update revision.
func (m *stuckMember) message() string {
	return withDetail("pod "+m.pod, ": ", m.detail, "is stuck")
}

// replaced says what the operator did to a stuck member it deleted, under sts's update
// revision: the Progressing message is "deleted " and the event "Deleted " followed by it.
func (m *stuckMember) replaced(sts *cachecfg.StatefulSetView) string {
	what := "pod " + m.pod + " of revision " + m.revision
	if detail := tidyDetail(m.detail); detail != "" {
		what += " (" + detail + ")"
	}
	to := "its update revision"
	if sts.Status.UpdateRevision != "" {
		to = "revision " + sts.Status.UpdateRevision
	}
	return fmt.Sprintf("%s so that StatefulSet %s recreates it from %s", what, sts.Name, to)
}

// messageSeparators are what a condition message or an event note never ends in: each ends in
// a word (a part left empty, such as an agent's empty answer, must not leave "...: " behind).
const messageSeparators = ":;,- \t\r\n"

// tidyDetail is a detail as a message tells it: on one line (a body or a kubelet's message may
// span several), without the separators an empty part of it left at its end.
func tidyDetail(detail string) string {
	return strings.TrimRight(strings.Join(strings.Fields(detail), " "), messageSeparators)
}

// withDetail is head, then sep and detail (tidyDetail), or, when detail has nothing to say,
// head and otherwise: "pod db-2: container database CrashLoopBackOff", or "pod db-2 is
// stuck". An empty otherwise leaves head alone.
func withDetail(head, sep, detail, otherwise string) string {
	if detail = tidyDetail(detail); detail != "" {
		return head + sep + detail
	}
	if otherwise == "" {
		return head
	}
	return head + " " + otherwise
}

// rolloutObservation is what the operator saw and did about a stuck rollout in one pass.
type rolloutObservation struct {
	// stuck is the first stuck member of the update revision, if any.
	stuck *stuckMember
	// replaced is the stuck member of an older revision this pass deleted, if any.
	replaced *stuckMember
	// statefulSet is the StatefulSet the replaced pod belonged to.
	statefulSet *cachecfg.StatefulSetView
}

// containerFailure says which container of pod the kubelet cannot start and why, e.g.
// "container database CrashLoopBackOff (last exit code 1)", or "" when none is in that state.
// Init containers are looked at first (the others wait for them). The kubelet alternates
// ErrImagePull and ImagePullBackOff, and a crash-looping container between CrashLoopBackOff and
// a short run: both are told the same way, so that the message does not change with each retry.
func containerFailure(pod *corev1.Pod) string {
	readySince, notReady := notReadySince(pod)
	if !notReady {
		return ""
	}
	statuses := slices.Concat(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses)
	for i := range statuses {
		s := &statuses[i]
		reason := ""
		if w := s.State.Waiting; w != nil {
			reason = w.Reason
		}
		switch {
		case reason == waitingImagePullBackOff || reason == waitingErrImagePull:
			return "container " + s.Name + " " + waitingImagePullBackOff
		case reason == waitingCreateConfigError:
			// The kubelet's message names what is missing; without it the reason says enough.
			return withDetail("container "+s.Name+" "+reason, ": ", s.State.Waiting.Message, "")
		case reason == waitingCrashLoopBackOff || crashedBeforeReady(s, readySince):
			msg := "container " + s.Name + " " + waitingCrashLoopBackOff
			if last := s.LastTerminationState.Terminated; last != nil {
				msg += fmt.Sprintf(" (last exit code %d)", last.ExitCode)
			}
			return msg
		}
	}
	return ""
}

// crashedBeforeReady: the container runs again after a run that failed (a non-zero exit code)
// without the pod having been Ready since before that run started: a crash loop between two
// back-offs, not a member that served and crashed once.
func crashedBeforeReady(s *corev1.ContainerStatus, notReadySince time.Time) bool {
	last := s.LastTerminationState.Terminated
	return !s.Ready && s.RestartCount > 0 && last != nil && last.ExitCode != 0 &&
		!notReadySince.After(last.StartedAt.Time)
}

// memberStuck tells what keeps pod from becoming Ready when it is stuck: a container the
// kubelet cannot start, or no Ready condition for deadline since it last turned False (since
// the pod's creation when it has none). That time, not the pod's creation, is measured: a member
// that served for days and stopped is not past the deadline the moment it stops, and a new pod's
// Ready condition turns False when it is initialised, within seconds of its creation. When pod is
// not Ready and not stuck yet, wait is how long until it reaches the deadline.
func memberStuck(pod *corev1.Pod, now time.Time, deadline time.Duration) (detail string, wait time.Duration) {
	since, notReady := notReadySince(pod)
	if !notReady {
		return "", 0
	}
	if failure := containerFailure(pod); failure != "" {
		return failure, 0
	}
	if age := now.Sub(since); age < deadline {
		return "", deadline - age
	}
	detail = fmt.Sprintf("not Ready within spec.rollout.progressDeadlineSeconds (%ds)", int64(deadline/time.Second))
	return withDetail(detail, ": container "+specs.ContainerName+" ", waitingReason(pod), ""), 0
}

// podRevision is the StatefulSet revision a pod was created from.
func podRevision(pod *corev1.Pod) string { return pod.Labels[revisionLabel] }

// findStuckRollout returns the first stuck member (by name) of sts's update revision, and
// otherwise how long until the first not-Ready one reaches the deadline (0: none is waiting). A
// member of the update revision that stops starting later (its image gone from the registry, a
// Secret it needs deleted) is stuck too: the StatefulSet cannot bring it back either.
func findStuckRollout(sts *cachecfg.StatefulSetView, pods []corev1.Pod, now time.Time, deadline time.Duration) (*stuckMember, time.Duration) {
	if sts == nil || sts.Status.UpdateRevision == "" {
		return nil, 0
	}
	var wait time.Duration
	for i := range pods {
		pod := &pods[i]
		if podRevision(pod) != sts.Status.UpdateRevision || !metav1.IsControlledBy(pod, sts) {
			continue
		}
		detail, left := memberStuck(pod, now, deadline)
		if detail != "" {
			return &stuckMember{pod: pod.Name, uid: pod.UID, revision: podRevision(pod), detail: detail}, 0
		}
		if left > 0 && (wait == 0 || left < wait) {
			wait = left
		}
	}
	return nil, wait
}

// stuckPodToReplace decides which member, if any, the operator deletes so that the StatefulSet
// recreates it from its update revision, where the StatefulSet controller leaves it
// (kubernetes/kubernetes#67250: it waits for a broken pod of an older revision to become Ready,
// and it never will). With the Parallel pod management BuildStatefulSet sets, the StatefulSet
// controller deletes such a pod itself, in the sync that computes the new update revision and
// before it writes that revision to the status, unless the MaxUnavailableStatefulSet feature
// gate is on without kubernetes/kubernetes#137666 (on by default in 1.35.0 to 1.35.3, by hand
// before 1.37: kubernetes/kubernetes#137409 counts the broken pod against maxUnavailable). So
// on a Kubernetes that replaces it, this finds the pod terminating or gone, and does nothing.
// It chooses only a pod that
//   - sts controls (pods is every pod with the cluster's labels),
//   - is of a revision the StatefulSet no longer asks for: its controller-revision-hash is not
//     the update revision, which the StatefulSet controller has computed for sts's current
//     generation (an update revision it has not recomputed yet may be the one just left),
//   - is not Ready and is stuck (memberStuck),
//   - was not deleted by the operator before (same UID in replaced: the cache may still hold it),
//
// and none while a member is being deleted or is missing (being recreated): one member at a
// time. Of several, the highest ordinal: the one the StatefulSet's rolling update reaches first.
func stuckPodToReplace(sts *cachecfg.StatefulSetView, pods []corev1.Pod, now time.Time, deadline time.Duration,
	replaced map[string]types.UID,
) *stuckMember {
	if sts == nil || sts.DeletionTimestamp != nil || sts.Status.UpdateRevision == "" ||
		sts.Status.ObservedGeneration < sts.Generation {
		return nil
	}
	var live []*corev1.Pod
	for i := range pods {
		if !metav1.IsControlledBy(&pods[i], sts) {
			continue
		}
		if pods[i].DeletionTimestamp != nil {
			return nil
		}
		live = append(live, &pods[i])
	}
	if sts.Spec.Replicas == nil || int32(len(live)) < *sts.Spec.Replicas {
		return nil
	}
	for _, pod := range slices.Backward(live) {
		revision := podRevision(pod)
		if revision == "" || revision == sts.Status.UpdateRevision || replaced[pod.Name] == pod.UID {
			continue
		}
		if detail, _ := memberStuck(pod, now, deadline); detail != "" {
			return &stuckMember{pod: pod.Name, uid: pod.UID, revision: revision, detail: detail, resourceVersion: pod.ResourceVersion}
		}
	}
	return nil
}

// replacedPods remembers, per pod, the UID of the pod the operator last deleted under that
// name: the pod may still be in the cache after the deletion, and must not be told twice.
type replacedPods struct {
	mu   sync.Mutex
	uids map[types.NamespacedName]types.UID
}

// of returns the UIDs deleted of the pods in namespace, by pod name.
func (p *replacedPods) of(namespace string) map[string]types.UID {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]types.UID{}
	for key, uid := range p.uids {
		if key.Namespace == namespace {
			out[key.Name] = uid
		}
	}
	return out
}

// add remembers the deletion of the pod namespace/name of that uid.
func (p *replacedPods) add(namespace, name string, uid types.UID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.uids == nil {
		p.uids = map[types.NamespacedName]types.UID{}
	}
	p.uids[types.NamespacedName{Namespace: namespace, Name: name}] = uid
}

// reconcileRollout is phase 6: it deletes the stuck member that stuckPodToReplace chooses, if
// any, with its UID and resourceVersion as preconditions, and says so in an event. sts is the
// StatefulSet as phase 5 left it. The preconditions leave alone a pod recreated under the same
// name, and one the StatefulSet controller deleted (its deletionTimestamp changed it) while the
// cache still showed the StatefulSet's new status before the pod's deletion: deleting a pod that
// is already terminating succeeds, and would tell of a replacement Kubernetes made.
func (r *Reconciler) reconcileRollout(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, sts *cachecfg.StatefulSetView) (rolloutObservation, error) {
	if sts == nil || !metav1.IsControlledBy(sts, dc) {
		return rolloutObservation{}, nil
	}
	pods, err := r.listPods(ctx, dc)
	if err != nil {
		return rolloutObservation{}, err
	}
	victim := stuckPodToReplace(sts, pods, r.clock().Now(), dc.ProgressDeadline(), r.replaced.of(dc.Namespace))
	if victim == nil {
		return rolloutObservation{}, nil
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: dc.Namespace, Name: victim.pod}}
	preconditions := client.Preconditions{UID: &victim.uid}
	if victim.resourceVersion != "" {
		preconditions.ResourceVersion = &victim.resourceVersion
	}
	err = r.Delete(ctx, pod, preconditions)
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		// Gone already, recreated under the same name, or changed since it was seen (being
		// deleted, or a new status that the next pass looks at): nothing to replace now.
		return rolloutObservation{}, nil
	case err != nil:
		return rolloutObservation{}, fmt.Errorf("deleting stuck pod %s: %w", victim.pod, err)
	}
	r.replaced.add(dc.Namespace, victim.pod, victim.uid)
	logf.FromContext(ctx).Info("Deleted a stuck pod of an older revision", "pod", klog.KObj(pod),
		"revision", victim.revision, "updateRevision", sts.Status.UpdateRevision, "detail", victim.detail)
	r.Recorder.Eventf(dc, nil, corev1.EventTypeNormal, EventReplacedStuckPod, "Delete", "Deleted %s", victim.replaced(sts))
	return rolloutObservation{replaced: victim, statefulSet: sts}, nil
}

// observeRollout adds to obs the stuck member of the update revision, if any, and brings
// obs.recheckAfter forward to when the first not-Ready member reaches the deadline.
func observeRollout(dc *databasev1alpha1.DatabaseCluster, obs *observation, pods []corev1.Pod, now time.Time) {
	stuck, wait := findStuckRollout(obs.statefulSet, pods, now, dc.ProgressDeadline())
	obs.rollout.stuck = stuck
	if wait > 0 && (obs.recheckAfter == 0 || wait < obs.recheckAfter) {
		obs.recheckAfter = wait
	}
}

// progressingOfRollout is the Progressing condition while the rollout is stuck or a stuck
// member was just replaced, and false otherwise: a stuck member of the update revision makes
// it False (the StatefulSet cannot finish), a replaced one True (the rollout resumes).
func progressingOfRollout(cond *metav1.Condition, rollout rolloutObservation) bool {
	switch {
	case rollout.stuck != nil:
		cond.Status = metav1.ConditionFalse
		cond.Reason = databasev1alpha1.ReasonRolloutStuck
		cond.Message = rollout.stuck.message()
	case rollout.replaced != nil:
		cond.Status = metav1.ConditionTrue
		cond.Reason = databasev1alpha1.ReasonStuckPodReplaced
		cond.Message = "deleted " + rollout.replaced.replaced(rollout.statefulSet)
	default:
		return false
	}
	return true
}
