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
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/roles"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
	"github.com/seed1b407122/database-operator/controllers/internal/patch"
	"github.com/seed1b407122/database-operator/controllers/memberagent"
)

// Events of the membership of etcd's members (engine etcd).
const (
	// EventMemberAdded tells that the operator added a member to etcd's member list.
	EventMemberAdded = "MemberAdded"
	// EventMemberPromoted tells that the operator made a learner it added a voting member.
	EventMemberPromoted = "MemberPromoted"
	// EventMemberRemoved tells that the operator removed a member from etcd's member list.
	EventMemberRemoved = "MemberRemoved"
)

// actionMembership is the action of the membership events.
const actionMembership = "Membership"

// managesMembership says whether the operator keeps dc's database member list (engine etcd).
func managesMembership(dc *databasev1alpha1.DatabaseCluster) bool {
	return dc.EngineName() == databasev1alpha1.EngineEtcd
}

// membershipResult is what the membership step did on a pass.
type membershipResult struct {
	decision roles.MembershipDecision
	// acted says that it changed the member list (the members are read again).
	acted bool
}

// reconcileMembership keeps etcd's member list in line with the desired members
// (roles.PlanMembership) and announces each member's initial cluster on its pod before its
// etcd starts. It runs on a running cluster only.
func (r *Reconciler) reconcileMembership(ctx context.Context, dc *databasev1alpha1.DatabaseCluster,
	pods []corev1.Pod, reads []memberRead,
) (membershipResult, error) {
	if dc.Stopped() {
		return membershipResult{}, nil
	}
	if dc.EngineName() == databasev1alpha1.EnginePostgreSQL {
		return membershipResult{}, r.announceRoles(ctx, dc, pods, reads)
	}
	if !managesMembership(dc) {
		return membershipResult{}, nil
	}
	in, err := membershipInput(dc, pods, reads)
	if err != nil {
		log.FromContext(ctx).Info("Cannot announce etcd's members", "reason", err.Error())
		return membershipResult{decision: roles.MembershipDecision{Waiting: err.Error()}}, nil
	}
	out := membershipResult{decision: roles.PlanMembership(in)}
	d := out.decision
	if err := r.announce(ctx, pods, d.Announce); err != nil {
		return out, err
	}
	if d.Waiting != "" {
		log.FromContext(ctx).V(1).Info("A change of etcd's members waits", "reason", d.Waiting)
	}
	if d.Action.Kind == roles.MembershipWait {
		return out, nil
	}
	out.acted = true
	if err := r.changeMembership(ctx, dc, pods, d.Action); err != nil {
		if d.Action.Kind == roles.MembershipPromote {
			// etcd refuses to promote a learner until it has caught up: looked at again in a
			// second (the action asks for a recheck), without the backoff of an error.
			log.FromContext(ctx).V(1).Info("A learner is not promoted yet", "member", d.Action.Member, "reason", err.Error())
			return out, nil
		}
		return out, err
	}
	return out, r.announce(ctx, pods, d.AnnounceAfter)
}

// membershipInput is the planner's input: the pods, etcd's member list as the primary (or else
// any member) reported it, and the peer URLs the spec's args give each member.
func membershipInput(dc *databasev1alpha1.DatabaseCluster, pods []corev1.Pod, reads []memberRead) (roles.MembershipInput, error) {
	in := roles.MembershipInput{Desired: int(dc.DesiredReplicas()), FormedBefore: dc.Status.CurrentPrimary != "",
		PeerURLs: map[string][]string{}, Healthy: map[string]bool{}}
	count := in.Desired
	for i := range pods {
		ordinal, ok := podOrdinal(dc.StatefulSetName(), pods[i].Name)
		if !ok {
			continue
		}
		count = max(count, int(ordinal)+1)
		in.Pods = append(in.Pods, roles.MemberPod{Name: pods[i].Name, Ordinal: int(ordinal),
			Exists: pods[i].DeletionTimestamp == nil, Announced: pods[i].Annotations[databasev1alpha1.EtcdInitialClusterAnnotation] != ""})
	}
	list, primary, known := memberList(reads)
	in.ListKnown, in.Primary = known, primary
	for _, p := range list {
		if ordinal, ok := podOrdinal(dc.StatefulSetName(), p.ListedName()); ok {
			count = max(count, int(ordinal)+1)
		}
	}
	for ordinal := range count {
		name := memberName(dc, ordinal)
		urls, err := specs.PeerURLs(dc, name)
		if err != nil {
			return in, err
		}
		in.Names, in.PeerURLs[name] = append(in.Names, name), urls
	}
	for _, read := range reads {
		if read.err == nil {
			in.Healthy[read.observation.Member] = true
		}
	}
	for _, p := range list {
		in.Listed = append(in.Listed, listedMember(dc, p, in.PeerURLs))
	}
	return in, nil
}

// memberList is etcd's member list as the primary's agent reported it (or, without a primary
// that answered, the first member's that did), the primary's name, and whether any answered.
func memberList(reads []memberRead) ([]memberagent.Peer, string, bool) {
	var list []memberagent.Peer
	primary, known := "", false
	for _, read := range reads {
		if read.err != nil || len(read.observation.Members) == 0 {
			continue
		}
		if reportsPrimary(read) {
			return read.observation.Members, read.observation.Member, true
		}
		if !known {
			list, known = read.observation.Members, true
		}
	}
	return list, primary, known
}

// listedMember is p for the planner: named by the name it reported, or (not started yet) by
// the member whose peer URL it has, or the first label of its peer URL's host.
func listedMember(dc *databasev1alpha1.DatabaseCluster, p memberagent.Peer, peerURLs map[string][]string) roles.ListedMember {
	m := roles.ListedMember{Name: p.Name, Ordinal: -1, Started: p.Name != "", Learner: p.Learner, PeerURLs: p.PeerURLs}
	if m.Name == "" {
		for name, urls := range peerURLs {
			if slices.ContainsFunc(urls, func(u string) bool { return slices.Contains(p.PeerURLs, u) }) {
				m.Name = name
			}
		}
	}
	if m.Name == "" {
		m.Name = p.ListedName()
	}
	if ordinal, ok := podOrdinal(dc.StatefulSetName(), m.Name); ok {
		m.Ordinal = int(ordinal)
	}
	return m
}

// changeMembership carries out action through the agent of its Via member.
func (r *Reconciler) changeMembership(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, pods []corev1.Pod,
	action roles.MembershipAction,
) error {
	ctx, cancel := context.WithTimeout(ctx, roleActionTimeout)
	defer cancel()
	via := podNamed(pods, action.Via)
	if via == nil {
		return errNoPod
	}
	switch action.Kind {
	case roles.MembershipAdd:
		through, err := r.throughEach(pods, action, func(p *corev1.Pod) error {
			_, err := r.Members.AddMember(ctx, dc, p, action.Member, action.PeerURLs[0])
			return err
		})
		if err != nil {
			return fmt.Errorf("adding %s to etcd's members: %w", action.Member, err)
		}
		r.Recorder.Eventf(dc, nil, corev1.EventTypeNormal, EventMemberAdded, actionMembership,
			"Added %s (%s) to etcd's members through %s, as a learner until it has caught up", action.Member, action.PeerURLs[0], through)
	case roles.MembershipPromote:
		if _, err := r.throughEach(pods, action, func(p *corev1.Pod) error {
			_, err := r.Members.AddMember(ctx, dc, p, action.Member, action.PeerURLs[0])
			return err
		}); err != nil {
			return fmt.Errorf("promoting %s to a voting member of etcd: %w", action.Member, err)
		}
		r.Recorder.Eventf(dc, nil, corev1.EventTypeNormal, EventMemberPromoted, actionMembership,
			"Promoted %s to a voting member: it has caught up", action.Member)
	case roles.MembershipRemove:
		if _, err := r.throughEach(pods, action, func(p *corev1.Pod) error {
			_, err := r.Members.RemoveMember(ctx, dc, p, action.Member)
			return err
		}); err != nil {
			return fmt.Errorf("removing %s from etcd's members: %w", action.Member, err)
		}
		r.Recorder.Eventf(dc, nil, corev1.EventTypeNormal, EventMemberRemoved, actionMembership,
			"Removed %s from etcd's members before its pod goes", action.Member)
	case roles.MembershipTransfer:
		if _, err := r.Members.TransferLeadership(ctx, dc, via, action.Target); err != nil {
			return fmt.Errorf("moving the leadership from %s to %s before its removal: %w", via.Name, action.Target, err)
		}
		r.Recorder.Eventf(dc, via, corev1.EventTypeNormal, EventSwitchover, actionMembership,
			"Moved the leadership from %s to %s before removing %s", via.Name, action.Target, via.Name)
	}
	return nil
}

// throughEach makes change through the agent of action's Via member, and, when it refuses, of
// each of its Alternates in turn, until one makes it; it returns the member that did, or every
// refusal.
func (r *Reconciler) throughEach(pods []corev1.Pod, action roles.MembershipAction, change func(*corev1.Pod) error) (string, error) {
	var refusals []error
	for _, name := range append([]string{action.Via}, action.Alternates...) {
		pod := podNamed(pods, name)
		if pod == nil {
			continue
		}
		err := change(pod)
		if err == nil {
			return name, nil
		}
		refusals = append(refusals, fmt.Errorf("through %s: %w", name, err))
	}
	if len(refusals) == 0 {
		return "", errNoPod
	}
	return "", errors.Join(refusals...)
}

// announce writes each etcd pod's announcement (by pod name) as its annotations.
func (r *Reconciler) announce(ctx context.Context, pods []corev1.Pod, announcements map[string]roles.Announcement) error {
	annotations := map[string]map[string]string{}
	for pod, a := range announcements {
		annotations[pod] = map[string]string{databasev1alpha1.EtcdInitialClusterAnnotation: a.InitialCluster,
			databasev1alpha1.EtcdInitialClusterStateAnnotation: a.State}
	}
	return r.annotatePods(ctx, pods, databasev1alpha1.EtcdInitialClusterAnnotation, annotations)
}

// annotatePods sets each pod's annotations (by pod name) where they differ, guarded by the pod's
// resourceVersion. With onceKey, a pod that has that annotation already keeps what it has: an
// etcd announcement is made once, before the pod's database starts.
func (r *Reconciler) annotatePods(ctx context.Context, pods []corev1.Pod, onceKey string, annotations map[string]map[string]string) error {
	for i := range pods {
		add, ok := annotations[pods[i].Name]
		if !ok || (onceKey != "" && pods[i].Annotations[onceKey] != "") || hasAnnotations(&pods[i], add) {
			continue
		}
		patched := pods[i].DeepCopy()
		if patched.Annotations == nil {
			patched.Annotations = map[string]string{}
		}
		maps.Copy(patched.Annotations, add)
		if err := r.Patch(ctx, patched, patch.LockedMergeFrom(&pods[i])); err != nil {
			return fmt.Errorf("announcing to pod %s: %w", pods[i].Name, err)
		}
		pods[i] = *patched
	}
	return nil
}

// announceRoles tells each pod of a PostgreSQL cluster its role (engine postgresql), which its
// database reads when its container starts, the first time or again after a crash: the primary
// (the switchover's target while one is in flight) is the primary, every other member a replica
// that streams from NAME-rw. The announcements follow the primary: a member promoted since its
// pod was created, whose container restarts, must start as the primary, not wait for itself as a
// replica.
func (r *Reconciler) announceRoles(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, pods []corev1.Pod, reads []memberRead) error {
	primary := announcedPrimary(dc, pods, reads)
	host := dc.ReadWriteServiceName() + "." + dc.Namespace + ".svc"
	annotations := map[string]map[string]string{}
	for i := range pods {
		if pods[i].DeletionTimestamp != nil {
			continue
		}
		role := string(databasev1alpha1.MemberRoleReplica)
		if pods[i].Name == primary {
			role = string(databasev1alpha1.MemberRolePrimary)
		}
		annotations[pods[i].Name] = map[string]string{databasev1alpha1.PostgreSQLRoleAnnotation: role,
			databasev1alpha1.PostgreSQLPrimaryHostAnnotation: host}
	}
	return r.annotatePods(ctx, pods, "", annotations)
}

// hasAnnotations tells whether pod has every annotation of want, with its value.
func hasAnnotations(pod *corev1.Pod, want map[string]string) bool {
	for k, v := range want {
		if pod.Annotations[k] != v {
			return false
		}
	}
	return true
}

// announcedPrimary is the member the pods are told is the primary: the target of
// a switchover or failover in flight (a recreated old primary must not come back writable while
// it is carried out); the status's current primary; before there is one, the member an agent reports primary, or the pod told so
// already; a new cluster's first member otherwise.
func announcedPrimary(dc *databasev1alpha1.DatabaseCluster, pods []corev1.Pod, reads []memberRead) string {
	if dc.Status.Switchover != nil {
		return dc.Status.Switchover.To
	}
	if dc.Status.CurrentPrimary != "" {
		return dc.Status.CurrentPrimary
	}
	for _, read := range reads {
		if read.err == nil && reportsPrimary(read) {
			return read.observation.Member
		}
	}
	for i := range pods {
		if pods[i].Annotations[databasev1alpha1.PostgreSQLRoleAnnotation] == string(databasev1alpha1.MemberRolePrimary) {
			return pods[i].Name
		}
	}
	return memberName(dc, 0)
}

// holdMembers is the replicas the StatefulSet keeps with engine etcd while a scale-down waits for
// members to leave etcd's member list (nil: the spec's): a pod goes only once its member is
// removed. Without a recent read of the list, the live StatefulSet's replicas are kept.
func (r *Reconciler) holdMembers(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) (*int32, error) {
	if !dc.HasEngine() || dc.Stopped() || r.Members == nil {
		return nil, nil
	}
	live, err := r.cachedStatefulSet(ctx, dc)
	if err != nil || live == nil {
		return nil, err
	}
	want, have := dc.DesiredReplicas(), ptr.Deref(live.Spec.Replicas, 0)
	if have <= want {
		return nil, nil
	}
	if !managesMembership(dc) {
		return holdPrimary(dc, want, have), nil
	}
	memo, _ := r.roles.get(client.ObjectKeyFromObject(dc))
	list, _, known := memberList(memo.reads)
	if !known {
		return ptr.To(have), nil
	}
	hold := want
	for _, p := range list {
		if ordinal, ok := podOrdinal(dc.StatefulSetName(), p.ListedName()); ok && ordinal >= hold {
			hold = ordinal + 1
		}
	}
	return ptr.To(min(hold, have)), nil
}

// holdPrimary is the replicas the StatefulSet keeps (nil: want) while the current primary's
// ordinal is one a scale-down removes: the planner first hands its role to a replica that stays
// (roles' scale-down rule), so that a scale-down never takes the primary's pod.
func holdPrimary(dc *databasev1alpha1.DatabaseCluster, want, have int32) *int32 {
	primary := dc.Status.CurrentPrimary
	if s := dc.Status.Switchover; s != nil {
		primary = s.From // its role is still moving
	}
	ordinal, ok := podOrdinal(dc.StatefulSetName(), primary)
	if !ok || ordinal < want {
		return nil
	}
	return ptr.To(min(ordinal+1, have))
}

// removeLostMember removes member, whose data is about to be deleted with its lost claim, from
// etcd's member list (engine etcd) through the primary's agent as last read; held says why it
// could not be, and the claim is then kept.
func (r *Reconciler) removeLostMember(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, member string) (held string, err error) {
	if !managesMembership(dc) || r.Members == nil {
		return "", nil
	}
	memo, _ := r.roles.get(client.ObjectKeyFromObject(dc))
	list, primary, known := memberList(memo.reads)
	if !known || primary == "" || primary == member {
		return "etcd's member list is not known from a primary other than " + member + ": " + member + " stays a member, and its claim", nil
	}
	if !slices.ContainsFunc(list, func(p memberagent.Peer) bool { return p.ListedName() == member }) {
		return "", nil
	}
	pods, err := r.listPods(ctx, dc)
	if err != nil {
		return "", err
	}
	via := podNamed(pods, primary)
	if via == nil {
		return "the primary " + primary + " has no pod", nil
	}
	ctx, cancel := context.WithTimeout(ctx, roleActionTimeout)
	defer cancel()
	if _, err := r.Members.RemoveMember(ctx, dc, via, member); err != nil {
		// Held, not failed: the other phases (the roles among them) go on, and the next pass
		// tries again.
		return fmt.Sprintf("removing %s from etcd's members through %s failed (%v): its claim is kept", member, primary, err), nil
	}
	r.roles.put(client.ObjectKeyFromObject(dc), rolesMemoEntry{since: memo.since}) // read again
	r.Recorder.Eventf(dc, nil, corev1.EventTypeNormal, EventMemberRemoved, actionMembership,
		"Removed %s from etcd's members before replacing it: its data is lost with its node", member)
	return "", nil
}
