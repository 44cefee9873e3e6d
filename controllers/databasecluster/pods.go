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
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/cachecfg"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
)

// DefaultPodReadyTimeout is how long a pod may stay not Ready before the cluster is Degraded.
const DefaultPodReadyTimeout = 5 * time.Minute

// listPods returns the pods of dc, ordered by name.
func (r *Reconciler) listPods(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) ([]corev1.Pod, error) {
	var list corev1.PodList
	if err := r.List(ctx, &list, ofCluster(dc)...); err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	slices.SortFunc(list.Items, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return list.Items, nil
}

// notReadySince returns since when a pod has not been Ready, and false when it is Ready or
// being deleted (a pod on its way out is the rollout's business, not a failure).
func notReadySince(pod *corev1.Pod) (time.Time, bool) {
	if pod.DeletionTimestamp != nil {
		return time.Time{}, false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type != corev1.PodReady {
			continue
		}
		if c.Status == corev1.ConditionTrue {
			return time.Time{}, false
		}
		return c.LastTransitionTime.Time, true
	}
	return pod.CreationTimestamp.Time, true
}

// stuckPod is a pod that has not been Ready for longer than the bound.
type stuckPod struct {
	name        string
	notReadyFor time.Duration
	detail      string
}

// findStuckPod returns the first pod not Ready for longer than timeout, and otherwise how long
// until the oldest not-Ready pod reaches the bound (0 when every pod is Ready).
func findStuckPod(pods []corev1.Pod, now time.Time, timeout time.Duration) (*stuckPod, time.Duration) {
	var wait time.Duration
	for i := range pods {
		since, notReady := notReadySince(&pods[i])
		if !notReady {
			continue
		}
		age := now.Sub(since)
		if age >= timeout {
			return &stuckPod{name: pods[i].Name, notReadyFor: age.Truncate(time.Second), detail: waitingReason(&pods[i])}, 0
		}
		if left := timeout - age; wait == 0 || left < wait {
			wait = left
		}
	}
	return nil, wait
}

// waitingReason tells why the database container is not running or not ready, as the kubelet
// reported it (e.g. "ImagePullBackOff: Back-off pulling image ..."), or "" when it said nothing.
func waitingReason(pod *corev1.Pod) string {
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name != specs.ContainerName {
			continue
		}
		switch {
		case s.State.Waiting != nil:
			return strings.TrimSuffix(s.State.Waiting.Reason+": "+s.State.Waiting.Message, ": ")
		case s.State.Terminated != nil:
			return strings.TrimSuffix(s.State.Terminated.Reason+": "+s.State.Terminated.Message, ": ")
		case s.State.Running != nil && !s.Ready:
			return "running but failing its readiness probe"
		}
	}
	return ""
}

// message is the Degraded message for a stuck pod.
func (p *stuckPod) message() string {
	msg := fmt.Sprintf("pod %s has not been Ready for %s", p.name, p.notReadyFor)
	if p.detail != "" {
		msg += " (" + p.detail + ")"
	}
	return msg
}

// observePods adds to obs the pod that is stuck, if any, and when to look again otherwise; and,
// while the StatefulSet has fewer pods than the spec asks for, why it could not create them.
func (r *Reconciler) observePods(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, obs *observation) {
	pods, err := r.listPods(ctx, dc)
	if err != nil {
		obs.err = errors.Join(obs.err, err)
		return
	}
	timeout := r.PodReadyTimeout
	if timeout == 0 {
		timeout = DefaultPodReadyTimeout
	}
	obs.stuck, obs.recheckAfter = findStuckPod(pods, r.clock().Now(), timeout)
	observeRollout(dc, obs, pods, r.clock().Now())
	r.observeLostMembers(ctx, dc, obs, pods)
	if !podsMissing(obs.statefulSet, len(pods), dc.DesiredReplicas()) {
		return
	}
	failure, err := r.lastCreateFailure(ctx, obs.statefulSet.Name, dc.Namespace, r.clock().Now().Add(-timeout))
	obs.err = errors.Join(obs.err, err)
	obs.createFailure = failure
	// The StatefulSet controller's retries leave events, which trigger no reconcile: look again.
	if obs.recheckAfter == 0 || obs.recheckAfter > missingPodRecheck {
		obs.recheckAfter = missingPodRecheck
	}
}

// podsMissing: the StatefulSet controller has looked at sts and still has fewer pods than
// desired, so it may have failed to create one. A StatefulSet it has not observed yet (just
// created) or that reports every pod created (the cache has not seen them all yet) has no
// FailedCreate to look for: at 1,000 new clusters that saves 1,000 event lists.
func podsMissing(sts *cachecfg.StatefulSetView, pods int, desired int32) bool {
	return sts != nil && int32(pods) < desired && sts.Status.ObservedGeneration > 0 && sts.Status.Replicas < desired
}

// missingPodRecheck is how soon a cluster with missing pods is looked at again.
const missingPodRecheck = 30 * time.Second

// failedCreate is the reason the StatefulSet controller gives for a pod it could not create.
const failedCreate = "FailedCreate"

// lastCreateFailure returns the note of the newest FailedCreate event of the StatefulSet seen
// after since (e.g. `create Pod db-0 in StatefulSet db failed error: pods "db-0" is forbidden:
// exceeded quota`), or "" when there is none. Events are read from the API server only while
// pods are missing; the cache does not hold them.
func (r *Reconciler) lastCreateFailure(ctx context.Context, statefulSet, namespace string, since time.Time) (string, error) {
	var list corev1.EventList
	err := r.APIReader.List(ctx, &list, client.InNamespace(namespace), client.MatchingFields{
		"involvedObject.kind": "StatefulSet", "involvedObject.name": statefulSet, "reason": failedCreate,
	})
	if err != nil {
		return "", fmt.Errorf("listing the events of StatefulSet %s: %w", statefulSet, err)
	}
	var newest time.Time
	note := ""
	for i := range list.Items {
		if seen := lastSeen(&list.Items[i]); seen.After(since) && seen.After(newest) {
			newest, note = seen, list.Items[i].Message
		}
	}
	return note, nil
}

// lastSeen is when an event last happened, whichever API wrote it.
func lastSeen(e *corev1.Event) time.Time {
	seen := e.LastTimestamp.Time
	if e.Series != nil && e.Series.LastObservedTime.After(seen) {
		seen = e.Series.LastObservedTime.Time
	}
	if e.EventTime.After(seen) {
		seen = e.EventTime.Time
	}
	return seen
}
