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
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/roles"
	"github.com/seed1b407122/database-operator/controllers/memberagent"
)

// memberFacts is what the operator knows of a cluster's members on one pass, beside the agents'
// reads: the pods, the StatefulSet's update revision, the members lost with a node that is gone,
// and since when each member has been unavailable.
type memberFacts struct {
	pods           []corev1.Pod
	reads          []memberRead
	updateRevision string
	nodeGone       map[string]bool
	since          map[string]time.Time
	replicas       int
}

// roleInput is the planner's input: every member from ordinal 0 to the highest of the desired
// replicas and the pods there are (a member whose pod is missing is fenced: nothing of it
// runs), the policy of spec.roles, the progress the status recorded, and the request of the
// switchover annotation.
func roleInput(dc *databasev1alpha1.DatabaseCluster, facts memberFacts, now time.Time) roles.Input {
	in := roles.Input{Policy: rolePolicy(dc), Progress: recordedProgress(dc), Now: now, Request: switchoverRequest(dc),
		Desired: facts.replicas}
	byName := map[string]int{}
	for i := range facts.pods {
		byName[facts.pods[i].Name] = i
	}
	count := facts.replicas
	for i := range facts.pods {
		if ordinal, ok := podOrdinal(dc.StatefulSetName(), facts.pods[i].Name); ok && int(ordinal) >= count {
			count = int(ordinal) + 1
		}
	}
	for ordinal := range count {
		name := memberName(dc, ordinal)
		m := roles.Member{Name: name, Ordinal: ordinal, Role: roles.RoleUnknown, Fenced: true, UnavailableSince: facts.since[name]}
		if i, ok := byName[name]; ok {
			m = podMember(m, &facts.pods[i], facts.reads[i], facts)
			m.Replacement = createdDuringSwitchover(dc, &facts.pods[i])
			m.Fenced = m.Fenced || startsAsReplica(dc, &facts.pods[i], facts.reads[i])
		}
		in.Members = append(in.Members, m)
	}
	return in
}

// podMember fills m from its pod and its agent's read.
func podMember(m roles.Member, pod *corev1.Pod, read memberRead, facts memberFacts) roles.Member {
	m.Exists = pod.DeletionTimestamp == nil
	m.Ready = m.Exists && podReady(pod)
	m.Reachable = read.err == nil
	m.UpToDate = facts.updateRevision == "" || pod.Labels[appsv1.ControllerRevisionHashLabelKey] == facts.updateRevision
	// A terminating pod is not fenced: its kubelet (cut off, on an isolated node) may never stop
	// its database.
	m.Fenced = facts.nodeGone[pod.Name]
	if m.Reachable {
		m.Role, m.Position = roles.RoleReplica, read.observation.Position
		if reportsPrimary(read) {
			m.Role = roles.RolePrimary
		}
		m.Fenced = m.Fenced || read.observation.Fenced
		m.Demoted = demoted(read)
	}
	return m
}

// startsAsReplica tells whether pod's member cannot write because it is about to start as a
// replica (engine postgresql): its agent finds no server running (memberagent.ErrStopped), and
// its pod was created after the switchover in flight started, so that every announcement it
// has read names the switchover's target the primary (announcedPrimary). Both are needed: a pod
// created before may have read an announcement that named it the primary and be starting its
// server; a server that runs may have been promoted by a person. The switchover's start is the
// operator's clock and the pod's creation the API server's, in whole seconds: a pod counts as
// created after only from clockSkewMargin past the start's second.
func startsAsReplica(dc *databasev1alpha1.DatabaseCluster, pod *corev1.Pod, read memberRead) bool {
	return createdDuringSwitchover(dc, pod) && errors.Is(read.err, memberagent.ErrStopped)
}

// createdDuringSwitchover tells whether pod (engine postgresql) was created after the switchover
// in flight started and is not its target's: every announcement it has read names the target the
// primary.
func createdDuringSwitchover(dc *databasev1alpha1.DatabaseCluster, pod *corev1.Pod) bool {
	sw := dc.Status.Switchover
	return dc.EngineName() == databasev1alpha1.EnginePostgreSQL && sw != nil && pod.Name != sw.To &&
		pod.CreationTimestamp.After(sw.StartedAt.Truncate(time.Second).Add(clockSkewMargin))
}

// clockSkewMargin is how far apart the operator's clock and the API server's may be for
// startsAsReplica to hold (nodes keep time with NTP, as leases and certificates need).
const clockSkewMargin = time.Second

// unavailableSince carries forward since when each member has been unavailable (its pod missing
// or not Ready, or its agent unanswering): the first pass that saw it so, or the Ready
// condition's last transition when that is earlier. A member that is up is forgotten.
func unavailableSince(dc *databasev1alpha1.DatabaseCluster, pods []corev1.Pod, reads []memberRead, replicas int,
	before map[string]time.Time, now time.Time,
) map[string]time.Time {
	since := map[string]time.Time{}
	seen := map[string]bool{}
	for i := range pods {
		seen[pods[i].Name] = true
		if podReady(&pods[i]) && pods[i].DeletionTimestamp == nil && reads[i].err == nil {
			continue
		}
		first := earliest(before[pods[i].Name], now)
		if t, notReady := notReadySince(&pods[i]); notReady {
			first = earliest(first, t)
		}
		since[pods[i].Name] = first
	}
	for ordinal := range replicas {
		if name := memberName(dc, ordinal); !seen[name] {
			since[name] = earliest(before[name], now)
		}
	}
	return since
}

// earliest is the earlier of a and b, a zero time counting as none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// rolePolicy is spec.roles as the planner takes it.
func rolePolicy(dc *databasev1alpha1.DatabaseCluster) roles.Policy {
	method := roles.UpdateSwitchover
	if dc.PrimaryUpdateMethod() == databasev1alpha1.UpdateMethodRestart {
		method = roles.UpdateRestart
	}
	return roles.Policy{UpdateMethod: method, Failover: dc.FailoverEnabled(), FailoverAfter: dc.FailoverAfter(),
		FenceByDeletion: dc.EngineName() == databasev1alpha1.EnginePostgreSQL}
}

// recordedProgress is the planner's progress as the status recorded it.
func recordedProgress(dc *databasev1alpha1.DatabaseCluster) roles.Progress {
	p := roles.Progress{CurrentPrimary: dc.Status.CurrentPrimary}
	if s := dc.Status.Switchover; s != nil {
		p.Switchover = &roles.Switchover{From: s.From, To: s.To, Reason: roles.SwitchReason(s.Reason), Started: s.StartedAt.Time}
	}
	return p
}

// switchoverStatus is the status's record of the planner's switchover in flight.
func switchoverStatus(s *roles.Switchover) *databasev1alpha1.SwitchoverStatus {
	if s == nil {
		return nil
	}
	return &databasev1alpha1.SwitchoverStatus{From: s.From, To: s.To, Reason: string(s.Reason),
		StartedAt: metav1.NewTime(s.Started.Truncate(time.Second))}
}

// switchoverRequest is the request of the switchover annotation, nil without one.
func switchoverRequest(dc *databasev1alpha1.DatabaseCluster) *roles.Request {
	to, ok := dc.Annotations[databasev1alpha1.SwitchoverAnnotation]
	if !ok {
		return nil
	}
	to = strings.TrimSpace(to)
	if to == databasev1alpha1.SwitchoverToAny {
		to = ""
	}
	return &roles.Request{To: to}
}

// desiredMembers is the number of members the spec asks for (0 while hibernated).
func desiredMembers(dc *databasev1alpha1.DatabaseCluster) int {
	if dc.Stopped() {
		return 0
	}
	return int(ptr.Deref(dc.Spec.Replicas, 0))
}

// memberName is the pod name of member ordinal.
func memberName(dc *databasev1alpha1.DatabaseCluster, ordinal int) string {
	return dc.StatefulSetName() + "-" + strconv.Itoa(ordinal)
}
