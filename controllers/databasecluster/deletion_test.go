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
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

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
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed1b407122/database-operator/api/conditions"
	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
	"github.com/seed1b407122/database-operator/controllers/operator"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// The deletion specs try to make the finalizer delete or release the wrong claims. envtest runs
// no garbage collector: a claim the finalizer deletes keeps its pvc-protection finalizer and is
// only marked deleted, and what the garbage collector would do with the rest is read off their
// owner references (the e2e tier checks it with the real garbage collector).
var _ = Describe("DatabaseCluster data safety", Ordered, Label("integration"), func() {
	var writes *writeCounter
	k8s := testenv.StartInBeforeAll(func(mgr ctrl.Manager) error {
		writes = &writeCounter{Client: mgr.GetClient()}
		deps, err := operator.NewReconcilerBase(mgr, 1)
		if err != nil {
			return err
		}
		deps.Client = writes
		return (&Reconciler{ReconcilerBase: deps}).SetupWithManager(mgr)
	})
	clusters := testenv.Kind[*databasev1alpha1.DatabaseCluster, *appsv1.StatefulSet]{
		Env: k8s, Name: "DatabaseCluster", ChildName: (*databasev1alpha1.DatabaseCluster).StatefulSetName,
	}
	// observe plays the StatefulSet controller having observed the current generation.
	observe := func(ctx SpecContext, dc *databasev1alpha1.DatabaseCluster) {
		Eventually(func(g Gomega) {
			sts := &appsv1.StatefulSet{}
			g.Expect(k8s.Get(ctx, clusters.ChildKey(dc), sts)).To(Succeed())
			sts.Status.ObservedGeneration = sts.Generation
			g.Expect(k8s.Status().Update(ctx, sts)).To(Succeed())
		}).Should(Succeed())
	}
	// makeClaim stores a claim in ns, changed by opts (see memberClaim).
	makeClaim := func(ctx SpecContext, ns, name string, opts ...claimOption) *corev1.PersistentVolumeClaim {
		claim := memberClaim(name, opts...)
		claim.Namespace = ns
		claim.Spec = corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: ptr.To("standard"),
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			},
		}
		Expect(k8s.Create(ctx, claim)).To(Succeed())
		return claim
	}
	// claimState is "deleted" for a claim marked deleted or gone, else its owners' kinds and UIDs.
	claimState := func(ctx SpecContext, ns, name string) string {
		claim := &corev1.PersistentVolumeClaim{}
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, claim)
		if apierrors.IsNotFound(err) || (err == nil && claim.DeletionTimestamp != nil) {
			return "deleted"
		}
		Expect(err).NotTo(HaveOccurred())
		state := "kept"
		for _, ref := range claim.OwnerReferences {
			state += " " + ref.Kind + "/" + string(ref.UID)
		}
		return state
	}

	It("deletes with whenDeleted: Delete only the member claims, never a look-alike", func(ctx SpecContext) {
		ns := k8s.Namespace(ctx, "dbc-delete-")
		dc := newCluster("db", withNamespace(ns), withWhenDeleted(databasev1alpha1.DeletePVC))
		sts := clusters.Create(ctx, dc)
		neighbour := newCluster("db-1", withNamespace(ns), withWhenDeleted(databasev1alpha1.DeletePVC))
		clusters.Create(ctx, neighbour)
		stsRef := ownedBy("apps/v1", "StatefulSet", "db", sts.UID)
		backup := ownedBy("backup.example.com/v1", "Backup", "nightly", "backup-uid")
		for _, name := range []string{"data-db-0", "data-db-1", "data-db-7"} {
			makeClaim(ctx, ns, name)
		}
		makeClaim(ctx, ns, "data-db-2", stsRef)
		makeClaim(ctx, ns, "data-db-0-copy")
		makeClaim(ctx, ns, "data-db-01")
		makeClaim(ctx, ns, "data-db-3", withClaimLabels(map[string]string{"app": "copied-by-hand"}))
		makeClaim(ctx, ns, "data-db-4", backup)
		makeClaim(ctx, ns, "data-db-5", stsRef, backup)
		makeClaim(ctx, ns, "data-db-6", ownedBy("apps/v1", "StatefulSet", "db", "uid-of-an-earlier-db"))
		makeClaim(ctx, ns, "data-db-1-0", withClaimLabels(neighbour.Labels()))
		makeClaim(ctx, ns, "data-db-1-1") // db's labels, the neighbour's name

		k8s.DeleteAndWait(ctx, dc)
		want := map[string]string{
			"data-db-0": "deleted", "data-db-1": "deleted", "data-db-7": "deleted", "data-db-2": "deleted",
			"data-db-0-copy": "kept", "data-db-01": "kept", "data-db-3": "kept",
			"data-db-4": "kept Backup/backup-uid", "data-db-5": "kept StatefulSet/" + string(sts.UID) + " Backup/backup-uid",
			"data-db-6": "kept StatefulSet/uid-of-an-earlier-db", "data-db-1-0": "kept", "data-db-1-1": "kept",
		}
		got := map[string]string{}
		for name := range want {
			got[name] = claimState(ctx, ns, name)
		}
		Expect(got).To(Equal(want))
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(neighbour), neighbour)).To(Succeed())
		Expect(neighbour.DeletionTimestamp).To(BeNil())
	})

	It("keeps every claim with Retain and releases the member claims from the StatefulSet", func(ctx SpecContext) {
		ns := k8s.Namespace(ctx, "dbc-delete-")
		dc := newCluster("db", withNamespace(ns))
		sts := clusters.Create(ctx, dc)
		stsRef := ownedBy("apps/v1", "StatefulSet", "db", sts.UID)
		makeClaim(ctx, ns, "data-db-0", stsRef)
		makeClaim(ctx, ns, "data-db-1", stsRef, ownedBy("v1", "Pod", "db-1", "pod-uid"))
		makeClaim(ctx, ns, "data-db-2")
		makeClaim(ctx, ns, "data-db-0-copy", stsRef) // not a member: its reference is not ours to change

		k8s.DeleteAndWait(ctx, dc)
		Expect(map[string]string{
			"data-db-0":      claimState(ctx, ns, "data-db-0"),
			"data-db-1":      claimState(ctx, ns, "data-db-1"),
			"data-db-2":      claimState(ctx, ns, "data-db-2"),
			"data-db-0-copy": claimState(ctx, ns, "data-db-0-copy"),
		}).To(Equal(map[string]string{
			"data-db-0": "kept", "data-db-1": "kept Pod/pod-uid", "data-db-2": "kept",
			"data-db-0-copy": "kept StatefulSet/" + string(sts.UID),
		}))
	})

	It("brings a stale retention policy in line with the spec before the finalizer goes, also when paused", func(ctx SpecContext) {
		ns := k8s.Namespace(ctx, "dbc-delete-")
		dc := newCluster("db", withNamespace(ns), withWhenDeleted(databasev1alpha1.DeletePVC))
		sts := clusters.Create(ctx, dc)
		observe(ctx, dc)
		stsRef := ownedBy("apps/v1", "StatefulSet", "db", sts.UID)
		for _, name := range []string{"data-db-0", "data-db-1", "data-db-2"} {
			makeClaim(ctx, ns, name, stsRef)
		}

		By("pausing, then asking to keep the data: the StatefulSet still says Delete")
		for _, edit := range []string{`{"spec":{"paused":true}}`, `{"spec":{"pvcRetentionPolicy":{"whenDeleted":"Retain"}}}`} {
			Expect(k8s.Patch(ctx, dc, client.RawPatch(types.MergePatchType, []byte(edit)))).To(Succeed())
		}
		Consistently(func(g Gomega) appsv1.PersistentVolumeClaimRetentionPolicyType {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(sts), sts)).To(Succeed())
			return sts.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted
		}, time.Second).Should(Equal(appsv1.DeletePersistentVolumeClaimRetentionPolicyType))

		By("deleting: the finalizer sets Retain and waits for the StatefulSet controller to observe it")
		Expect(k8s.Delete(ctx, dc)).To(Succeed())
		Eventually(func(g Gomega) appsv1.PersistentVolumeClaimRetentionPolicyType {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(sts), sts)).To(Succeed())
			return sts.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted
		}).Should(Equal(appsv1.RetainPersistentVolumeClaimRetentionPolicyType))
		Consistently(func(g Gomega) []string {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
			return []string{claimState(ctx, ns, "data-db-0"), claimState(ctx, ns, "data-db-2")}
		}, 3*time.Second).Should(Equal([]string{"kept StatefulSet/" + string(sts.UID), "kept StatefulSet/" + string(sts.UID)}))

		By("the StatefulSet controller observed it: the claims are released and the cluster goes")
		observe(ctx, dc)
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(dc), &databasev1alpha1.DatabaseCluster{}))
		}).Should(BeTrue())
		for _, name := range []string{"data-db-0", "data-db-1", "data-db-2"} {
			Expect(claimState(ctx, ns, name)).To(Equal("kept"), name)
		}
	})

	It("turns Degraded when the StatefulSet controller cannot create a pod, and back once the pods exist", func(ctx SpecContext) {
		ns := k8s.Namespace(ctx, "dbc-delete-")
		dc := newCluster("db", withNamespace(ns), withReplicas(1))
		sts := clusters.Create(ctx, dc)
		By("the StatefulSet controller's status and event, as it writes them when a quota refuses the pod")
		Eventually(func(g Gomega) {
			current := &appsv1.StatefulSet{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(sts), current)).To(Succeed())
			current.Status = appsv1.StatefulSetStatus{ObservedGeneration: current.Generation, Replicas: 0}
			g.Expect(k8s.Status().Update(ctx, current)).To(Succeed())
		}).Should(Succeed())
		note := `create Pod db-0 in StatefulSet db failed error: pods "db-0" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=0, limited: pods=0`
		Expect(k8s.Create(ctx, &corev1.Event{
			ObjectMeta: metav1.ObjectMeta{Name: "db.failed-create", Namespace: ns},
			InvolvedObject: corev1.ObjectReference{
				Kind: "StatefulSet", APIVersion: "apps/v1", Namespace: ns, Name: sts.Name, UID: sts.UID,
			},
			Reason: "FailedCreate", Message: note, Type: corev1.EventTypeWarning,
			FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(), Count: 3,
			Source: corev1.EventSource{Component: "statefulset-controller"},
		})).To(Succeed())
		degraded := func(g Gomega) []string {
			current := &databasev1alpha1.DatabaseCluster{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), current)).To(Succeed())
			c := meta.FindStatusCondition(current.Status.Conditions, conditions.Degraded)
			g.Expect(c).NotTo(BeNil())
			return []string{string(c.Status), c.Reason, c.Message}
		}
		// The event triggers no reconcile; the missing-pod recheck (30 s) or any change does.
		touch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"example.com/touch":"1"}}}`))
		Expect(k8s.Patch(ctx, dc, touch)).To(Succeed())
		Eventually(degraded).Should(Equal([]string{"True", "PodCreateFailed", "the StatefulSet cannot create every pod: " + note}))

		By("the pod exists: the failure is history")
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "db-0", Namespace: ns, Labels: dc.Labels()},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: specs.ContainerName, Image: dc.Spec.Image}}},
		}
		Expect(k8s.Create(ctx, pod)).To(Succeed())
		Eventually(degraded).Should(Equal([]string{"False", "AsExpected", "every child is as specified"}))
	})

	It("reports a StatefulSet the API server refuses in Degraded within one reconcile, and does not retry it", func(ctx SpecContext) {
		ns := k8s.Namespace(ctx, "dbc-delete-")
		dc := newCluster("db", withNamespace(ns))
		// The CRD cannot check the downward API's field paths; the API server refuses the pod template.
		dc.Spec.Env = []corev1.EnvVar{{Name: "NODE", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.noSuchField"},
		}}}
		Expect(k8s.Create(ctx, dc)).To(Succeed())
		Eventually(func(g Gomega) []string {
			current := &databasev1alpha1.DatabaseCluster{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), current)).To(Succeed())
			c := meta.FindStatusCondition(current.Status.Conditions, conditions.Degraded)
			g.Expect(c).NotTo(BeNil())
			return []string{string(c.Status), c.Reason, c.Message}
		}).Should(Equal([]string{"True", "ReconcileFailed",
			`creating StatefulSet ` + ns + `/db: StatefulSet.apps "db" is invalid: spec.template.spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: Invalid value: "spec.noSuchField": error converting fieldPath: field label not supported: spec.noSuchField`}))
		// One attempt per reconcile that an event triggered (the cluster's creation, the creation
		// of its Services and PDB); a retried write would add ~10 attempts in 5 s of back-off.
		// The reconciles those events triggered may still be running when Degraded shows: wait
		// for a second without a write before counting.
		var before map[string]int
		Eventually(func() bool {
			first := writes.count(ns)
			time.Sleep(time.Second)
			before = writes.count(ns)
			return maps.Equal(first, before)
		}).Should(BeTrue())
		Expect(before["create StatefulSet"]).To(BeNumerically("<=", 2), "no retry loop: %v", before)
		Consistently(func() map[string]int { return writes.count(ns) }, 5*time.Second).Should(Equal(before),
			"no write at all while nothing changes: %v", before)
	})
})

// writeCounter counts the writes of the operator's client by namespace, verb and kind.
type writeCounter struct {
	client.Client
	mu     sync.Mutex
	writes map[string]map[string]int
}

func (w *writeCounter) add(obj client.Object, verb string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.writes == nil {
		w.writes = map[string]map[string]int{}
	}
	if w.writes[obj.GetNamespace()] == nil {
		w.writes[obj.GetNamespace()] = map[string]int{}
	}
	kind := fmt.Sprintf("%T", obj)
	w.writes[obj.GetNamespace()][verb+" "+kind[strings.LastIndex(kind, ".")+1:]]++
}

// count returns a copy of the counts of one namespace, e.g. {"create StatefulSet": 1}.
func (w *writeCounter) count(ns string) map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.writes[ns])
}

func (w *writeCounter) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	w.add(obj, "create")
	return w.Client.Create(ctx, obj, opts...)
}

func (w *writeCounter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	w.add(obj, "patch")
	return w.Client.Patch(ctx, obj, patch, opts...)
}

func (w *writeCounter) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	w.add(obj, "update")
	return w.Client.Update(ctx, obj, opts...)
}

func (w *writeCounter) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	w.add(obj, "delete")
	return w.Client.Delete(ctx, obj, opts...)
}
