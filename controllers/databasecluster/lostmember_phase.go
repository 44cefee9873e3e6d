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
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/cachecfg"
)

// Events about a lost member.
const (
	// EventMemberLost is the warning that MemberLost turned True with reason MemberLost.
	EventMemberLost = databasev1alpha1.ReasonMemberLost
	// EventReplacedLostMember tells that the operator deleted a lost member's claim and pod.
	EventReplacedLostMember = "ReplacedLostMember"
)

// reconcileLostMembers is phase 6's part for lost members: it finds them (findLostMembers) and,
// when lostMemberToReplace chooses one, replaces it (replaceLostMember). Nothing is deleted when
// another member was just replaced this pass (busy). sts is the StatefulSet as phase 5 left it.
func (r *Reconciler) reconcileLostMembers(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, sts *cachecfg.StatefulSetView,
	claims []corev1.PersistentVolumeClaim, busy bool,
) (lostObservation, error) {
	if sts == nil || !metav1.IsControlledBy(sts, dc) {
		return lostObservation{checked: true, threshold: dc.LostMemberAfter()}, nil
	}
	pods, err := r.listPods(ctx, dc)
	if err != nil {
		return lostObservation{}, err
	}
	obs, err := findLostMembers(dc, sts, pods, claims, r.clock().Now(), r.reads(ctx))
	if err != nil {
		return obs, err
	}
	victim, held := lostMemberToReplace(dc, sts, pods, claims, obs.members, r.replacedLost.of(dc.Namespace))
	if busy && victim != nil {
		victim, held = nil, "another member was replaced in this pass"
	}
	obs.held = held
	if victim == nil {
		return obs, nil
	}
	if obs.held, err = r.replaceLostMember(ctx, dc, sts.Name, victim); err != nil || obs.held != "" {
		return obs, err
	}
	obs.replaced, obs.statefulSet = victim, sts.Name
	return obs, nil
}

// observeLostMembers adds to obs the lost members when phase 6 did not look at them (the
// cluster is paused, or an earlier phase failed): the condition and the metric still tell.
// It brings obs.recheckAfter forward to when a member whose pod cannot run is looked at again.
func (r *Reconciler) observeLostMembers(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, obs *observation, pods []corev1.Pod) {
	if !obs.lost.checked {
		lost, err := findLostMembers(dc, obs.statefulSet, pods, obs.claims, r.clock().Now(), r.reads(ctx))
		obs.lost = lost
		if err != nil {
			obs.err = errors.Join(obs.err, err)
		}
	}
	obs.recheckAfter = sooner(obs.recheckAfter, obs.lost.recheckAfter)
}

// memberReads reads what findLostMembers needs beyond the cache: a PersistentVolume by name
// (nil when none exists), and a node (readNode).
type memberReads struct {
	volume func(name string) (*corev1.PersistentVolume, error)
	node   func(name string, byHostname bool) (node *corev1.Node, known bool, err error)
}

// reads are the Reconciler's memberReads, from the API server.
func (r *Reconciler) reads(ctx context.Context) memberReads {
	return memberReads{
		volume: func(name string) (*corev1.PersistentVolume, error) { return r.readVolume(ctx, name) },
		node: func(name string, byHostname bool) (*corev1.Node, bool, error) {
			return r.readNode(ctx, name, byHostname)
		},
	}
}

// findLostMembers judges every member pod of sts at now (judgeMember). A cluster whose pods all
// run reads nothing.
func findLostMembers(dc *databasev1alpha1.DatabaseCluster, sts *cachecfg.StatefulSetView, pods []corev1.Pod,
	claims []corev1.PersistentVolumeClaim, now time.Time, reads memberReads,
) (lostObservation, error) {
	obs := lostObservation{checked: true, threshold: dc.LostMemberAfter()}
	if sts == nil {
		return obs, nil
	}
	byName := map[string]*corev1.PersistentVolumeClaim{}
	for i := range claims {
		byName[claims[i].Name] = &claims[i]
	}
	for i := range pods {
		pod := &pods[i]
		ordinal, ok := podOrdinal(sts.Name, pod.Name)
		if !ok || !metav1.IsControlledBy(pod, sts) {
			continue
		}
		claimName := dc.ClaimName(ordinal)
		if err := judgeMember(&obs, pod, claimName, byName[claimName], now, reads); err != nil {
			return obs, err
		}
	}
	return obs, nil
}

// judgeMember adds to obs the member of pod when it is lost (memberLost), and when to look at it
// again. It reads only for a pod that shows it cannot run (lostEvidence): the volume its claim
// (claimName; claim is nil when not in the cache) is bound to, and the node that decides
// (memberNode).
func judgeMember(obs *lostObservation, pod *corev1.Pod, claimName string, claim *corev1.PersistentVolumeClaim,
	now time.Time, reads memberReads,
) error {
	kind, since, wait := lostEvidence(pod, now)
	obs.recheckAfter = sooner(obs.recheckAfter, wait)
	if kind == "" {
		return nil
	}
	var pv *corev1.PersistentVolume
	if claim != nil && claim.Spec.VolumeName != "" {
		var err error
		if pv, err = reads.volume(claim.Spec.VolumeName); err != nil {
			return err
		}
	}
	nodeName, byHostname := memberNode(kind, pod, pv)
	if nodeName == "" {
		obs.recheckAfter = sooner(obs.recheckAfter, lostMemberRecheck)
		return nil
	}
	node, known, err := reads.node(nodeName, byHostname)
	if err != nil || !known {
		return err
	}
	lost, wait := memberLost(pod, kind, since, claimName, pv, node, nodeName, now, obs.threshold)
	// A member not lost yet is looked at when it may be, and at the latest after
	// lostMemberRecheck: its node may go down meanwhile. A lost one is looked at again too:
	// its node may come back, or the others become Ready.
	obs.recheckAfter = sooner(obs.recheckAfter, sooner(wait, lostMemberRecheck))
	if lost != nil {
		obs.members = append(obs.members, *lost)
	}
	return nil
}

// readVolume gets a PersistentVolume by name from the API server (nil when none exists).
// PersistentVolumes are not cached: the operator reads one only for a member whose pod cannot be
// scheduled, so a get of that one volume is all it needs (RBAC: get, no list or watch).
func (r *Reconciler) readVolume(ctx context.Context, name string) (*corev1.PersistentVolume, error) {
	pv := &corev1.PersistentVolume{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: name}, pv); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading PersistentVolume %s: %w", name, err)
	}
	return pv, nil
}

// readNode reads the node a member depends on from the API server: by name, or by its
// kubernetes.io/hostname label (a local volume names its node so, and a node's name need not
// be its hostname: a get by that name finding nothing would not prove the node gone). It returns
// nil when no such node exists, and known false when several carry the hostname (nothing can be
// concluded). Nodes are not cached: a cache would list and watch every node of the cluster for
// the few reads of members that cannot run; these reads happen only for such members (RBAC: get,
// and list always filtered by one hostname; no watch).
func (r *Reconciler) readNode(ctx context.Context, name string, byHostname bool) (node *corev1.Node, known bool, err error) {
	if !byHostname {
		node = &corev1.Node{}
		if err := r.APIReader.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, true, nil
			}
			return nil, false, fmt.Errorf("reading node %s: %w", name, err)
		}
		return node, true, nil
	}
	var list corev1.NodeList
	if err := r.APIReader.List(ctx, &list, client.MatchingLabels{hostnameLabel: name}); err != nil {
		return nil, false, fmt.Errorf("listing the node of hostname %s: %w", name, err)
	}
	switch len(list.Items) {
	case 0:
		return nil, true, nil
	case 1:
		return &list.Items[0], true, nil
	}
	return nil, false, nil
}

// replaceLostMember deletes victim's claim (deleteLostClaim, when victim.deleteClaim) and then
// its pod, by force when victim.force, with its UID as a precondition (a pod recreated under the
// same name in the meantime is left alone), remembers the pod, and says so in an event. held
// says why nothing was replaced (the claim was recreated); sts names the StatefulSet.
func (r *Reconciler) replaceLostMember(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, sts string,
	victim *lostReplacement,
) (held string, err error) {
	m := &victim.member
	if victim.deleteClaim {
		// etcd: the member leaves the member list before its data goes, so that the new member
		// joins with its peers' data under a new identity (a member cannot rejoin without its log).
		if held, err := r.removeLostMember(ctx, dc, m.pod); held != "" || err != nil {
			return held, err
		}
		if held, err := r.deleteLostClaim(ctx, dc.Namespace, victim); held != "" || err != nil {
			return held, err
		}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: dc.Namespace, Name: m.pod}}
	opts := []client.DeleteOption{client.Preconditions{UID: &m.uid}}
	if victim.force {
		opts = append(opts, client.GracePeriodSeconds(0))
	}
	if err := r.Delete(ctx, pod, opts...); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
		return "", fmt.Errorf("deleting pod %s of lost member: %w", m.pod, err)
	}
	r.replacedLost.add(dc.Namespace, m.pod, m.uid)
	logf.FromContext(ctx).Info("Replaced a member lost with its node", "pod", klog.KObj(pod), "node", m.node,
		"nodeState", m.nodeState, "claimDeleted", victim.deleteClaim, "force", victim.force)
	r.Recorder.Eventf(dc, nil, corev1.EventTypeNormal, EventReplacedLostMember, "Delete", "Deleted %s", victim.did(sts))
	return "", nil
}

// deleteLostClaim deletes victim's claim in namespace with its UID as a precondition. A claim
// recreated under the same name in the meantime is not the one bound to the lost volume: it is
// left alone, and with it the member (held says so).
func (r *Reconciler) deleteLostClaim(ctx context.Context, namespace string, victim *lostReplacement) (held string, err error) {
	name := victim.member.claim
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	err = r.Delete(ctx, claim, client.Preconditions{UID: &victim.claimUID})
	switch {
	case apierrors.IsConflict(err):
		return "claim " + name + " was recreated", nil
	case err != nil && !apierrors.IsNotFound(err):
		return "", fmt.Errorf("deleting claim %s of lost member %s: %w", name, victim.member.pod, err)
	}
	return "", nil
}
