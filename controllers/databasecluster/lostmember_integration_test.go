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
	"bytes"
	"errors"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
	"github.com/seed1b407122/database-operator/controllers/internal/certs"
	"github.com/seed1b407122/database-operator/controllers/memberagent"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// lostClockAhead is how far ahead of the API server's clock the operator's clock runs in the
// lost-member specs: past the default threshold (300s) and a pod's terminating margin, so that
// a node the spec marks NotReady now is down for longer than the threshold at once.
const lostClockAhead = 10 * time.Minute

// The envtest specs of a member lost with its node. envtest has no kubelet, scheduler, node
// lifecycle controller or PV controller: the spec makes the nodes and writes their status (and
// the unreachable taint) itself, makes the volumes and binds the claims, makes the member pods
// and writes their status as the kubelet or the scheduler would.
var _ = Describe("DatabaseCluster lost member", Ordered, Label("integration"), func() {
	agents := &memberAgents{addrs: map[string]string{}}
	k8s := testenv.StartInBeforeAll(func(mgr ctrl.Manager) error {
		return (&Reconciler{ReconcilerBase: testenv.ReconcilerBase(mgr), PodReadyTimeout: podReadyTimeout,
			Clock:   clocktesting.NewFakePassiveClock(time.Now().Add(lostClockAhead)),
			Members: &AgentMembers{APIReader: mgr.GetAPIReader(), Address: agents.address}}).SetupWithManager(mgr)
	})
	clusters := testenv.Kind[*databasev1alpha1.DatabaseCluster, *appsv1.StatefulSet]{
		Env: k8s, Name: "DatabaseCluster", ChildName: (*databasev1alpha1.DatabaseCluster).StatefulSetName,
	}

	// makeNode creates node name (its hostname label the same), Ready or NotReady since now, with
	// the unreachable taint when unreachable.
	makeNode := func(ctx SpecContext, name string, ready, unreachable bool) {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}}}
		if unreachable {
			node.Spec.Taints = []corev1.Taint{{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute,
				TimeAdded: ptr.To(metav1.Now())}}
		}
		Expect(k8s.Create(ctx, node)).To(Succeed())
		status := corev1.ConditionTrue
		if !ready {
			status = corev1.ConditionUnknown
		}
		node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status,
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
		Expect(k8s.Status().Update(ctx, node)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8s.Delete(ctx, node))).To(Succeed()) })
	}
	// bindClaim creates member ordinal's data claim of dc and the volume it is bound to: a local
	// volume pinned to node, or a CSI volume any node reaches when node is "".
	bindClaim := func(ctx SpecContext, dc *databasev1alpha1.DatabaseCluster, ordinal int32, node string) *corev1.PersistentVolumeClaim {
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: dc.Namespace + "-" + dc.ClaimName(ordinal)},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:         corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				StorageClassName: "standard",
				PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
					Driver: "csi.example.com", VolumeHandle: dc.ClaimName(ordinal)}},
			},
		}
		if node != "" {
			pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/mnt/disks/" + dc.ClaimName(ordinal)}}
			pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
			}}}}
		}
		Expect(k8s.Create(ctx, pv)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8s.Delete(ctx, pv))).To(Succeed()) })
		claim := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: dc.ClaimName(ordinal), Namespace: dc.Namespace, Labels: dc.Labels()},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				StorageClassName: ptr.To("standard"), VolumeName: pv.Name,
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}
		Expect(k8s.Create(ctx, claim)).To(Succeed())
		claim.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, AccessModes: claim.Spec.AccessModes,
			Capacity: pv.Spec.Capacity}
		Expect(k8s.Status().Update(ctx, claim)).To(Succeed())
		return claim
	}
	// makeMember creates member pod name of sts: Ready on node, or, with node "", Pending because
	// the scheduler cannot place it (its volume's node affinity) since lostClockAhead ago.
	makeMember := func(ctx SpecContext, dc *databasev1alpha1.DatabaseCluster, sts *appsv1.StatefulSet, name, node string) *corev1.Pod {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: dc.Namespace, Labels: dc.Labels(),
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(sts, appsv1.SchemeGroupVersion.WithKind("StatefulSet"))}},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: specs.ContainerName, Image: dc.Spec.Image}}},
		}
		Expect(k8s.Create(ctx, pod)).To(Succeed())
		now := metav1.Now()
		if node == "" {
			pod.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
				Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, LastTransitionTime: now,
				Message: "0/3 nodes are available: 1 node(s) had volume node affinity conflict, 2 node(s) didn't match pod anti-affinity rules",
			}}}
		} else {
			pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.1." + name[len(name)-1:], Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}}}
		}
		Expect(k8s.Status().Update(ctx, pod)).To(Succeed())
		return pod
	}
	// uids returns the UID of every object of the list's kind in ns, by name, "deleting" after
	// the UID of one being deleted.
	uids := func(ctx SpecContext, ns string, list client.ObjectList) func(Gomega) map[string]string {
		return func(g Gomega) map[string]string {
			g.Expect(k8s.List(ctx, list, client.InNamespace(ns))).To(Succeed())
			out := map[string]string{}
			for _, o := range metaItems(list) {
				out[o.GetName()] = string(o.GetUID())
				if o.GetDeletionTimestamp() != nil {
					out[o.GetName()] += " deleting"
				}
			}
			return out
		}
	}
	lostEvents := func(ctx SpecContext, dc *databasev1alpha1.DatabaseCluster) func(Gomega) []string {
		return func(g Gomega) []string {
			all := k8s.EventsAbout(ctx, "DatabaseCluster", dc, testenv.TypeReasonNote)(g)
			return slices.DeleteFunc(all, func(e string) bool {
				return !strings.Contains(e, EventMemberLost+":") && !strings.Contains(e, EventReplacedLostMember+":")
			})
		}
	}
	lostSeries := func(dc *databasev1alpha1.DatabaseCluster) func(Gomega) map[string]float64 {
		return func(g Gomega) map[string]float64 {
			got, err := testenv.Gauges("database_operator_databasecluster_members_lost",
				map[string]string{"namespace": dc.Namespace, "name": dc.Name})
			g.Expect(err).NotTo(HaveOccurred())
			return got
		}
	}

	It("tells a member lost with its node, replaces it only once asked, one at a time, and never a Ready pod", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "lost-")))
		sts := clusters.Create(ctx, dc)
		ns := dc.Namespace
		n0, n1, n2 := ns+"-n0", ns+"-n1", ns+"-n2"

		By("db-2's volume is pinned to n2, NotReady; db-1 is Ready on n1, which is unreachable")
		makeNode(ctx, n0, true, false)
		makeNode(ctx, n1, false, true)
		makeNode(ctx, n2, false, false)
		c0 := bindClaim(ctx, dc, 0, n0)
		c1 := bindClaim(ctx, dc, 1, "")
		c2 := bindClaim(ctx, dc, 2, n2)
		db0 := makeMember(ctx, dc, sts, "db-0", n0)
		db1 := makeMember(ctx, dc, sts, "db-1", n1)
		db2 := makeMember(ctx, dc, sts, "db-2", "")
		claims := map[string]string{"data-db-0": string(c0.UID), "data-db-1": string(c1.UID), "data-db-2": string(c2.UID)}
		pods := map[string]string{"db-0": string(db0.UID), "db-1": string(db1.UID), "db-2": string(db2.UID)}

		lostDb2 := "member db-2: its claim data-db-2 is bound to volume " + ns + "-data-db-2, pinned to node " + n2 +
			", which is NotReady; the pod cannot be scheduled (for longer than spec.autoHeal.lostMemberAfterSeconds, 300s)"
		Eventually(k8s.Condition(ctx, dc, "MemberLost")).Should(Equal([]string{"True", "MemberLost",
			lostDb2 + "; not replaced: spec.autoHeal.replaceLostMembers is false"}))
		Eventually(lostSeries(dc)).Should(Equal(map[string]float64{"{}": 1}))
		Eventually(lostEvents(ctx, dc)).Should(Equal([]string{"Warning MemberLost: " + lostDb2 +
			"; not replaced: spec.autoHeal.replaceLostMembers is false"}))
		Consistently(uids(ctx, ns, &corev1.PodList{}), 2*time.Second).Should(Equal(pods), "replaceLostMembers is false: nothing deleted")
		Expect(uids(ctx, ns, &corev1.PersistentVolumeClaimList{})(Default)).To(Equal(claims))

		By("replaceLostMembers: exactly db-2's claim and pod are deleted; db-1, Ready on an unreachable node, stays")
		clusters.Update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) {
			dc.Spec.AutoHeal = &databasev1alpha1.AutoHealSpec{ReplaceLostMembers: true}
		})
		// envtest runs no pvc-protection controller: the deleted claim keeps its finalizer.
		Eventually(uids(ctx, ns, &corev1.PersistentVolumeClaimList{})).Should(Equal(map[string]string{
			"data-db-0": string(c0.UID), "data-db-1": string(c1.UID), "data-db-2": string(c2.UID) + " deleting"}))
		Eventually(uids(ctx, ns, &corev1.PodList{})).Should(Equal(map[string]string{"db-0": string(db0.UID), "db-1": string(db1.UID)}))
		replacedDb2 := "Deleted claim data-db-2 and pod db-2, lost with node " + n2 + " (NotReady), so that StatefulSet db " +
			"recreates member db-2 on a healthy node; the database must take it back as a new member"
		Eventually(lostEvents(ctx, dc)).Should(Equal([]string{
			"Warning MemberLost: " + lostDb2 + "; not replaced: spec.autoHeal.replaceLostMembers is false",
			"Normal ReplacedLostMember: " + replacedDb2}))
		Eventually(k8s.Condition(ctx, dc, "MemberLost")).Should(Equal([]string{"False", "NoMemberLost", "no member is lost with its node"}))
		Eventually(lostSeries(dc)).Should(Equal(map[string]float64{"{}": 0}))

		By("db-2 is recreated on n0; db-1 is deleted and stays terminating on unreachable n1: its pod only, by force")
		newDb2 := makeMember(ctx, dc, sts, "db-2", n0)
		Expect(k8s.Delete(ctx, db1, client.GracePeriodSeconds(1))).To(Succeed())
		Consistently(uids(ctx, ns, &corev1.PodList{}), 2*time.Second).Should(HaveKey("db-1"),
			"terminating on an unreachable node, but Ready: never deleted")
		Eventually(func(g Gomega) {
			pod := testenv.Current(ctx, k8s, db1)(g)
			pod.Status.Conditions[1] = corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.Now()}
			g.Expect(k8s.Status().Update(ctx, pod)).To(Succeed())
		}).Should(Succeed())
		Eventually(uids(ctx, ns, &corev1.PodList{})).Should(Equal(map[string]string{"db-0": string(db0.UID), "db-2": string(newDb2.UID)}))
		Consistently(uids(ctx, ns, &corev1.PersistentVolumeClaimList{}), 2*time.Second).Should(Equal(map[string]string{
			"data-db-0": string(c0.UID), "data-db-1": string(c1.UID), "data-db-2": string(c2.UID) + " deleting"}),
			"db-1's volume is not pinned to n1: its data follows the pod, its claim stays")
		// A warning for db-1 comes only if a pass saw it lost before db-2's new pod was in the
		// cache (held: "member db-2 has no pod yet"); the replacements are exactly two.
		replacedDb1 := "Normal ReplacedLostMember: Deleted pod db-1 (by force: its node cannot confirm its end), lost with node " + n1 +
			" (unreachable), so that StatefulSet db recreates member db-1 on a healthy node; the database must take it back as a new member"
		Eventually(lostEvents(ctx, dc)).Should(ContainElement(replacedDb1))
		Expect(slices.DeleteFunc(lostEvents(ctx, dc)(Default), func(e string) bool {
			return !strings.Contains(e, EventReplacedLostMember+":")
		})).To(Equal([]string{"Normal ReplacedLostMember: " + replacedDb2, replacedDb1}))
		Eventually(k8s.Condition(ctx, dc, "MemberLost")).Should(Equal([]string{"False", "NoMemberLost", "no member is lost with its node"}))
		Eventually(lostSeries(dc)).Should(Equal(map[string]float64{"{}": 0}))
	})

	It("removes a lost etcd member from etcd's member list before it deletes its claim, and keeps the claim while it cannot", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "lost-etcd-")), withEngine(databasev1alpha1.EngineEtcd))
		dc.Spec.AutoHeal = &databasev1alpha1.AutoHealSpec{ReplaceLostMembers: true}
		sts := clusters.Create(ctx, dc)
		ns := dc.Namespace
		n0, n2 := ns+"-n0", ns+"-n2"
		makeNode(ctx, n0, true, false)
		makeNode(ctx, n2, false, false)
		bindClaim(ctx, dc, 0, n0)
		bindClaim(ctx, dc, 1, n0)
		c2 := bindClaim(ctx, dc, 2, n2)

		By("etcd lists db-0 (the leader), db-1 and db-2, whose volume is pinned to n2, NotReady; db-0's agent cannot remove members")
		// The operator's clock runs lostClockAhead ahead, and so would its CA's validity: TLS
		// checks the real time, so the CA becomes one issued now (the operator keeps a CA that is
		// valid at its own time, and issues its client certificates from it).
		ca, err := certs.NewCA("lost-etcd CA", time.Now())
		Expect(err).NotTo(HaveOccurred())
		caHeld := func(g Gomega) []byte {
			secret := &corev1.Secret{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: dc.CASecretName()}, secret)).To(Succeed())
			if !bytes.Equal(secret.Data[corev1.TLSCertKey], ca.CertPEM) {
				secret.Data = ca.SecretData() // again, if a write of the operator's first pass came after
				g.Expect(k8s.Update(ctx, secret)).To(Succeed())
			}
			return secret.Data[corev1.TLSCertKey]
		}
		Eventually(caHeld).Should(Equal(ca.CertPEM))
		Consistently(caHeld, 2*time.Second).Should(Equal(ca.CertPEM))
		list := &etcdList{}
		sims := map[string]*memberagent.SimEngine{}
		for i, name := range []string{"db-0", "db-1", "db-2"} {
			list.members = append(list.members, memberagent.Peer{Name: name, PeerURLs: []string{peerURL(dc, name)}})
			role := memberagent.RoleReplica
			if i == 0 {
				role = memberagent.RolePrimary
			}
			sims[name] = memberagent.NewSimEngine(name, role)
			serving, err := certs.NewServing(ca, []string{memberDNSName(dc, name)}, time.Now())
			Expect(err).NotTo(HaveOccurred())
			agents.serve(name, etcdListMember{SimEngine: sims[name], list: list}, ca.CertPEM, serving)
		}
		sims["db-0"].Fail(memberagent.ActionRemoveMember, errors.New("etcdserver: unhealthy cluster"))
		makeMember(ctx, dc, sts, "db-0", n0)
		makeMember(ctx, dc, sts, "db-1", n0)
		makeMember(ctx, dc, sts, "db-2", "")
		Eventually(func(g Gomega) string {
			return clusters.Current(ctx, dc)(g).Status.CurrentPrimary
		}).Should(Equal("db-0"))
		Consistently(uids(ctx, ns, &corev1.PersistentVolumeClaimList{}), 3*time.Second).Should(HaveKeyWithValue("data-db-2", string(c2.UID)),
			"db-2 is still in etcd's member list: its claim stays")
		Expect(list.log()).To(BeEmpty())

		By("the removal works: db-2 leaves etcd's member list, then its claim and pod are deleted")
		sims["db-0"].Fail(memberagent.ActionRemoveMember, nil)
		Eventually(uids(ctx, ns, &corev1.PersistentVolumeClaimList{})).Should(HaveKeyWithValue("data-db-2", string(c2.UID)+" deleting"))
		Expect(list.log()).To(Equal([]string{"remove db-2"}))
		Expect(list.names()).To(Equal([]string{"db-0", "db-1"}))
		Eventually(func(g Gomega) []string {
			return k8s.EventsAbout(ctx, "DatabaseCluster", dc, testenv.TypeReasonNote)(g)
		}).Should(ContainElements(
			ContainSubstring("MemberRemoved: Removed db-2 from etcd's members before replacing it: its data is lost with its node"),
			ContainSubstring("ReplacedLostMember: Deleted claim data-db-2 and pod db-2"),
		))

		By("db-2 comes back empty: added to etcd as a learner and announced the member list")
		makeMember(ctx, dc, sts, "db-2", n0)
		Eventually(list.log).Should(Equal([]string{"remove db-2", "add db-2"}))
		Eventually(func(g Gomega) string {
			pod := &corev1.Pod{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-2"}, pod)).To(Succeed())
			return pod.Annotations[databasev1alpha1.EtcdInitialClusterStateAnnotation]
		}).Should(Equal("existing"))
	})
})

// metaItems returns the items of a typed list as metav1.Objects.
func metaItems(list client.ObjectList) []metav1.Object {
	var out []metav1.Object
	switch l := list.(type) {
	case *corev1.PodList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *corev1.PersistentVolumeClaimList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	}
	return out
}
