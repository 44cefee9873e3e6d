//go:build e2e

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

package faults

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed1b407122/database-operator/api/conditions"
	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/test/harness/faultproxy"
)

// The invariants, as the fault table names them.
const (
	invChildren  = "children"
	invClaims    = "claims kept"
	invStatus    = "status converged"
	invPods      = "pods Ready"
	invPodUIDs   = "pods not restarted"
	invQuiet     = "no write loop"
	invRunning   = "manager running"
	invGone      = "children gone"
	invTakenOver = "second manager took over"
)

// subject is one DatabaseCluster under test and what it must look like: the replicas and
// size the spec asks for, and the claims that must exist (with the UIDs first seen, so a
// claim deleted and made again counts as data lost).
type subject struct {
	dc     *databasev1alpha1.DatabaseCluster
	claims map[string]types.UID
	// lost counts member claims that vanished or changed UID without the spec asking.
	lost int
}

// newSubject builds a DatabaseCluster of the given replicas, with 1Gi claims of "standard" and
// the given retention policies.
func newSubject(ns, name string, replicas int32, whenScaled, whenDeleted databasev1alpha1.PVCRetentionPolicyType) *subject {
	return &subject{
		dc: &databasev1alpha1.DatabaseCluster{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: databasev1alpha1.DatabaseClusterSpec{
				Replicas:           ptr.To(replicas),
				Image:              "registry.example/db:1",
				Resources:          corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}},
				Storage:            databasev1alpha1.StorageSpec{StorageClassName: "standard", Size: "1Gi"},
				PVCRetentionPolicy: &databasev1alpha1.PVCRetentionPolicy{WhenScaled: whenScaled, WhenDeleted: whenDeleted},
			},
		},
		claims: map[string]types.UID{},
	}
}

// create makes the namespace and the cluster, through the admin client (not the proxy).
func (s *subject) create(ctx context.Context) {
	Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.dc.Namespace}})).To(Succeed())
	Expect(k8s.Create(ctx, s.dc)).To(Succeed())
}

// edit patches the cluster's spec (merge patch), through the admin client.
func (s *subject) edit(ctx context.Context, change func(*databasev1alpha1.DatabaseClusterSpec)) {
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s.dc), s.dc)).To(Succeed())
		patch := client.MergeFromWithOptions(s.dc.DeepCopy(), client.MergeFromWithOptimisticLock{})
		change(&s.dc.Spec)
		g.Expect(k8s.Patch(ctx, s.dc, patch)).To(Succeed())
	}).WithContext(ctx).Should(Succeed())
}

// wantedClaims are the member claims that must exist: every ordinal below the replicas, and
// with whenScaled Retain every ordinal that ever existed.
func (s *subject) wantedClaims() []string {
	names := s.recordedClaims()
	for i := range *s.dc.Spec.Replicas {
		names = append(names, s.dc.ClaimName(i))
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// recordedClaims are the claims seen so far that must still exist.
func (s *subject) recordedClaims() []string {
	names := []string{}
	for name := range s.claims {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// forgetClaimsFrom drops the claims of ordinals >= replicas from the wanted set: a scale-down
// with whenScaled Delete asks for their deletion.
func (s *subject) forgetClaimsFrom(replicas int32) {
	for name := range s.claims {
		var ordinal int32
		if _, err := fmt.Sscanf(name, "data-"+s.dc.StatefulSetName()+"-%d", &ordinal); err == nil && ordinal >= replicas {
			delete(s.claims, name)
		}
	}
}

// podUIDs returns the cluster's pods by name → UID.
func (s *subject) podUIDs(ctx context.Context) map[string]types.UID {
	var pods corev1.PodList
	Expect(k8s.List(ctx, &pods, client.InNamespace(s.dc.Namespace))).To(Succeed())
	uids := map[string]types.UID{}
	for _, pod := range pods.Items {
		uids[pod.Name] = pod.UID
	}
	return uids
}

// converged checks, in one Eventually, everything a converged cluster shows and returns the
// invariants it checked:
//   - exactly one StatefulSet (replicas, claim template size), the two Services and the
//     PodDisruptionBudget when more than one replica, all controlled by the cluster;
//   - exactly the wanted claims, Bound, with the size asked for and the UIDs first seen;
//   - exactly the wanted pods, Ready;
//   - status: observedGeneration, replicas, updatedReplicas, currentImage, Available with
//     "N/N replicas are ready", Progressing, Resizing and Degraded False;
//   - the StatefulSet's own status settled (its controller writes no more).
func (s *subject) converged(g Gomega, ctx context.Context) []string {
	dc := s.dc
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
	replicas := *dc.Spec.Replicas
	size := resource.MustParse(dc.Spec.Storage.Size)

	g.Expect(dc.Status.ObservedGeneration).To(Equal(dc.Generation), "observedGeneration")
	available := meta.FindStatusCondition(dc.Status.Conditions, databasev1alpha1.ConditionAvailable)
	g.Expect(available).NotTo(BeNil())
	g.Expect([]string{string(available.Status), available.Reason, available.Message}).To(Equal(
		[]string{"True", databasev1alpha1.ReasonAllReplicasReady, fmt.Sprintf("%d/%d replicas are ready", replicas, replicas)}))
	g.Expect(dc.Status.ReadyReplicas).To(Equal(replicas))
	g.Expect([]any{dc.Status.Replicas, dc.Status.UpdatedReplicas, dc.Status.CurrentImage}).
		To(Equal([]any{replicas, replicas, dc.Spec.Image}), "status replicas, updatedReplicas, currentImage")
	for condition, want := range map[string][]string{
		databasev1alpha1.ConditionResizing:    {"False", databasev1alpha1.ReasonStorageAsRequested},
		databasev1alpha1.ConditionProgressing: {"False", databasev1alpha1.ReasonRolloutComplete},
		conditions.Degraded:                   {"False", conditions.ReasonAsExpected},
	} {
		c := meta.FindStatusCondition(dc.Status.Conditions, condition)
		g.Expect(c).NotTo(BeNil(), condition)
		g.Expect([]string{string(c.Status), c.Reason}).To(Equal(want), condition)
	}

	var statefulSets appsv1.StatefulSetList
	g.Expect(k8s.List(ctx, &statefulSets, client.InNamespace(dc.Namespace))).To(Succeed())
	g.Expect(names(statefulSets.Items)).To(ConsistOf(dc.StatefulSetName()))
	sts := &statefulSets.Items[0]
	g.Expect(sts.DeletionTimestamp).To(BeNil())
	g.Expect(sts.Spec.Replicas).To(HaveValue(Equal(replicas)))
	// The StatefulSet controller is done too: a later status update of it would make the
	// operator write the cluster's status once more, legitimately, inside the quiet window.
	g.Expect([]any{sts.Status.ObservedGeneration, sts.Status.Replicas, sts.Status.ReadyReplicas, sts.Status.UpdatedReplicas,
		sts.Status.CurrentRevision}).To(Equal([]any{sts.Generation, replicas, replicas, replicas, sts.Status.UpdateRevision}),
		"StatefulSet status: observedGeneration, replicas, readyReplicas, updatedReplicas, currentRevision")
	g.Expect(sts.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests.Storage().Cmp(size)).To(BeZero(), "claim template size")
	controlledBy(g, dc, sts)

	var services corev1.ServiceList
	g.Expect(k8s.List(ctx, &services, client.InNamespace(dc.Namespace))).To(Succeed())
	g.Expect(names(services.Items)).To(ConsistOf(dc.ClientServiceName(), dc.HeadlessServiceName()))
	for i := range services.Items {
		controlledBy(g, dc, &services.Items[i])
	}

	var budgets policyv1.PodDisruptionBudgetList
	g.Expect(k8s.List(ctx, &budgets, client.InNamespace(dc.Namespace))).To(Succeed())
	if replicas > 1 {
		g.Expect(names(budgets.Items)).To(ConsistOf(dc.PodDisruptionBudgetName()))
		controlledBy(g, dc, &budgets.Items[0])
	} else {
		g.Expect(budgets.Items).To(BeEmpty(), "no PodDisruptionBudget for one replica")
	}

	var pods corev1.PodList
	g.Expect(k8s.List(ctx, &pods, client.InNamespace(dc.Namespace))).To(Succeed())
	var ready, want []string
	for _, pod := range pods.Items {
		g.Expect(pod.DeletionTimestamp).To(BeNil(), "pod %s is going away", pod.Name)
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				ready = append(ready, pod.Name)
			}
		}
	}
	for i := range replicas {
		want = append(want, fmt.Sprintf("%s-%d", dc.StatefulSetName(), i))
	}
	g.Expect(ready).To(ConsistOf(want), "Ready pods")
	g.Expect(pods.Items).To(HaveLen(int(replicas)))

	claims := s.listClaims(g, ctx)
	g.Expect(names(claims)).To(Equal(s.wantedClaims()), "claims")
	for _, claim := range claims {
		g.Expect(claim.Status.Phase).To(Equal(corev1.ClaimBound), claim.Name)
		g.Expect(claim.Status.Capacity.Storage().Cmp(size)).To(BeZero(), "capacity of %s", claim.Name)
	}
	s.checkClaimUIDs(g, claims)
	return []string{invChildren, invClaims, invPods, invStatus}
}

// listClaims lists the claims of the namespace that are not being deleted.
func (s *subject) listClaims(g Gomega, ctx context.Context) []corev1.PersistentVolumeClaim {
	var list corev1.PersistentVolumeClaimList
	g.Expect(k8s.List(ctx, &list, client.InNamespace(s.dc.Namespace))).To(Succeed())
	var claims []corev1.PersistentVolumeClaim
	for _, claim := range list.Items {
		if claim.DeletionTimestamp == nil {
			claims = append(claims, claim)
		}
	}
	return claims
}

// checkClaimUIDs records the UIDs of new claims and fails (counting the loss) when a known
// claim has a new UID: it was deleted and made again, its data gone.
func (s *subject) checkClaimUIDs(g Gomega, claims []corev1.PersistentVolumeClaim) {
	for _, claim := range claims {
		uid, known := s.claims[claim.Name]
		if !known {
			s.claims[claim.Name] = claim.UID
			continue
		}
		if uid != claim.UID {
			s.lost++
			s.claims[claim.Name] = claim.UID
		}
		g.Expect(claim.UID).To(Equal(uid), "claim %s was deleted and made again: its data is lost", claim.Name)
	}
}

// waitConverged waits until converged holds and returns the invariants checked.
func (s *subject) waitConverged(ctx context.Context) []string {
	var checked []string
	Eventually(func(g Gomega) { checked = s.converged(g, ctx) }).WithContext(ctx).Should(Succeed())
	Expect(s.lost).To(BeZero(), "claims lost")
	return checked
}

// expectConverged waits for converged, then watches a quiet window in which the operator must
// not write (leader election's Lease renewals aside), and returns the invariants checked.
func (s *subject) expectConverged(ctx context.Context) []string {
	checked := s.waitConverged(ctx)
	expectQuiet(ctx)
	return append(checked, invQuiet)
}

// expectQuiet fails when the operator writes anything through the proxy within quietWindow,
// but Leases (leader election renews them) and Events: client-go's event broadcaster retries an
// event whose create failed (an injected fault) for up to a minute after the transition.
func expectQuiet(ctx context.Context) {
	before := proxy.Counts()
	select {
	case <-ctx.Done():
		return
	case <-time.After(quietWindow):
	}
	Expect(faultproxy.Writes(before, proxy.Counts(), "leases", "events")).To(BeEmpty(),
		"the operator wrote while nothing changed (verb, resource, namespace → count)")
}

// expectDeleted deletes the cluster and waits until it, its children and its pods are gone
// and exactly the claims the whenDeleted policy keeps are left, with their UIDs.
func (s *subject) expectDeleted(ctx context.Context) []string {
	s.delete(ctx)
	return s.waitDeleted(ctx)
}

// delete deletes the cluster, through the admin client.
func (s *subject) delete(ctx context.Context) {
	Expect(k8s.Delete(ctx, s.dc)).To(Succeed())
	if s.dc.WhenDeleted() == databasev1alpha1.DeletePVC {
		s.claims = map[string]types.UID{}
	}
}

// waitDeleted waits until the cluster, its children and its pods are gone and exactly the
// claims the whenDeleted policy keeps are left, with their UIDs.
func (s *subject) waitDeleted(ctx context.Context) []string {
	dc := s.dc
	Eventually(func(g Gomega) {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(dc), &databasev1alpha1.DatabaseCluster{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the DatabaseCluster is gone: %v", err)
		for _, list := range []client.ObjectList{&appsv1.StatefulSetList{}, &corev1.ServiceList{},
			&policyv1.PodDisruptionBudgetList{}, &corev1.PodList{}} {
			g.Expect(k8s.List(ctx, list, client.InNamespace(dc.Namespace))).To(Succeed())
			g.Expect(meta.LenList(list)).To(BeZero(), "%T left in %s", list, dc.Namespace)
		}
		claims := s.listClaims(g, ctx)
		g.Expect(names(claims)).To(Equal(s.recordedClaims()), "claims left")
		s.checkClaimUIDs(g, claims)
	}).WithContext(ctx).Should(Succeed())
	Expect(s.lost).To(BeZero(), "claims lost")
	return []string{invGone, invClaims}
}

func controlledBy(g Gomega, dc *databasev1alpha1.DatabaseCluster, obj metav1.Object) {
	owner := metav1.GetControllerOf(obj)
	g.Expect(owner).NotTo(BeNil(), "%s has no controller", obj.GetName())
	g.Expect(owner.UID).To(Equal(dc.UID), "%s is controlled by %s/%s", obj.GetName(), owner.Kind, owner.Name)
}

func names[T any, PT interface {
	*T
	metav1.Object
}](items []T) []string {
	out := []string{}
	for i := range items {
		out = append(out, PT(&items[i]).GetName())
	}
	slices.Sort(out)
	return out
}

// forEach runs fn for every subject at once and waits for all; a failure in any fails the spec.
func forEach(subjects []*subject, fn func(*subject)) {
	var wg sync.WaitGroup
	for _, s := range subjects {
		wg.Add(1)
		go func() {
			defer GinkgoRecover()
			defer wg.Done()
			fn(s)
		}()
	}
	wg.Wait()
}
