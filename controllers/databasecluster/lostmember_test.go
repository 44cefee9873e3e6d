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
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/cachecfg"
)

// lostThreshold is spec.autoHeal.lostMemberAfterSeconds of the lost-member tables (the default).
const lostThreshold = 5 * time.Minute

// lostWorld is what the lost-member tables give findLostMembers: the volumes and the nodes the
// API server holds, by name (a node is found by its name, which is also its hostname label).
type lostWorld struct {
	volumes map[string]*corev1.PersistentVolume
	nodes   map[string]*corev1.Node
}

func (w lostWorld) reads() memberReads {
	return memberReads{
		volume: func(name string) (*corev1.PersistentVolume, error) { return w.volumes[name], nil },
		node: func(name string, _ bool) (*corev1.Node, bool, error) {
			return w.nodes[name], true, nil
		},
	}
}

// localVolume is volume pv-<ordinal>, pinned by hostname to node.
func localVolume(ordinal int, node string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pv-%d", ordinal)},
		Spec: corev1.PersistentVolumeSpec{NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
				Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}}}}},
	}
}

// networkVolume is volume pv-<ordinal>, reachable from any node.
func networkVolume(ordinal int) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pv-%d", ordinal)}}
}

// readyNode is node name, Ready since a day.
func readyNode(name string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(rolloutNow.Add(-24 * time.Hour))}}},
	}
}

// notReadyNode is node name, NotReady (Unknown: its kubelet stopped reporting) since d ago.
func notReadyNode(name string, d time.Duration) *corev1.Node {
	node := readyNode(name)
	node.Status.Conditions[0].Status = corev1.ConditionUnknown
	node.Status.Conditions[0].LastTransitionTime = metav1.NewTime(rolloutNow.Add(-d))
	return node
}

// unreachableNode is notReadyNode with the node lifecycle controller's unreachable taint, added d ago.
func unreachableNode(name string, d time.Duration) *corev1.Node {
	node := notReadyNode(name, d)
	node.Spec.Taints = []corev1.Taint{{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute,
		TimeAdded: ptr.To(metav1.NewTime(rolloutNow.Add(-d)))}}
	return node
}

// unschedulableFor makes the pod Pending and not Ready, the scheduler unable to place it since d ago.
func unschedulableFor(d time.Duration) podOption {
	return func(p *corev1.Pod) {
		notReadyFor(d)(p)
		p.Spec.NodeName = ""
		p.Status.Phase = corev1.PodPending
		p.Status.ContainerStatuses = nil
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodScheduled,
			Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
			Message:            "0/3 nodes are available: 1 node(s) had volume node affinity conflict",
			LastTransitionTime: metav1.NewTime(rolloutNow.Add(-d))})
	}
}

// terminatingOn makes the pod run on node, not Ready, deleted with a deletionTimestamp d ago.
func terminatingOn(node string, d time.Duration) podOption {
	return func(p *corev1.Pod) {
		notReadyFor(d)(p)
		p.Spec.NodeName = node
		p.Status.Phase = corev1.PodRunning
		p.DeletionTimestamp = ptr.To(metav1.NewTime(rolloutNow.Add(-d)))
	}
}

// on makes the pod a Ready pod running on node.
func on(node string) podOption { return func(p *corev1.Pod) { p.Spec.NodeName = node } }

// lostCluster is cluster db of replicas members, replaceLostMembers as given.
func lostCluster(replicas int32, replace bool) *databasev1alpha1.DatabaseCluster {
	dc := newCluster("db", withReplicas(replicas), withNamespace("default"))
	dc.Spec.AutoHeal = &databasev1alpha1.AutoHealSpec{ReplaceLostMembers: replace}
	return dc
}

// lostClaim is claim data-db-<ordinal> of lostCluster, owned by its StatefulSet and bound to pv-<ordinal>.
func lostClaim(ordinal int, opts ...func(*corev1.PersistentVolumeClaim)) corev1.PersistentVolumeClaim {
	claim := corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("data-db-%d", ordinal), Namespace: "default",
			UID: types.UID(fmt.Sprintf("claim-uid-%d", ordinal)), Labels: lostCluster(3, false).SelectorLabels(),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db", UID: "sts-uid"}}},
		Spec: corev1.PersistentVolumeClaimSpec{VolumeName: fmt.Sprintf("pv-%d", ordinal)},
	}
	for _, opt := range opts {
		opt(&claim)
	}
	return claim
}

// claims are the member claims of ordinals 0..n-1.
func claimsOf(n int) []corev1.PersistentVolumeClaim {
	var out []corev1.PersistentVolumeClaim
	for i := range n {
		out = append(out, lostClaim(i))
	}
	return out
}

var _ = Describe("lost members", func() {
	DescribeTable("lost or not",
		func(pod corev1.Pod, world lostWorld, wantMessage string, wantWait time.Duration) {
			obs, err := findLostMembers(lostCluster(3, false), cachecfg.ViewStatefulSet(rolloutSts()), []corev1.Pod{pod}, claimsOf(3), rolloutNow, world.reads())
			Expect(err).NotTo(HaveOccurred())
			var got []string
			for i := range obs.members {
				got = append(got, obs.members[i].message())
			}
			if wantMessage == "" {
				Expect(got).To(BeEmpty())
			} else {
				Expect(got).To(Equal([]string{wantMessage}))
			}
			Expect(obs.recheckAfter).To(Equal(wantWait))
		},
		Entry("a Ready pod, its node gone: never",
			member(1, "r", on("n1")), lostWorld{}, "", time.Duration(0)),
		Entry("unschedulable, its volume pinned to a node NotReady past the threshold: lost",
			member(1, "r", unschedulableFor(time.Minute)),
			lostWorld{volumes: map[string]*corev1.PersistentVolume{"pv-1": localVolume(1, "n1")},
				nodes: map[string]*corev1.Node{"n1": notReadyNode("n1", 10*time.Minute)}},
			"member db-1: its claim data-db-1 is bound to volume pv-1, pinned to node n1, which is NotReady; the pod cannot be scheduled",
			lostMemberRecheck),
		Entry("unschedulable, its node NotReady for less than the threshold: not yet, looked at when it may be",
			member(1, "r", unschedulableFor(time.Minute)),
			lostWorld{volumes: map[string]*corev1.PersistentVolume{"pv-1": localVolume(1, "n1")},
				nodes: map[string]*corev1.Node{"n1": notReadyNode("n1", 4*time.Minute+30*time.Second)}},
			"", 30*time.Second),
		Entry("unschedulable, its node Ready (the node is full, say): never",
			member(1, "r", unschedulableFor(time.Hour)),
			lostWorld{volumes: map[string]*corev1.PersistentVolume{"pv-1": localVolume(1, "n1")},
				nodes: map[string]*corev1.Node{"n1": readyNode("n1")}},
			"", lostMemberRecheck),
		Entry("unschedulable, its node never reported: not known to be down",
			member(1, "r", unschedulableFor(time.Hour)),
			lostWorld{volumes: map[string]*corev1.PersistentVolume{"pv-1": localVolume(1, "n1")},
				nodes: map[string]*corev1.Node{"n1": {ObjectMeta: metav1.ObjectMeta{Name: "n1"}}}},
			"", lostMemberRecheck),
		Entry("unschedulable past the threshold, its node gone: lost",
			member(1, "r", unschedulableFor(6*time.Minute)),
			lostWorld{volumes: map[string]*corev1.PersistentVolume{"pv-1": localVolume(1, "n1")}},
			"member db-1: its claim data-db-1 is bound to volume pv-1, pinned to node n1, which is gone; the pod cannot be scheduled",
			lostMemberRecheck),
		Entry("unschedulable for a minute, its node gone: counted from the pod's evidence",
			member(1, "r", unschedulableFor(time.Minute)),
			lostWorld{volumes: map[string]*corev1.PersistentVolume{"pv-1": localVolume(1, "n1")}},
			"", lostMemberRecheck),
		Entry("unschedulable, its volume on network storage (no node affinity): never",
			member(1, "r", unschedulableFor(time.Hour)),
			lostWorld{volumes: map[string]*corev1.PersistentVolume{"pv-1": networkVolume(1)}},
			"", lostMemberRecheck),
		Entry("Pending for another reason (gated, not unschedulable): never",
			member(1, "r", notReadyFor(time.Hour), func(p *corev1.Pod) { p.Status.Phase = corev1.PodPending }),
			lostWorld{volumes: map[string]*corev1.PersistentVolume{"pv-1": localVolume(1, "n1")}},
			"", time.Duration(0)),
		Entry("terminating within its grace period and margin on an unreachable node: not yet",
			member(1, "r", terminatingOn("n1", 20*time.Second)),
			lostWorld{nodes: map[string]*corev1.Node{"n1": unreachableNode("n1", time.Hour)}},
			"", terminatingMargin-20*time.Second),
		Entry("stuck terminating on a node unreachable past the threshold: lost",
			member(1, "r", terminatingOn("n1", 10*time.Minute)),
			lostWorld{nodes: map[string]*corev1.Node{"n1": unreachableNode("n1", 6*time.Minute)}},
			"member db-1: the pod is stuck terminating on node n1, which is unreachable", lostMemberRecheck),
		Entry("stuck terminating on a Ready node (a hung kubelet is not a lost node): never",
			member(1, "r", terminatingOn("n1", time.Hour)),
			lostWorld{nodes: map[string]*corev1.Node{"n1": readyNode("n1")}},
			"", lostMemberRecheck),
		Entry("stuck terminating on a node NotReady for a minute: not yet",
			member(1, "r", terminatingOn("n1", time.Hour)),
			lostWorld{nodes: map[string]*corev1.Node{"n1": notReadyNode("n1", time.Minute)}},
			"", lostMemberRecheck),
		Entry("stuck terminating on a node that is gone: lost",
			member(1, "r", terminatingOn("n1", time.Hour)), lostWorld{},
			"member db-1: the pod is stuck terminating on node n1, which is gone", lostMemberRecheck),
		Entry("a pod the StatefulSet does not control: never",
			member(1, "r", terminatingOn("n1", time.Hour), notControlled), lostWorld{}, "", time.Duration(0)),
	)

	// world3 is a cluster on nodes n0, n1, n2 (Ready unless down lists them: gone), each member's
	// volume pinned to its node.
	world := func(n int, down map[string]*corev1.Node) lostWorld {
		w := lostWorld{volumes: map[string]*corev1.PersistentVolume{}, nodes: map[string]*corev1.Node{}}
		for i := range n {
			name := fmt.Sprintf("n%d", i)
			w.volumes[fmt.Sprintf("pv-%d", i)] = localVolume(i, name)
			w.nodes[name] = readyNode(name)
			if node, ok := down[name]; ok {
				w.nodes[name] = node
				if node == nil {
					delete(w.nodes, name)
				}
			}
		}
		return w
	}
	// replacement says what lostMemberToReplace chose, or why nothing.
	replacement := func(r *lostReplacement, held string) string {
		if r == nil {
			return "nothing: " + held
		}
		return fmt.Sprintf("claim %v %s (uid %s), pod %s (uid %s), force %v",
			r.deleteClaim, r.member.claim, r.claimUID, r.member.pod, r.member.uid, r.force)
	}

	DescribeTable("what to delete, or nothing",
		func(dc *databasev1alpha1.DatabaseCluster, pods []corev1.Pod, claims []corev1.PersistentVolumeClaim, w lostWorld,
			replaced map[string]types.UID, want string,
		) {
			obs, err := findLostMembers(dc, cachecfg.ViewStatefulSet(rolloutSts()), pods, claims, rolloutNow, w.reads())
			Expect(err).NotTo(HaveOccurred())
			Expect(replacement(lostMemberToReplace(dc, cachecfg.ViewStatefulSet(rolloutSts()), pods, claims, obs.members, replaced))).To(Equal(want))
		},
		Entry("db-1 lost with its gone node, the others Ready: its claim, then its pod",
			lostCluster(3, true),
			[]corev1.Pod{member(0, "r", on("n0")), member(1, "r", unschedulableFor(time.Hour)), member(2, "r", on("n2"))},
			claimsOf(3), world(3, map[string]*corev1.Node{"n1": nil}), nil,
			"claim true data-db-1 (uid claim-uid-1), pod db-1 (uid uid-1), force false"),
		Entry("replaceLostMembers false: nothing deleted",
			lostCluster(3, false),
			[]corev1.Pod{member(0, "r", on("n0")), member(1, "r", unschedulableFor(time.Hour)), member(2, "r", on("n2"))},
			claimsOf(3), world(3, map[string]*corev1.Node{"n1": nil}), nil,
			"nothing: spec.autoHeal.replaceLostMembers is false"),
		Entry("the member's node Ready: never",
			lostCluster(3, true),
			[]corev1.Pod{member(0, "r", on("n0")), member(1, "r", unschedulableFor(time.Hour)), member(2, "r", on("n2"))},
			claimsOf(3), world(3, nil), nil, "nothing: "),
		Entry("another member not Ready: never",
			lostCluster(3, true),
			[]corev1.Pod{member(0, "r", on("n0")), member(1, "r", unschedulableFor(time.Hour)), member(2, "r", on("n2"), notReadyFor(time.Hour))},
			claimsOf(3), world(3, map[string]*corev1.Node{"n1": nil}), nil, "nothing: member db-2 is not Ready"),
		Entry("another member has no pod (being recreated): never",
			lostCluster(3, true),
			[]corev1.Pod{member(0, "r", on("n0")), member(1, "r", unschedulableFor(time.Hour))},
			claimsOf(3), world(3, map[string]*corev1.Node{"n1": nil}), nil, "nothing: member db-2 has no pod yet"),
		Entry("two lost of five: only the lowest ordinal",
			lostCluster(5, true),
			[]corev1.Pod{member(0, "r", on("n0")), member(1, "r", unschedulableFor(time.Hour)), member(2, "r", on("n2")),
				member(3, "r", terminatingOn("n3", time.Hour)), member(4, "r", on("n4"))},
			claimsOf(5), world(5, map[string]*corev1.Node{"n1": nil, "n3": unreachableNode("n3", time.Hour)}), nil,
			"claim true data-db-1 (uid claim-uid-1), pod db-1 (uid uid-1), force false"),
		Entry("two lost of five, the first already replaced (its pod still cached): nothing until it is back",
			lostCluster(5, true),
			[]corev1.Pod{member(0, "r", on("n0")), member(1, "r", unschedulableFor(time.Hour)), member(2, "r", on("n2")),
				member(3, "r", terminatingOn("n3", time.Hour)), member(4, "r", on("n4"))},
			claimsOf(5), world(5, map[string]*corev1.Node{"n1": nil, "n3": unreachableNode("n3", time.Hour)}),
			map[string]types.UID{"db-1": "uid-1"}, "nothing: member db-1 is being replaced"),
		Entry("every member lost: none Ready to hold the data, nothing",
			lostCluster(2, true),
			[]corev1.Pod{member(0, "r", unschedulableFor(time.Hour)), member(1, "r", unschedulableFor(time.Hour))},
			claimsOf(2), world(2, map[string]*corev1.Node{"n0": nil, "n1": nil}), nil, "nothing: no other member is Ready"),
		Entry("a claim the cluster does not own (another controller's): never",
			lostCluster(3, true),
			[]corev1.Pod{member(0, "r", on("n0")), member(1, "r", unschedulableFor(time.Hour)), member(2, "r", on("n2"))},
			[]corev1.PersistentVolumeClaim{lostClaim(0), lostClaim(1, func(c *corev1.PersistentVolumeClaim) {
				c.OwnerReferences = []metav1.OwnerReference{{APIVersion: "backup.example/v1", Kind: "Backup", Name: "b", UID: "b"}}
			}), lostClaim(2)},
			world(3, map[string]*corev1.Node{"n1": nil}), nil, "nothing: claim data-db-1 is not the cluster's"),
		Entry("the claim not in the cache: never",
			lostCluster(3, true),
			[]corev1.Pod{member(0, "r", on("n0")), member(1, "r", unschedulableFor(time.Hour)), member(2, "r", on("n2"))},
			[]corev1.PersistentVolumeClaim{lostClaim(0), lostClaim(2)},
			world(3, map[string]*corev1.Node{"n1": nil}), nil, "nothing: "),
		Entry("stuck terminating on an unreachable node, its volume pinned there: the claim, and the pod by force",
			lostCluster(3, true),
			[]corev1.Pod{member(0, "r", on("n0")), member(1, "r", on("n1")), member(2, "r", terminatingOn("n2", time.Hour))},
			claimsOf(3), world(3, map[string]*corev1.Node{"n2": unreachableNode("n2", time.Hour)}), nil,
			"claim true data-db-2 (uid claim-uid-2), pod db-2 (uid uid-2), force true"),
		Entry("stuck terminating on an unreachable node, its volume on network storage: the pod only, by force",
			lostCluster(3, true),
			[]corev1.Pod{member(0, "r", on("n0")), member(1, "r", on("n1")), member(2, "r", terminatingOn("n2", time.Hour))},
			claimsOf(3), lostWorld{volumes: map[string]*corev1.PersistentVolume{"pv-2": networkVolume(2)},
				nodes: map[string]*corev1.Node{"n0": readyNode("n0"), "n1": readyNode("n1"), "n2": unreachableNode("n2", time.Hour)}}, nil,
			"claim false data-db-2 (uid claim-uid-2), pod db-2 (uid uid-2), force true"),
		Entry("a lost member of an ordinal the spec no longer asks for: not replaced",
			lostCluster(2, true),
			[]corev1.Pod{member(0, "r", on("n0")), member(1, "r", on("n1")), member(2, "r", terminatingOn("n2", time.Hour))},
			claimsOf(3), world(3, map[string]*corev1.Node{"n2": nil}), nil, "nothing: "),
	)

	It("says which member is lost, why it is not replaced, and what was replaced", func() {
		dc := lostCluster(3, false)
		m := lostMember{pod: "db-1", uid: "uid-1", kind: lostUnschedulable, node: "n1", nodeState: "gone",
			claim: "data-db-1", volume: "pv-1", pinned: true}
		var conds []metav1.Condition
		setMemberLostCondition(&conds, dc, lostObservation{threshold: lostThreshold})
		Expect(conds[0]).To(conditionIs("False", "NoMemberLost", "no member is lost with its node"))

		setMemberLostCondition(&conds, dc, lostObservation{threshold: lostThreshold, members: []lostMember{m},
			held: "spec.autoHeal.replaceLostMembers is false"})
		Expect(conds[0]).To(conditionIs("True", "MemberLost",
			"member db-1: its claim data-db-1 is bound to volume pv-1, pinned to node n1, which is gone; the pod cannot be scheduled "+
				"(for longer than spec.autoHeal.lostMemberAfterSeconds, 300s); not replaced: spec.autoHeal.replaceLostMembers is false"))
		Expect(reasonBegan(nil, conds, "MemberLost", "MemberLost")).NotTo(BeNil(), "the warning is told when the member is found lost")
		before := append([]metav1.Condition(nil), conds...)

		setMemberLostCondition(&conds, dc, lostObservation{threshold: lostThreshold, members: []lostMember{m},
			held: "member db-2 is not Ready"})
		Expect(reasonBegan(before, conds, "MemberLost", "MemberLost")).To(BeNil(), "a new reason not to replace is no new loss")

		setMemberLostCondition(&conds, dc, lostObservation{threshold: lostThreshold, members: []lostMember{m}, statefulSet: "db",
			replaced: &lostReplacement{member: m, claimUID: "claim-uid-1", deleteClaim: true}})
		Expect(conds[0]).To(conditionIs("True", "LostMemberReplaced",
			"deleted claim data-db-1 and pod db-1, lost with node n1 (gone), so that StatefulSet db recreates member db-1 "+
				"on a healthy node; the database must take it back as a new member"))
		Expect(meta.FindStatusCondition(conds, databasev1alpha1.ConditionMemberLost).ObservedGeneration).To(Equal(dc.Generation))
	})
})

// conditionIs matches a condition's status, reason and message.
func conditionIs(status, reason, message string) OmegaMatcher {
	return And(HaveField("Status", metav1.ConditionStatus(status)), HaveField("Reason", reason), HaveField("Message", message))
}
