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
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/cachecfg"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
	"github.com/seed1b407122/database-operator/controllers/storageagent"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// agentImage is the storage agent image the specs' operator is given.
const agentImage = "registry.example.com/database-operator@sha256:0123"

// fakeDisks are the data file systems of the specs' members, by pod name: each member's real
// storage agent (storageagent.Serve on 127.0.0.1) reports what the spec sets here.
type fakeDisks struct {
	mu    sync.Mutex
	usage map[string]storageagent.Usage
	addrs map[string]string
}

// serve starts the storage agent of member pod on 127.0.0.1 until the spec ends.
func (d *fakeDisks) serve(pod string) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_ = storageagent.Serve(ctx, l, databasev1alpha1.DataMountPath, func(string) (storageagent.Usage, error) { return d.get(pod), nil })
	}()
	DeferCleanup(cancel)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.addrs[pod] = l.Addr().String()
}

// refuse makes member pod's agent an address where nothing listens, once the spec ends.
func (d *fakeDisks) refuse(pod string) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	Expect(l.Close()).To(Succeed())
	d.mu.Lock()
	defer d.mu.Unlock()
	d.addrs[pod] = l.Addr().String()
}

func (d *fakeDisks) set(pod string, used, capacity int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.usage[pod] = storageagent.Usage{UsedBytes: used, CapacityBytes: capacity}
}

func (d *fakeDisks) get(pod string) storageagent.Usage {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.usage[pod]
}

// address is the specs' AgentAddress: the member's agent on 127.0.0.1 (envtest's pods run
// nothing and have no IP).
func (d *fakeDisks) address(pod *corev1.Pod) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.addrs[pod.Name]
}

// The envtest specs of spec.storage.autoGrow. envtest has no kubelet, StatefulSet controller or
// resizer: the spec makes the member pods (with the agent's sidecar, Running), binds the claims
// and writes the capacity an expansion reaches; the members' usage comes from the real agent
// code on 127.0.0.1. The operator's clock is a fake one, moved on by the spec past the
// measurement interval and the minimum interval between growths.
var _ = Describe("DatabaseCluster storage auto-grow", Ordered, Label("integration"), func() {
	clock := clocktesting.NewFakePassiveClock(time.Now().Truncate(time.Second))
	disks := &fakeDisks{usage: map[string]storageagent.Usage{}, addrs: map[string]string{}}
	k8s := testenv.StartInBeforeAll(func(mgr ctrl.Manager) error {
		return (&Reconciler{ReconcilerBase: testenv.ReconcilerBase(mgr), PodReadyTimeout: podReadyTimeout, Clock: clock,
			AgentImage: agentImage, AgentAddress: disks.address, MeasureInterval: 200 * time.Millisecond}).SetupWithManager(mgr)
	})
	clusters := testenv.Kind[*databasev1alpha1.DatabaseCluster, *appsv1.StatefulSet]{
		Env: k8s, Name: "DatabaseCluster", ChildName: (*databasev1alpha1.DatabaseCluster).StatefulSetName,
	}
	// tick moves the operator's clock on past the measurement interval: the next pass (within
	// MeasureInterval of real time) reads the agents again.
	tick := func(d time.Duration) { clock.SetTime(clock.Now().Add(d)) }

	storageClass := func(ctx SpecContext, name string, expandable bool) {
		sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: "csi.example.com",
			AllowVolumeExpansion: ptr.To(expandable)}
		Expect(k8s.Create(ctx, sc)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8s.Delete(ctx, sc))).To(Succeed()) })
	}
	// member makes member ordinal: its claim bound at 1Gi and its pod Running with the agent.
	member := func(ctx SpecContext, dc *databasev1alpha1.DatabaseCluster, sts *appsv1.StatefulSet, ordinal int32, serve ...bool) {
		claim := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: dc.ClaimName(ordinal), Namespace: dc.Namespace, Labels: dc.Labels()},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, StorageClassName: ptr.To(dc.Spec.Storage.StorageClassName),
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}
		Expect(k8s.Create(ctx, claim)).To(Succeed())
		claim.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, AccessModes: claim.Spec.AccessModes,
			Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}
		Expect(k8s.Status().Update(ctx, claim)).To(Succeed())
		name := dc.StatefulSetName() + "-" + strconv.Itoa(int(ordinal))
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: dc.Namespace, Labels: dc.Labels(),
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(sts, appsv1.SchemeGroupVersion.WithKind("StatefulSet"))}},
			Spec: corev1.PodSpec{InitContainers: []corev1.Container{specs.BuildStorageAgent(agentImage)},
				Containers: []corev1.Container{{Name: specs.ContainerName, Image: dc.Spec.Image}},
				Volumes: []corev1.Volume{{Name: databasev1alpha1.DataVolumeName, VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim.Name}}}}},
		}
		Expect(k8s.Create(ctx, pod)).To(Succeed())
		running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}
		pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0." + strconv.Itoa(int(ordinal)+1), Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}},
			InitContainerStatuses: []corev1.ContainerStatus{{Name: databasev1alpha1.StorageAgentContainerName, State: running, Started: ptr.To(true)}},
			ContainerStatuses:     []corev1.ContainerStatus{{Name: specs.ContainerName, State: running, Ready: true, Started: ptr.To(true)}}}
		Expect(k8s.Status().Update(ctx, pod)).To(Succeed())
		if len(serve) > 0 && !serve[0] {
			disks.refuse(name)
			return
		}
		disks.serve(name)
	}
	requests := func(ctx SpecContext, ns string) func(Gomega) map[string]string {
		return func(g Gomega) map[string]string {
			var list corev1.PersistentVolumeClaimList
			g.Expect(k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
			out := map[string]string{}
			for _, c := range list.Items {
				q := c.Spec.Resources.Requests[corev1.ResourceStorage]
				out[c.Name] = q.String() + " grown-at=" + c.Annotations[databasev1alpha1.AutoGrownAtAnnotation]
			}
			return out
		}
	}
	expanded := func(ctx SpecContext, ns, claim, size string) {
		Eventually(func(g Gomega) {
			c := &corev1.PersistentVolumeClaim{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: claim}, c)).To(Succeed())
			c.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}
			g.Expect(k8s.Status().Update(ctx, c)).To(Succeed())
		}).Should(Succeed())
	}
	growEvents := func(ctx SpecContext, dc *databasev1alpha1.DatabaseCluster) func(Gomega) []string {
		return func(g Gomega) []string {
			return slices.DeleteFunc(k8s.EventsAbout(ctx, "DatabaseCluster", dc, testenv.TypeReasonNote)(g), func(e string) bool {
				return !strings.Contains(e, EventStorageGrown+":") && !strings.Contains(e, EventStorageAtMaxSize+":") &&
					!strings.Contains(e, EventExpansionNotAllowed+":")
			})
		}
	}
	members := func(ctx SpecContext, dc *databasev1alpha1.DatabaseCluster) func(Gomega) []databasev1alpha1.MemberStorage {
		return func(g Gomega) []databasev1alpha1.MemberStorage {
			cur := clusters.Current(ctx, dc)(g)
			if cur.Status.Storage == nil {
				return nil
			}
			return cur.Status.Storage.Members
		}
	}
	series := func(name string, dc *databasev1alpha1.DatabaseCluster) func(Gomega) map[string]float64 {
		return func(g Gomega) map[string]float64 {
			got, err := testenv.Gauges(name, map[string]string{"namespace": dc.Namespace, "name": dc.Name})
			g.Expect(err).NotTo(HaveOccurred())
			return got
		}
	}

	It("grows the fullest member's claim once, not again within the interval, and stops at maxSize saying so", func(ctx SpecContext) {
		ns := k8s.Namespace(ctx, "grow-")
		storageClass(ctx, ns+"-expandable", true)
		dc := newCluster("db", withNamespace(ns), withReplicas(2))
		dc.Spec.Storage.StorageClassName = ns + "-expandable"
		dc.Spec.Storage.AutoGrow = &databasev1alpha1.AutoGrowSpec{MaxSize: resource.MustParse("1400Mi"), MinIntervalSeconds: ptr.To[int32](60)}
		sts := clusters.Create(ctx, dc)

		By("the StatefulSet's pods carry the storage agent, from the operator's image")
		Eventually(func(g Gomega) []corev1.Container {
			return clusters.Child(ctx, dc)(g).Spec.Template.Spec.InitContainers
		}).Should(HaveExactElements(HaveField("Image", agentImage)))

		By("both members half full: measured, below the threshold, in the status and the metrics")
		disks.set("db-0", 500, 1000)
		disks.set("db-1", 400, 1000)
		member(ctx, dc, sts, 0)
		member(ctx, dc, sts, 1)
		tick(time.Second)
		measured := metav1.NewTime(clock.Now())
		Eventually(members(ctx, dc)).Should(Equal([]databasev1alpha1.MemberStorage{
			{Name: "db-0", UsedBytes: 500, CapacityBytes: 1000, MeasuredAt: measured},
			{Name: "db-1", UsedBytes: 400, CapacityBytes: 1000, MeasuredAt: measured}}))
		Eventually(k8s.Condition(ctx, dc, "StorageAutoGrow")).Should(Equal([]string{"True", "BelowThreshold", "2 measured members are below 80% full"}))
		Eventually(series("database_operator_databasecluster_member_storage_used_bytes", dc)).Should(Equal(map[string]float64{
			`{member="db-0"}`: 500, `{member="db-1"}`: 400}))
		Eventually(series("database_operator_databasecluster_member_storage_capacity_bytes", dc)).Should(Equal(map[string]float64{
			`{member="db-0"}`: 1000, `{member="db-1"}`: 1000}))

		By("db-0 at 90%: its claim alone grows by 20%, stamped with the time; the spec is left as written")
		disks.set("db-0", 900, 1000)
		tick(time.Second)
		firstGrowth := clock.Now()
		grownAt := firstGrowth.UTC().Format(time.RFC3339)
		Eventually(requests(ctx, ns)).Should(Equal(map[string]string{
			"data-db-0": "1229Mi grown-at=" + grownAt, "data-db-1": "1Gi grown-at="}))
		grew := "Normal StorageGrown: Grew claim data-db-0 from 1Gi to 1229Mi: used 90% >= threshold 80%"
		Eventually(growEvents(ctx, dc)).Should(Equal([]string{grew}))
		Eventually(k8s.Condition(ctx, dc, "StorageAutoGrow")).Should(Equal([]string{"True", "Growing",
			"claim data-db-0 is 90% full and being expanded to 1229Mi"}))
		Eventually(k8s.Condition(ctx, dc, "Resizing")).Should(Equal([]string{"True", "StorageExpanding",
			"claim data-db-0 is being expanded from 1Gi to 1229Mi"}), "an expansion that never finishes feeds DatabaseClusterStorageGrowthStuck")
		Expect(clusters.Current(ctx, dc)(Default).Spec.Storage.Size).To(Equal("1Gi"))
		template, ok := cachecfg.ClaimTemplateSize(clusters.Child(ctx, dc)(Default), databasev1alpha1.DataVolumeName)
		Expect(ok).To(BeTrue())
		Expect(template).To(Equal(resource.MustParse("1Gi")))

		By("the expansion is done and db-0 still 90% full: no growth within minIntervalSeconds")
		expanded(ctx, ns, "data-db-0", "1229Mi")
		tick(time.Second)
		Eventually(k8s.Condition(ctx, dc, "Resizing")).Should(Equal([]string{"False", "StorageAsRequested", "every bound claim has at least 1Gi"}))
		next := firstGrowth.Add(time.Minute).UTC().Format(time.RFC3339)
		Eventually(k8s.Condition(ctx, dc, "StorageAutoGrow")).Should(Equal([]string{"True", "Growing",
			"claim data-db-0 is 90% full and grows again after " + next + " (minIntervalSeconds 60)"}))
		Consistently(requests(ctx, ns), 2*time.Second).Should(Equal(map[string]string{
			"data-db-0": "1229Mi grown-at=" + grownAt, "data-db-1": "1Gi grown-at="}))
		Expect(growEvents(ctx, dc)(Default)).To(Equal([]string{grew}))

		By("the interval passed: the last growth stops at maxSize; then at maxSize and over the threshold it says so")
		tick(time.Minute)
		grownAt2 := clock.Now().UTC().Format(time.RFC3339)
		Eventually(requests(ctx, ns)).Should(Equal(map[string]string{
			"data-db-0": "1400Mi grown-at=" + grownAt2, "data-db-1": "1Gi grown-at="}))
		By("expanded, with no time passed: db-0 is measured again (its file system grew), not judged on the measurement before")
		disks.set("db-0", 900, 1400)
		expanded(ctx, ns, "data-db-0", "1400Mi")
		Eventually(k8s.Condition(ctx, dc, "StorageAutoGrow")).Should(Equal([]string{"True", "BelowThreshold", "2 measured members are below 80% full"}))
		Expect(growEvents(ctx, dc)(Default)).To(Equal([]string{grew,
			"Normal StorageGrown: Grew claim data-db-0 from 1229Mi to 1400Mi: used 90% >= threshold 80%"}), "no AtMaxSize from the old measurement")
		disks.set("db-0", 1260, 1400)
		tick(time.Second)
		atMax := "claim data-db-0 is at maxSize 1400Mi and 90% full"
		Eventually(k8s.Condition(ctx, dc, "StorageAutoGrow")).Should(Equal([]string{"False", "AtMaxSize", atMax}))
		Eventually(growEvents(ctx, dc)).Should(Equal([]string{grew,
			"Normal StorageGrown: Grew claim data-db-0 from 1229Mi to 1400Mi: used 90% >= threshold 80%",
			"Warning AtMaxSize: Claim data-db-0 is at maxSize 1400Mi and 90% full"}))
		Eventually(series("database_operator_databasecluster_storage_full_at_max_size_ratio", dc)).Should(Equal(map[string]float64{"{}": 0.9}))
		tick(time.Hour)
		Consistently(requests(ctx, ns), 2*time.Second).Should(Equal(map[string]string{
			"data-db-0": "1400Mi grown-at=" + grownAt2, "data-db-1": "1Gi grown-at="}), "never past maxSize")
		Expect(clusters.Current(ctx, dc)(Default).Spec.Storage.Size).To(Equal("1Gi"))

		By("autoGrow removed: the condition, the status and the series go; the claims keep their size")
		clusters.Update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Storage.AutoGrow = nil })
		Eventually(func(g Gomega) []metav1.Condition { return clusters.Current(ctx, dc)(g).Status.Conditions }).
			ShouldNot(ContainElement(HaveField("Type", "StorageAutoGrow")))
		Eventually(members(ctx, dc)).Should(BeNil())
		Eventually(series("database_operator_databasecluster_member_storage_used_bytes", dc)).Should(BeEmpty())
		Consistently(requests(ctx, ns), time.Second).Should(Equal(map[string]string{
			"data-db-0": "1400Mi grown-at=" + grownAt2, "data-db-1": "1Gi grown-at="}), "never shrunk back to spec.storage.size")
	})

	It("grows nothing when the StorageClass does not allow expansion, nor a claim it does not control, and says why", func(ctx SpecContext) {
		ns := k8s.Namespace(ctx, "nogrow-")
		storageClass(ctx, ns+"-fixed", false)
		dc := newCluster("db", withNamespace(ns), withReplicas(2))
		dc.Spec.Storage.StorageClassName = ns + "-fixed"
		dc.Spec.Storage.AutoGrow = &databasev1alpha1.AutoGrowSpec{MaxSize: resource.MustParse("10Gi"), MinIntervalSeconds: ptr.To[int32](60)}
		sts := clusters.Create(ctx, dc)
		disks.set("db-0", 950, 1000)
		member(ctx, dc, sts, 0)

		notAllowed := "claim data-db-0 is 95% full and StorageClass " + ns + "-fixed does not allow volume expansion (allowVolumeExpansion)"
		tick(time.Second)
		Eventually(k8s.Condition(ctx, dc, "StorageAutoGrow")).Should(Equal([]string{"False", "ExpansionNotAllowed", notAllowed}))
		Eventually(growEvents(ctx, dc)).Should(Equal([]string{"Warning ExpansionNotAllowed: C" + notAllowed[1:]}))
		Consistently(requests(ctx, ns), 2*time.Second).Should(Equal(map[string]string{"data-db-0": "1Gi grown-at="}))

		By("db-1's claim is owned by another controller: full, on an expandable class, and still never touched")
		storageClass(ctx, ns+"-expandable", true)
		other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "backup-tool", Namespace: ns}}
		Expect(k8s.Create(ctx, other)).To(Succeed())
		foreign := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: dc.ClaimName(1), Namespace: ns, Labels: dc.Labels(),
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: other.Name, UID: other.UID}}},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				StorageClassName: ptr.To(ns + "-expandable"),
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
		}
		Expect(k8s.Create(ctx, foreign)).To(Succeed())
		foreign.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound,
			Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}
		Expect(k8s.Status().Update(ctx, foreign)).To(Succeed())
		disks.set("db-1", 990, 1000)
		tick(time.Second)
		Consistently(requests(ctx, ns), 2*time.Second).Should(Equal(map[string]string{"data-db-0": "1Gi grown-at=", "data-db-1": "1Gi grown-at="}))
	})

	It("says which member's agent cannot be read, and grows nothing on a guess", func(ctx SpecContext) {
		ns := k8s.Namespace(ctx, "noagent-")
		storageClass(ctx, ns+"-expandable", true)
		dc := newCluster("db", withNamespace(ns), withReplicas(2))
		dc.Spec.Storage.StorageClassName = ns + "-expandable"
		dc.Spec.Storage.AutoGrow = &databasev1alpha1.AutoGrowSpec{MaxSize: resource.MustParse("10Gi")}
		sts := clusters.Create(ctx, dc)
		disks.set("db-0", 100, 1000)
		member(ctx, dc, sts, 0)
		member(ctx, dc, sts, 1, false)
		tick(time.Second)
		Eventually(k8s.Condition(ctx, dc, "StorageAutoGrow")).Should(HaveExactElements("False", "UsageUnknown",
			And(HavePrefix("cannot read the storage agent of db-1: "), HaveSuffix("connect: connection refused"))))
		Eventually(members(ctx, dc)).Should(Equal([]databasev1alpha1.MemberStorage{
			{Name: "db-0", UsedBytes: 100, CapacityBytes: 1000, MeasuredAt: metav1.NewTime(clock.Now())}}))
		Consistently(requests(ctx, ns), time.Second).Should(Equal(map[string]string{"data-db-0": "1Gi grown-at=", "data-db-1": "1Gi grown-at="}))
	})
})
