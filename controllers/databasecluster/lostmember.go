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

// This file is the pure half of lost members: the evidence a pod shows, the judgement of its
// node, the choice of the member to replace and the MemberLost condition's message, from values
// only. lostmember_phase.go reads the volumes and nodes and deletes the claim and pod it chose;
// status.go sets the condition (setMemberLostCondition).

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/cachecfg"
)

// terminatingMargin is how long after its deletionTimestamp (the time of the deletion plus the
// grace period: when the kubelet must have stopped it) a pod must still exist to be stuck
// terminating. A reachable kubelet confirms a pod's end within seconds of it.
const terminatingMargin = time.Minute

// lostMemberRecheck is how soon a member whose pod cannot run is looked at again while its node
// is Ready or not lost yet: nodes are not watched (see readNode), so their changes trigger no
// reconcile.
const lostMemberRecheck = time.Minute

// hostnameLabel is the node label a local volume's node affinity names its node by.
const hostnameLabel = corev1.LabelHostname

// Ways a member's pod shows that it cannot run.
const (
	// lostUnschedulable: the pod is Pending, and the scheduler cannot place it.
	lostUnschedulable = "unschedulable"
	// lostTerminating: the pod is past its deletion's grace period and terminatingMargin.
	lostTerminating = "terminating"
)

// lostEvidence tells whether pod shows that its member cannot run, and since when: Pending with
// the scheduler's PodScheduled=False reason Unschedulable (since that condition's transition),
// or deleted and still there terminatingMargin after its deletionTimestamp (since then). A Ready
// pod never shows it. When pod is terminating and not stuck yet, wait is how long until it is.
func lostEvidence(pod *corev1.Pod, now time.Time) (kind string, since time.Time, wait time.Duration) {
	if podReady(pod) {
		if pod.DeletionTimestamp != nil {
			// Its node may stop reporting and be marked NotReady by the node lifecycle
			// controller, which changes no condition this pod's watch lets through.
			return "", time.Time{}, lostMemberRecheck
		}
		return "", time.Time{}, 0
	}
	if pod.DeletionTimestamp != nil {
		stuck := pod.DeletionTimestamp.Add(terminatingMargin)
		if now.Before(stuck) {
			return "", time.Time{}, stuck.Sub(now)
		}
		return lostTerminating, stuck, 0
	}
	if pod.Status.Phase != corev1.PodPending && pod.Status.Phase != "" {
		return "", time.Time{}, 0
	}
	if c := unschedulable(pod); c != nil {
		return lostUnschedulable, c.LastTransitionTime.Time, 0
	}
	return "", time.Time{}, 0
}

// unschedulable returns the scheduler's PodScheduled=False condition of reason Unschedulable,
// if pod has it.
func unschedulable(pod *corev1.Pod) *corev1.PodCondition {
	for i, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// podReady reports whether pod's Ready condition is True.
func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// pinnedNode returns the one node pv's required node affinity pins it to (a local volume's):
// by the value of its kubernetes.io/hostname label (byHostname) or by its name (matchFields
// metadata.name). A volume reachable from several nodes (several terms or values, a zone, no
// affinity: network storage) is pinned to none, "": its data follows the pod.
func pinnedNode(pv *corev1.PersistentVolume) (node string, byHostname bool) {
	if pv == nil || pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil ||
		len(pv.Spec.NodeAffinity.Required.NodeSelectorTerms) != 1 {
		return "", false
	}
	term := pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0]
	for _, f := range term.MatchFields {
		if f.Key == metav1.ObjectNameField && f.Operator == corev1.NodeSelectorOpIn && len(f.Values) == 1 {
			return f.Values[0], false
		}
	}
	for _, e := range term.MatchExpressions {
		if e.Key == hostnameLabel && e.Operator == corev1.NodeSelectorOpIn && len(e.Values) == 1 {
			return e.Values[0], true
		}
	}
	return "", false
}

// nodeDown tells whether node is gone (nil), unreachable (the node lifecycle controller's
// node.kubernetes.io/unreachable taint) or NotReady, and since when. A node that is gone says
// nothing of when it went: evidenceSince, since when its member cannot run, stands for it.
func nodeDown(node *corev1.Node, evidenceSince time.Time) (why string, since time.Time) {
	if node == nil {
		return "gone", evidenceSince
	}
	for _, t := range node.Spec.Taints {
		if t.Key == corev1.TaintNodeUnreachable && t.TimeAdded != nil {
			return "unreachable", t.TimeAdded.Time
		}
	}
	for _, c := range node.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		if c.Status == corev1.ConditionTrue {
			return "", time.Time{}
		}
		return "NotReady", c.LastTransitionTime.Time
	}
	// A node that has never reported is not known to be down.
	return "", time.Time{}
}

// lostMember is a member lost with its node.
type lostMember struct {
	pod string
	uid types.UID
	// kind is lostUnschedulable or lostTerminating.
	kind string
	// node is the node the member is lost with, and nodeState "gone", "unreachable" or "NotReady".
	node, nodeState string
	// claim is the member's data claim, volume the volume it is bound to ("" when unbound).
	claim, volume string
	// pinned says that volume is pinned to node: the data cannot follow the pod elsewhere.
	pinned bool
}

// message says why m is lost, e.g. "member db-1: its claim data-db-1 is bound to volume pv-1,
// pinned to node n-2, which is NotReady; the pod cannot be scheduled".
func (m *lostMember) message() string {
	if m.kind == lostUnschedulable {
		return fmt.Sprintf("member %s: its claim %s is bound to volume %s, pinned to node %s, which is %s; the pod cannot be scheduled",
			m.pod, m.claim, m.volume, m.node, m.nodeState)
	}
	return fmt.Sprintf("member %s: the pod is stuck terminating on node %s, which is %s", m.pod, m.node, m.nodeState)
}

// memberNode returns the node that decides whether pod's member is lost, given the evidence
// kind and the volume its claim is bound to (nil when unbound or not read): for a pod that
// cannot be scheduled, the node its volume is pinned to (none for a volume that is not: the
// pod waits for something else); for a pod stuck terminating, the node it runs on.
func memberNode(kind string, pod *corev1.Pod, pv *corev1.PersistentVolume) (node string, byHostname bool) {
	if kind == lostTerminating {
		return pod.Spec.NodeName, false
	}
	return pinnedNode(pv)
}

// memberLost judges the member of pod, whose pod shows evidence (kind, since: lostEvidence), its
// claim bound to pv (nil when unbound), given node, the node memberNode names (nil when none
// exists). The member is lost when that node has been down (nodeDown) for threshold; before,
// wait is how long until it may be. A Ready node (or one never heard from) never loses a member.
func memberLost(pod *corev1.Pod, kind string, since time.Time, claim string, pv *corev1.PersistentVolume,
	node *corev1.Node, nodeName string, now time.Time, threshold time.Duration,
) (*lostMember, time.Duration) {
	why, downSince := nodeDown(node, since)
	if why == "" {
		return nil, 0
	}
	if down := now.Sub(downSince); down < threshold {
		return nil, threshold - down
	}
	m := &lostMember{pod: pod.Name, uid: pod.UID, kind: kind, node: nodeName, nodeState: why, claim: claim}
	if pv != nil {
		m.volume = pv.Name
		pinned, _ := pinnedNode(pv)
		m.pinned = pinned == nodeName
	}
	return m, 0
}

// podOrdinal returns the ordinal of the pod named "<statefulSet>-<ordinal>", false for any other
// name.
func podOrdinal(statefulSet, pod string) (int32, bool) {
	suffix, ok := strings.CutPrefix(pod, statefulSet+"-")
	if !ok || !isOrdinal(suffix) {
		return 0, false
	}
	n, err := strconv.ParseInt(suffix, 10, 32)
	return int32(n), err == nil
}

// lostReplacement is what the operator deletes of a lost member: its claim (when its volume is
// pinned to the lost node; claimUID is the precondition), and its pod, by force (grace period
// 0) when it is stuck terminating on a node that cannot confirm its end.
type lostReplacement struct {
	member   lostMember
	claimUID types.UID
	// deleteClaim is false when the claim is already being deleted, or its volume is not
	// pinned to the lost node (the data follows the pod).
	deleteClaim bool
	force       bool
}

// did says what the operator deleted, for the condition ("deleted ...") and the event
// ("Deleted ...").
func (r *lostReplacement) did(sts string) string {
	what := "pod " + r.member.pod
	if r.force {
		what = "pod " + r.member.pod + " (by force: its node cannot confirm its end)"
	}
	if r.deleteClaim {
		what = "claim " + r.member.claim + " and " + what
	}
	return fmt.Sprintf("%s, lost with node %s (%s), so that StatefulSet %s recreates member %s on a healthy node; "+
		"the database must take it back as a new member", what, r.member.node, r.member.nodeState, sts, r.member.pod)
}

// lostMemberToReplace decides which lost member, if any, the operator replaces, and otherwise
// why none. It replaces only when spec.autoHeal.replaceLostMembers is true and the cluster has
// more than one member, and only a member that
//   - is lost (lost: memberLost found its node gone, unreachable or NotReady past the threshold;
//     never a member whose node is Ready),
//   - has a pod sts controls, of an ordinal below spec.replicas, not deleted by the operator
//     before (same UID in replaced: the cache may still hold it),
//
// and only while every other member below spec.replicas has a pod that is Ready, or is lost
// itself, and at least one is Ready: a member being recreated, deleted or not Ready otherwise
// (e.g. the one replaced last, not back yet) holds every replacement. Of several lost members,
// the lowest ordinal, one per pass. Its claim is deleted only when it is dc's member claim
// (isMemberClaim) and its volume is pinned to the lost node; a claim that is not dc's holds the
// whole replacement.
func lostMemberToReplace(dc *databasev1alpha1.DatabaseCluster, sts *cachecfg.StatefulSetView, pods []corev1.Pod,
	claims []corev1.PersistentVolumeClaim, lost []lostMember, replaced map[string]types.UID,
) (*lostReplacement, string) {
	switch {
	case len(lost) == 0:
		return nil, ""
	case !dc.ReplacesLostMembers():
		return nil, "spec.autoHeal.replaceLostMembers is false"
	case *dc.Spec.Replicas < 2 || dc.Stopped():
		return nil, "the cluster runs fewer than 2 members"
	case sts == nil || sts.DeletionTimestamp != nil || !metav1.IsControlledBy(sts, dc):
		return nil, "the StatefulSet is not in place"
	}
	victim, held := lostMemberOf(sts, *dc.Spec.Replicas, pods, lost, replaced)
	if victim == nil {
		return nil, held
	}
	return replacementOf(dc, sts, claims, victim)
}

// lostMemberOf returns the lost member of the lowest ordinal below replicas, when every other
// member has a Ready pod or is lost itself, at least one is Ready, and none is being replaced
// (replaced); otherwise why none.
func lostMemberOf(sts *cachecfg.StatefulSetView, replicas int32, pods []corev1.Pod, lost []lostMember,
	replaced map[string]types.UID,
) (*lostMember, string) {
	isLost := map[string]*lostMember{}
	for i := range lost {
		isLost[lost[i].pod] = &lost[i]
	}
	members := membersOf(sts, pods)
	var victim *lostMember
	ready, beingReplaced := 0, ""
	for ordinal := range replicas {
		pod := members[ordinal]
		if pod == nil {
			return nil, fmt.Sprintf("member %s-%d has no pod yet", sts.Name, ordinal)
		}
		switch m := isLost[pod.Name]; {
		case m != nil && m.uid == pod.UID && replaced[pod.Name] == pod.UID:
			beingReplaced = pod.Name
		case m != nil && m.uid == pod.UID:
			victim = cmp.Or(victim, m)
		case pod.DeletionTimestamp != nil || !podReady(pod):
			return nil, "member " + pod.Name + " is not Ready"
		default:
			ready++
		}
	}
	switch {
	case beingReplaced != "":
		// One at a time: the cache may still show the pod deleted before.
		return nil, "member " + beingReplaced + " is being replaced"
	case victim == nil:
		return nil, ""
	case ready == 0:
		return nil, "no other member is Ready"
	}
	return victim, ""
}

// membersOf returns the pods sts controls, by ordinal.
func membersOf(sts *cachecfg.StatefulSetView, pods []corev1.Pod) map[int32]*corev1.Pod {
	members := map[int32]*corev1.Pod{}
	for i := range pods {
		if ordinal, ok := podOrdinal(sts.Name, pods[i].Name); ok && metav1.IsControlledBy(&pods[i], sts) {
			members[ordinal] = &pods[i]
		}
	}
	return members
}

// replacementOf says what to delete of victim: its claim only when it is dc's member claim, not
// being deleted yet, and bound to the volume pinned to the lost node; a claim that is not dc's,
// or none in the cache for a member that cannot be scheduled, holds the whole replacement.
func replacementOf(dc *databasev1alpha1.DatabaseCluster, sts *cachecfg.StatefulSetView, claims []corev1.PersistentVolumeClaim,
	victim *lostMember,
) (*lostReplacement, string) {
	out := &lostReplacement{member: *victim, force: victim.kind == lostTerminating}
	for i := range claims {
		claim := &claims[i]
		if claim.Name != victim.claim {
			continue
		}
		if !isMemberClaim(dc, sts, claim) {
			return nil, "claim " + claim.Name + " is not the cluster's"
		}
		out.claimUID = claim.UID
		out.deleteClaim = victim.pinned && claim.DeletionTimestamp == nil && claim.Spec.VolumeName == victim.volume
	}
	if victim.kind == lostUnschedulable && out.claimUID == "" {
		// Its claim is not in the cache: nothing says whose it is.
		return nil, "claim " + victim.claim + " is not the cluster's"
	}
	return out, ""
}

// lostObservation is what the operator saw and did about lost members in one pass.
type lostObservation struct {
	// checked says that the members were looked at (phase 6, or observeLostMembers).
	checked bool
	// members are the lost members, by ordinal.
	members []lostMember
	// replaced is the member this pass deleted the claim and pod of, if any, and statefulSet its
	// StatefulSet's name.
	replaced    *lostReplacement
	statefulSet string
	// held says why the first lost member is not replaced ("" when none is lost or one was).
	held string
	// threshold is spec.autoHeal.lostMemberAfterSeconds.
	threshold time.Duration
	// recheckAfter is when to look again at a member whose pod cannot run (0: none).
	recheckAfter time.Duration
}

// sooner returns the shorter of two waits, 0 meaning none.
func sooner(a, b time.Duration) time.Duration {
	if a == 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

// lostMessage names each lost member of lost, its node and why, the threshold, and why none is
// replaced (lost.held), if it says.
func lostMessage(lost lostObservation) string {
	msgs := make([]string, 0, len(lost.members))
	for i := range lost.members {
		msgs = append(msgs, lost.members[i].message())
	}
	msg := strings.Join(msgs, "; ") +
		fmt.Sprintf(" (for longer than spec.autoHeal.lostMemberAfterSeconds, %ds)", int64(lost.threshold/time.Second))
	if lost.held != "" {
		msg += "; not replaced: " + lost.held
	}
	return msg
}
