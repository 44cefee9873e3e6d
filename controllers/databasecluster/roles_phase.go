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
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/cachecfg"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/roles"
	"github.com/seed1b407122/database-operator/controllers/internal/patch"
	"github.com/seed1b407122/database-operator/controllers/memberagent"
)

// DefaultObserveInterval is how often the members of a cluster with an engine are asked for
// their roles: a role change (a switchover the operator made, a failover the database made by
// itself) is published in the pods' role labels, and so in NAME-rw and NAME-ro, at most that
// late. A read is one small HTTPS request per member.
const DefaultObserveInterval = 10 * time.Second

// MemberReader reads and changes a member's role through the member agent in its pod. Each
// action returns the member as its agent reads it after acting.
type MemberReader interface {
	Observe(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, pod *corev1.Pod) (memberagent.Observation, error)
	Promote(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, pod *corev1.Pod) (memberagent.Observation, error)
	Fence(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, pod *corev1.Pod) (memberagent.Observation, error)
	TransferLeadership(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, pod *corev1.Pod, to string) (memberagent.Observation, error)
	AddMember(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, pod *corev1.Pod, name, peerURL string) (memberagent.Observation, error)
	RemoveMember(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, pod *corev1.Pod, name string) (memberagent.Observation, error)
}

// rolesObservation is what the roles phase observed and published in one pass.
type rolesObservation struct {
	// ran says that the phase ran (the cluster has an engine, the phases got that far).
	ran bool
	// published is the members' roles and the primary, as the status shows them.
	published publishedRoles
	// unknown says, per member whose agent could not be read, why.
	unknown []string
	// plan is what the planner decided, and whether its action waits for the status.
	plan rolesDecision
	// membership is what the membership planner decided (engine etcd).
	membership roles.MembershipDecision
}

// memberRead is one member's answer, or why its agent could not be read. uid and ip tell the
// pod read: a read never stands for another pod of the same name (a recreated member).
type memberRead struct {
	pod         string
	uid         types.UID
	ip          string
	observation memberagent.Observation
	err         error
}

// rolesMemoEntry is one cluster's last reads and when they were made, and since when each
// member has been unavailable.
type rolesMemoEntry struct {
	at    time.Time
	reads []memberRead
	since map[string]time.Time
}

func (r *Reconciler) observeInterval() time.Duration {
	if r.ObserveInterval <= 0 {
		return DefaultObserveInterval
	}
	return r.ObserveInterval
}

// reconcileRoles is phase 6b for a cluster with an engine: it reads each member's role through
// its agent (at most once per observeInterval), decides what to publish (publishRoles) and sets
// the pods' role labels to it. It changes no role: the members' roles are the database's.
func (r *Reconciler) reconcileRoles(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, sts *cachecfg.StatefulSetView,
	lost lostObservation,
) (rolesObservation, error) {
	key := client.ObjectKeyFromObject(dc)
	if !dc.HasEngine() || r.Members == nil {
		r.roles.forget(key)
		return rolesObservation{}, nil
	}
	pods, err := r.listPods(ctx, dc)
	if err != nil {
		return rolesObservation{ran: true}, err
	}
	now := r.clock().Now()
	memo, ok := r.roles.get(key)
	if !ok || now.Sub(memo.at) >= r.rereadInterval(dc, memo) || !samePods(memo.reads, pods) {
		memo = rolesMemoEntry{at: now, reads: r.readMembers(ctx, dc, pods), since: memo.since}
	}
	memo.since = unavailableSince(dc, pods, memo.reads, desiredMembers(dc), memo.since, now)
	r.roles.put(key, memo)
	obs := rolesObservation{ran: true, published: publishRoles(pods, memo.reads, dc.Status.CurrentPrimary)}
	for _, read := range memo.reads {
		if read.err != nil {
			obs.unknown = append(obs.unknown, fmt.Sprintf("%s: %v", read.pod, read.err))
		}
	}
	if err := r.labelRoles(ctx, pods, obs.published.labels); err != nil {
		return obs, err
	}
	if dc.Stopped() {
		// Hibernated or stopped for an offline backup: its members are down on purpose, and no
		// role is changed (no failover to a member that is stopping too).
		return obs, nil
	}
	membership, err := r.reconcileMembership(ctx, dc, pods, memo.reads)
	obs.membership = membership.decision
	if err != nil || membership.acted {
		// One change at a time: the members are read again before any role is changed.
		r.roles.put(key, rolesMemoEntry{since: memo.since})
		return obs, err
	}
	facts := memberFacts{pods: pods, reads: memo.reads, nodeGone: nodeGone(lost), since: memo.since, replicas: desiredMembers(dc)}
	if sts != nil {
		facts.updateRevision = sts.Status.UpdateRevision
	}
	obs.plan, err = r.decideRoles(ctx, dc, facts)
	if obs.plan.decision.Action.Kind != roles.ActionWait {
		// The members are read again after an action (a zero time is past any interval); since
		// when each has been unavailable is kept.
		r.roles.put(key, rolesMemoEntry{since: memo.since})
	}
	return obs, err
}

// rereadInterval is how old the last read of the members may be: observeInterval; a second
// while a switchover is in flight, so that its end is seen (and its steps carried on) at once;
// unknownReread while a member's agent did not answer (a member starting, whose role the
// Services wait for), bounded so that a silent agent costs one read every few seconds.
func (r *Reconciler) rereadInterval(dc *databasev1alpha1.DatabaseCluster, memo rolesMemoEntry) time.Duration {
	if dc.Status.Switchover != nil {
		return switchoverRecheck
	}
	if slices.ContainsFunc(memo.reads, func(read memberRead) bool { return read.err != nil }) {
		return min(unknownReread, r.observeInterval())
	}
	return r.observeInterval()
}

// unknownReread is how soon members are read again while one of them did not answer.
const unknownReread = 2 * time.Second

// switchoverRecheck is how soon a cluster with a switchover in flight is looked at again.
const switchoverRecheck = time.Second

// nodeGone names the members lost with a node that is gone: nothing of theirs can run again.
func nodeGone(lost lostObservation) map[string]bool {
	gone := map[string]bool{}
	for _, m := range lost.members {
		if m.nodeState == "gone" {
			gone[m.pod] = true
		}
	}
	return gone
}

// samePods says whether reads were made of exactly pods: the same pods (by UID), at the same
// IPs, none of them deleted since. A pod created, recreated, moved or going is read again.
func samePods(reads []memberRead, pods []corev1.Pod) bool {
	if len(reads) != len(pods) {
		return false
	}
	for i := range pods {
		r, p := reads[i], &pods[i]
		if r.pod != p.Name || r.uid != p.UID || r.ip != p.Status.PodIP || (p.DeletionTimestamp != nil && !errors.Is(r.err, errNotRunning)) {
			return false
		}
	}
	return true
}

// readMembers asks every member's agent at once, each read bounded by agentTimeout; a pod
// without an IP or being deleted is not asked.
func (r *Reconciler) readMembers(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, pods []corev1.Pod) []memberRead {
	reads := make([]memberRead, len(pods))
	var wg sync.WaitGroup
	for i := range pods {
		reads[i].pod, reads[i].uid, reads[i].ip = pods[i].Name, pods[i].UID, pods[i].Status.PodIP
		if pods[i].DeletionTimestamp != nil || pods[i].Status.PodIP == "" {
			reads[i].err = errNotRunning
			continue
		}
		wg.Go(func() {
			readCtx, cancel := context.WithTimeout(ctx, agentTimeout)
			defer cancel()
			reads[i].observation, reads[i].err = r.Members.Observe(readCtx, dc, &pods[i])
		})
	}
	wg.Wait()
	return reads
}

// errNotRunning is the read of a member whose pod has no IP yet or is being deleted.
var errNotRunning = errors.New("the pod is not running")

// labelRoles sets each pod's role label to want (by pod name; a pod not in want keeps its
// label), one merge patch per pod whose label differs. An empty value removes the label. The
// primary label is taken off first and given last, so that no two pods carry it at once, and
// is not given while a pod that loses it still has it (a patch failed).
func (r *Reconciler) labelRoles(ctx context.Context, pods []corev1.Pod, want map[string]string) error {
	primary := string(databasev1alpha1.MemberRolePrimary)
	for _, givesPrimary := range []bool{false, true} {
		for i := range pods {
			role, ok := want[pods[i].Name]
			if !ok || pods[i].Labels[databasev1alpha1.RoleLabel] == role || (role == primary) != givesPrimary {
				continue
			}
			if err := r.patchRoleLabel(ctx, &pods[i], role); err != nil {
				return err
			}
		}
	}
	return nil
}

// patchRoleLabel writes the role label of pod (removes it when role is empty), guarded by the
// pod's resourceVersion: a label decided from a pod that has changed since is decided again.
func (r *Reconciler) patchRoleLabel(ctx context.Context, pod *corev1.Pod, role string) error {
	patched := pod.DeepCopy()
	if role == "" {
		delete(patched.Labels, databasev1alpha1.RoleLabel)
	} else {
		if patched.Labels == nil {
			patched.Labels = map[string]string{}
		}
		patched.Labels[databasev1alpha1.RoleLabel] = role
	}
	err := r.Patch(ctx, patched, patch.LockedMergeFrom(pod))
	if err != nil {
		return fmt.Errorf("labelling pod %s %s: %w", pod.Name, roleOrNone(role), err)
	}
	return nil
}

func roleOrNone(role string) string {
	if role == "" {
		return "with no role"
	}
	return "as " + role
}
