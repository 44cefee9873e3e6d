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

package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// The data-safety property: random sequences of spec edits (replicas, both retention policies,
// pause and resume, storage growth) and a final delete, through the real API server, the
// StatefulSet controller and the garbage collector. After every step the member claims are
// exactly those a model of the spec says exist, and no member the spec keeps was deleted (every
// one was Ready: no Ready pod is ever deleted, by the operator's replacement of a stuck pod, of a
// lost member (spec.autoHeal.replaceLostMembers is on whenever replicas > 1) or anything else);
// after the delete a member claim is gone if and
// only if the last spec said whenDeleted: Delete; claims that are not a member's (a copy with the
// cluster's labels, a restore, a claim a backup tool owns) are never touched. The cluster has a
// ScheduledDatabaseBackup and a Completed backup of it as 0.3.0 made one (controlled by the
// schedule); before the cluster, the schedule is deleted: the backup and its snapshots outlive
// both, as a backup is deleted only by the user or by a retention the user wrote.
//
// DATA_SAFETY_RUNS sets the number of runs (default 2, six steps each); the seed is Ginkgo's
// random seed (--seed), printed in the report, so a failing sequence can be replayed.
var _ = Describe("DatabaseCluster data safety (property)", func() {
	runs := 2
	if n, err := strconv.Atoi(os.Getenv("DATA_SAFETY_RUNS")); err == nil && n > 0 {
		runs = n
	}
	for run := range runs {
		It(fmt.Sprintf("keeps or deletes exactly the claims the spec asks for (random run %d)", run), func(ctx SpecContext) {
			rng := rand.New(rand.NewPCG(uint64(GinkgoRandomSeed()), uint64(run)))
			p := newPropertyRun(ctx, fmt.Sprintf("e2e-property-%d", run))
			for step := range 6 {
				p.step(step, p.randomOp(rng))
			}
			p.deleteAndCheck()
			AddReportEntry(fmt.Sprintf("property run %d (seed %d)", run, GinkgoRandomSeed()), strings.Join(p.steps, "; "))
		})
	}
	// The sequences that once lost or leaked data, run every time whatever the seed.
	DescribeTable("keeps or deletes exactly the claims the spec asks for (fixed sequence)",
		func(ctx SpecContext, ns string, ops ...int) {
			p := newPropertyRun(ctx, ns)
			for i, op := range ops {
				p.step(i, op)
			}
			p.deleteAndCheck()
		},
		Entry("Delete, paused, Retain, then deleted while paused: the stale policy must not delete",
			"e2e-property-stale-retain", opWhenDeleted, opPause, opWhenDeleted),
		Entry("Retain, paused, Delete, then deleted while paused: the claims are deleted",
			"e2e-property-stale-delete", opPause, opWhenDeleted),
		Entry("claims retained by a scale-down are deleted with the cluster when it says Delete",
			"e2e-property-retained", opScale, opWhenDeleted),
		Entry("scaled down with whenScaled Delete and straight back up: the removed member comes back with a new claim",
			"e2e-property-scale-back", opWhenDeleted, opWhenScaled, opScale, opScale),
	)
})

// The edits a step can make.
const (
	opScale = iota
	opWhenScaled
	opWhenDeleted
	opPause
	opGrow
	opCount
)

// randomOp picks an edit; replicas changes twice as often as the others.
func (p *propertyRun) randomOp(rng *rand.Rand) int {
	if op := rng.IntN(opCount + 1); op < opCount {
		return op
	}
	return opScale
}

// step makes one edit, waits for the cluster to converge and checks the claims.
func (p *propertyRun) step(i, op int) {
	var what string
	switch op {
	case opScale:
		p.replicas = 1 + (p.replicas+int32(i))%4
		if p.replicas == p.applied {
			p.replicas = 1 + p.replicas%4
		}
		what = fmt.Sprintf("replicas %d", p.replicas)
	case opWhenScaled:
		p.whenScaled = flip(p.whenScaled)
		what = "whenScaled " + string(p.whenScaled)
	case opWhenDeleted:
		p.whenDeleted = flip(p.whenDeleted)
		what = "whenDeleted " + string(p.whenDeleted)
	case opPause:
		p.paused = !p.paused
		what = fmt.Sprintf("paused %t", p.paused)
	case opGrow:
		p.sizeGi++
		what = fmt.Sprintf("size %dGi", p.sizeGi)
	}
	By(fmt.Sprintf("step %d: %s", i, what))
	p.steps = append(p.steps, what)
	p.write()
	if !p.paused {
		p.apply()
	}
	p.converge()
}

// propertyRun is one cluster "p" in a namespace of its own, and the model of its claims.
type propertyRun struct {
	ctx SpecContext
	ns  string
	dc  *databasev1alpha1.DatabaseCluster
	// The spec as last written, and what the StatefulSet was last given (not while paused).
	replicas, applied       int32
	whenDeleted, whenScaled databasev1alpha1.PVCRetentionPolicyType
	paused                  bool
	sizeGi                  int
	claims                  map[int32]bool      // ordinals whose claim the model says exists
	members                 map[int32]types.UID // the member pods at the last converged step
	decoys                  map[string][]metav1.OwnerReference
	steps                   []string
	// schedule is the cluster's schedule; backup a backup of it as 0.3.0 made one, and
	// backupState the backup and its snapshots as backupAndSnapshots read them once released.
	schedule    *databasev1alpha1.ScheduledDatabaseBackup
	backup      *databasev1alpha1.DatabaseBackup
	backupState []string
}

func newPropertyRun(ctx SpecContext, ns string) *propertyRun {
	Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		if CurrentSpecReport().Failed() {
			dumpNamespace(ctx, ns)
		}
	})
	p := &propertyRun{
		ctx: ctx, ns: ns, replicas: 2, applied: 2, sizeGi: 1,
		whenDeleted: databasev1alpha1.RetainPVC, whenScaled: databasev1alpha1.RetainPVC,
		claims: map[int32]bool{0: true, 1: true},
	}
	p.dc = &databasev1alpha1.DatabaseCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns},
		Spec: databasev1alpha1.DatabaseClusterSpec{
			Replicas:  ptr.To(p.replicas),
			Image:     "registry.example/db:1",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}},
			// Auto-grow is on in every run: its agents are not reachable on simulated nodes (the
			// decision's own property is in controllers/databasecluster), and it must keep the
			// rule whatever the steps do; the cap is above every size opGrow reaches.
			Storage: databasev1alpha1.StorageSpec{StorageClassName: "standard", Size: "1Gi",
				AutoGrow: &databasev1alpha1.AutoGrowSpec{MaxSize: resource.MustParse("20Gi")}},
			PVCRetentionPolicy: &databasev1alpha1.PVCRetentionPolicy{
				WhenDeleted: p.whenDeleted, WhenScaled: p.whenScaled,
			},
			AutoHeal: autoHeal(p.replicas),
		},
	}
	Expect(k8s.Create(ctx, p.dc)).To(Succeed())
	p.makeDecoys()
	p.converge()
	p.makeScheduledBackup()
	return p
}

// makeScheduledBackup stores a schedule of the cluster (suspended: no run during the steps) and
// a backup of it as 0.3.0 made a run, labelled and controlled by the schedule, and waits until
// the backup is Completed and the operator has released it (no owner reference, the schedule's
// UID annotated): an upgrade from 0.3.0.
func (p *propertyRun) makeScheduledBackup() {
	p.schedule = &databasev1alpha1.ScheduledDatabaseBackup{
		ObjectMeta: metav1.ObjectMeta{Name: "p-nightly", Namespace: p.ns},
		Spec:       databasev1alpha1.ScheduledDatabaseBackupSpec{ClusterName: "p", Schedule: "0 2 * * *", Suspend: true},
	}
	Expect(k8s.Create(p.ctx, p.schedule)).To(Succeed())
	p.backup = &databasev1alpha1.DatabaseBackup{
		ObjectMeta: metav1.ObjectMeta{Name: "p-nightly-030", Namespace: p.ns,
			Labels:          map[string]string{databasev1alpha1.ScheduleLabel: p.schedule.Name},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(p.schedule, databasev1alpha1.GroupVersion.WithKind("ScheduledDatabaseBackup"))}},
		Spec: databasev1alpha1.DatabaseBackupSpec{ClusterName: "p"},
	}
	Expect(k8s.Create(p.ctx, p.backup)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(p.ctx, client.ObjectKeyFromObject(p.backup), p.backup)).To(Succeed())
		g.Expect(p.backup.Status.Phase).To(Equal(databasev1alpha1.BackupCompleted))
		g.Expect(p.backup.OwnerReferences).To(BeEmpty())
		g.Expect(p.backup.Annotations).To(HaveKeyWithValue(databasev1alpha1.ScheduleUIDAnnotation, string(p.schedule.UID)))
	}).Should(Succeed())
	p.backupState = backupAndSnapshots(p.ctx, p.backup)(Default)
	Expect(p.backupState).To(HaveLen(3), "the backup and the snapshots of the two members")
}

// makeDecoys stores claims that look like members but are not: they must outlive every step.
func (p *propertyRun) makeDecoys() {
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "backup-tool", Namespace: p.ns}}
	Expect(k8s.Create(p.ctx, owner)).To(Succeed())
	backupRef := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}
	p.decoys = map[string][]metav1.OwnerReference{
		"data-p-0-copy":    nil,         // a copy with the cluster's labels
		"restore-data-p-1": nil,         // a restore
		"data-p-01":        nil,         // not an ordinal the StatefulSet controller writes
		"data-p-7":         {backupRef}, // a member's name, taken over by a backup tool
	}
	for name, refs := range p.decoys {
		claim := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: p.ns, Labels: p.dc.Labels(), OwnerReferences: refs},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				StorageClassName: ptr.To("standard"),
				Resources: corev1.VolumeResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				},
			},
		}
		Expect(k8s.Create(p.ctx, claim)).To(Succeed())
	}
}

func flip(policy databasev1alpha1.PVCRetentionPolicyType) databasev1alpha1.PVCRetentionPolicyType {
	if policy == databasev1alpha1.DeletePVC {
		return databasev1alpha1.RetainPVC
	}
	return databasev1alpha1.DeletePVC
}

// write patches the cluster's spec to the model's.
func (p *propertyRun) write() {
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(p.ctx, client.ObjectKeyFromObject(p.dc), p.dc)).To(Succeed())
		base := p.dc.DeepCopy()
		p.dc.Spec.Replicas = ptr.To(p.replicas)
		p.dc.Spec.Paused = p.paused
		p.dc.Spec.Storage.Size = fmt.Sprintf("%dGi", p.sizeGi)
		p.dc.Spec.PVCRetentionPolicy = &databasev1alpha1.PVCRetentionPolicy{WhenDeleted: p.whenDeleted, WhenScaled: p.whenScaled}
		p.dc.Spec.AutoHeal = autoHeal(p.replicas)
		g.Expect(k8s.Patch(p.ctx, p.dc, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))).To(Succeed())
	}).Should(Succeed())
}

// autoHeal is the property's spec.autoHeal: the replacement of lost members is on whenever the
// admission allows it (more than one member), at the shortest threshold, so that every step also
// shows that it deletes nothing of a cluster whose nodes are all Ready.
func autoHeal(replicas int32) *databasev1alpha1.AutoHealSpec {
	return &databasev1alpha1.AutoHealSpec{LostMemberAfterSeconds: ptr.To[int32](30), ReplaceLostMembers: replicas > 1}
}

// apply is what the StatefulSet does with the spec once the operator passes it on: a scale-down
// deletes the claims of the removed pods only when whenScaled says Delete; a scale-up makes (or
// reuses) a claim for every ordinal.
func (p *propertyRun) apply() {
	if p.replicas < p.applied && p.whenScaled == databasev1alpha1.DeletePVC {
		for ordinal := p.replicas; ordinal < p.applied; ordinal++ {
			delete(p.claims, ordinal)
		}
	}
	for ordinal := range p.replicas {
		p.claims[ordinal] = true
	}
	p.applied = p.replicas
}

// converge waits, when the cluster is not paused, until the operator and the StatefulSet have
// caught up with the spec, and then checks the claims against the model.
func (p *propertyRun) converge() {
	if !p.paused {
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(p.ctx, client.ObjectKeyFromObject(p.dc), p.dc)).To(Succeed())
			g.Expect(p.dc.Status.ObservedGeneration).To(Equal(p.dc.Generation))
			g.Expect(p.dc.Status.ReadyReplicas).To(Equal(p.replicas))
			for _, want := range [][2]string{{"Available", "True"}, {"Resizing", "False"}, {"Degraded", "False"}} {
				c := meta.FindStatusCondition(p.dc.Status.Conditions, want[0])
				g.Expect(c).NotTo(BeNil())
				g.Expect(string(c.Status)).To(Equal(want[1]), want[0]+": "+c.Message)
			}
			sts := &appsv1.StatefulSet{}
			g.Expect(k8s.Get(p.ctx, client.ObjectKey{Namespace: p.ns, Name: "p"}, sts)).To(Succeed())
			g.Expect(sts.Status.ObservedGeneration).To(Equal(sts.Generation))
			g.Expect(string(sts.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted)).To(Equal(string(p.whenDeleted)))
		}).Should(Succeed())
		p.checkMembersKept()
	}
	Eventually(p.memberClaims).Should(Equal(p.wantClaims()))
	p.checkDecoys()
}

// checkMembersKept checks the pod half of the property and records the members: every member
// the spec still keeps (an ordinal below replicas) is the pod of the last converged step, which
// was Ready then (converge waits for it). A new UID at such an ordinal is a Ready pod deleted:
// by the operator, whose stuck-rollout replacement deletes only pods that are not Ready, or by a
// rollout no step asks for (the image never changes, a storage growth keeps the pods).
func (p *propertyRun) checkMembersKept() {
	var pods corev1.PodList
	Expect(k8s.List(p.ctx, &pods, client.InNamespace(p.ns), client.MatchingLabels(p.dc.SelectorLabels()))).To(Succeed())
	now := map[int32]types.UID{}
	for _, pod := range pods.Items {
		ordinal, err := strconv.Atoi(strings.TrimPrefix(pod.Name, p.dc.Name+"-"))
		if err == nil && pod.DeletionTimestamp == nil {
			now[int32(ordinal)] = pod.UID
		}
	}
	for ordinal, uid := range p.members {
		if ordinal < p.replicas {
			Expect(now).To(HaveKeyWithValue(ordinal, uid), "member %s-%d was deleted while Ready and kept by the spec", p.dc.Name, ordinal)
		}
	}
	p.members = now
}

// memberClaims lists the names of the claims data-p-<n> that exist and are not being deleted.
func (p *propertyRun) memberClaims(g Gomega) []string {
	var list corev1.PersistentVolumeClaimList
	g.Expect(k8s.List(p.ctx, &list, client.InNamespace(p.ns))).To(Succeed())
	var names []string
	for _, claim := range list.Items {
		if _, decoy := p.decoys[claim.Name]; !decoy && claim.DeletionTimestamp == nil {
			names = append(names, claim.Name)
		}
	}
	slices.Sort(names)
	return names
}

func (p *propertyRun) wantClaims() []string {
	var names []string
	for ordinal := range p.claims {
		names = append(names, fmt.Sprintf("data-p-%d", ordinal))
	}
	slices.Sort(names)
	return names
}

// checkDecoys asserts that every decoy still exists, not being deleted, with its own owners.
func (p *propertyRun) checkDecoys() {
	for name, refs := range p.decoys {
		claim := &corev1.PersistentVolumeClaim{}
		Expect(k8s.Get(p.ctx, client.ObjectKey{Namespace: p.ns, Name: name}, claim)).To(Succeed(), name)
		Expect(claim.DeletionTimestamp).To(BeNil(), name)
		Expect(claim.OwnerReferences).To(HaveLen(len(refs)), name)
		for i := range refs {
			Expect(claim.OwnerReferences[i].UID).To(Equal(refs[i].UID), name)
		}
	}
}

// deleteAndCheck deletes the schedule, then the cluster, and checks the property: the schedule's
// backup and its snapshots are kept through both; with whenDeleted Delete every member claim is
// gone, otherwise every one is kept (also after the garbage collector removed the StatefulSet);
// decoys are kept either way.
func (p *propertyRun) deleteAndCheck() {
	By("delete the schedule: its backup and snapshots are kept")
	p.steps = append(p.steps, "schedule deleted")
	deleteScheduleAndWaitForCollector(p.ctx, p.schedule)
	Consistently(backupAndSnapshots(p.ctx, p.backup), "3s").Should(Equal(p.backupState))

	By(fmt.Sprintf("delete (paused %t, whenDeleted %s)", p.paused, p.whenDeleted))
	Expect(k8s.Delete(p.ctx, p.dc)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(apierrors.IsNotFound(k8s.Get(p.ctx, client.ObjectKeyFromObject(p.dc), &databasev1alpha1.DatabaseCluster{}))).To(BeTrue())
		err := k8s.Get(p.ctx, client.ObjectKey{Namespace: p.ns, Name: "p"}, &appsv1.StatefulSet{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the StatefulSet is garbage collected")
		var pods corev1.PodList
		g.Expect(k8s.List(p.ctx, &pods, client.InNamespace(p.ns))).To(Succeed())
		g.Expect(pods.Items).To(BeEmpty())
	}).Should(Succeed())
	if p.whenDeleted == databasev1alpha1.DeletePVC {
		p.claims = map[int32]bool{}
	}
	Eventually(p.memberClaims).Should(Equal(p.wantClaims()))
	Consistently(p.memberClaims, "3s").Should(Equal(p.wantClaims()), "the garbage collector deleted no kept claim")
	p.checkDecoys()
	Expect(backupAndSnapshots(p.ctx, p.backup)(Default)).To(Equal(p.backupState), "the backup outlives its cluster")
}
