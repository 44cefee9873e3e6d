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

package databasebackup

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/databasecluster"
	"github.com/seed1b407122/database-operator/controllers/operator"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// snapshotModule ships the VolumeSnapshot CRDs (config/crd) with its Go types.
const snapshotModule = "github.com/kubernetes-csi/external-snapshotter/client/v8"

// snapshotCRDs are the CRD files of VolumeSnapshots, their classes and contents, from the module
// the operator builds with: envtest has no snapshot API of its own.
func snapshotCRDs() ([]string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", snapshotModule).Output()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "config", "crd")
	var paths []string
	for _, kind := range []string{"volumesnapshots", "volumesnapshotclasses", "volumesnapshotcontents"} {
		paths = append(paths, filepath.Join(dir, "snapshot.storage.k8s.io_"+kind+".yaml"))
	}
	return paths, nil
}

// setupWithSnapshots installs the snapshot CRDs, then registers the backup controller and the
// DatabaseCluster controller (which scales a cluster held by an Offline backup to zero).
func setupWithSnapshots(mgr ctrl.Manager) error {
	return setupBoth(mgr, testenv.ReconcilerBase(mgr))
}

// setupLagging is setupWithSnapshots with a backup controller whose cache lags (laggingCache).
func setupLagging(mgr ctrl.Manager) error {
	deps := testenv.ReconcilerBase(mgr)
	deps.Client = laggingCache{deps.Client}
	return setupBoth(mgr, deps)
}

// setupBoth installs the snapshot CRDs and registers the backup controller with deps and the
// DatabaseCluster controller.
func setupBoth(mgr ctrl.Manager, deps operator.ReconcilerBase) error {
	paths, err := snapshotCRDs()
	if err != nil {
		return err
	}
	if _, err := envtest.InstallCRDs(mgr.GetConfig(), envtest.CRDInstallOptions{Paths: paths, ErrorIfPathMissing: true}); err != nil {
		return err
	}
	if err := (&Reconciler{ReconcilerBase: deps, ClusterWait: clusterWait}).SetupWithManager(mgr); err != nil {
		return err
	}
	return (&databasecluster.Reconciler{ReconcilerBase: testenv.ReconcilerBase(mgr)}).SetupWithManager(mgr)
}

// laggingCache is the manager's cache as it may be a moment after a rollout ends: it still holds
// every DatabaseCluster as not Available.
type laggingCache struct{ client.Client }

// Get reads obj from the cache; a DatabaseCluster comes with Available False.
func (c laggingCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := c.Client.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	if dc, ok := obj.(*databasev1alpha1.DatabaseCluster); ok {
		meta.SetStatusCondition(&dc.Status.Conditions, metav1.Condition{Type: databasev1alpha1.ConditionAvailable,
			Status: metav1.ConditionFalse, Reason: databasev1alpha1.ReasonReplicasNotReady, Message: "2/3 replicas are ready"})
	}
	return nil
}

// suite holds what the specs of one environment share.
type suite struct {
	c client.Client
}

// namespace creates a namespace of its own for a spec.
func (s suite) namespace(ctx context.Context) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "dbb-"}}
	Expect(s.c.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

// backup reads a backup as the API server holds it.
func (s suite) backup(ctx context.Context, b *databasev1alpha1.DatabaseBackup) func(Gomega) *databasev1alpha1.DatabaseBackup {
	return func(g Gomega) *databasev1alpha1.DatabaseBackup {
		got := &databasev1alpha1.DatabaseBackup{}
		g.Expect(s.c.Get(ctx, client.ObjectKeyFromObject(b), got)).To(Succeed())
		return got
	}
}

// phase waits for the backup's phase and returns the backup then.
func (s suite) phase(ctx context.Context, b *databasev1alpha1.DatabaseBackup, want databasev1alpha1.BackupPhase) *databasev1alpha1.DatabaseBackup {
	var got *databasev1alpha1.DatabaseBackup
	Eventually(func(g Gomega) {
		got = s.backup(ctx, b)(g)
		g.Expect(got.Status.Phase).To(Equal(want))
		g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
	}).Should(Succeed())
	return got
}

// failedWith waits for the backup to fail and checks both conditions, exactly.
func (s suite) failedWith(ctx context.Context, b *databasev1alpha1.DatabaseBackup, reason, message string) {
	got := s.phase(ctx, b, databasev1alpha1.BackupFailed)
	Expect(conditionOf(got.Status.Conditions, "Failed")).To(Equal([]string{"Failed", "True", reason, message}))
	Expect(conditionOf(got.Status.Conditions, "Completed")).To(Equal([]string{"Completed", "False", reason, message}))
	Expect(got.Status.CompletionTime).NotTo(BeNil())
	Eventually(s.events(ctx, b)).Should(ContainElement("Warning Failed: " + message))
}

// events lists the events about the backup as "Type Reason: note".
func (s suite) events(ctx context.Context, b *databasev1alpha1.DatabaseBackup) func(Gomega) []string {
	return func(g Gomega) []string {
		var list eventsv1.EventList
		g.Expect(s.c.List(ctx, &list, client.InNamespace(b.Namespace))).To(Succeed())
		var out []string
		for _, ev := range list.Items {
			if ev.Regarding.Kind == kind && ev.Regarding.Name == b.Name {
				out = append(out, ev.Type+" "+ev.Reason+": "+ev.Note)
			}
		}
		return out
	}
}

// snapshot reads a VolumeSnapshot.
func (s suite) snapshot(ctx context.Context, ns, name string) func(Gomega) *snapshotv1.VolumeSnapshot {
	return func(g Gomega) *snapshotv1.VolumeSnapshot {
		got := &snapshotv1.VolumeSnapshot{}
		g.Expect(s.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, got)).To(Succeed())
		return got
	}
}

// setSnapshotStatus writes a snapshot's status as the snapshot-controller would (envtest has none).
func (s suite) setSnapshotStatus(ctx context.Context, ns, name string, opt snapshotOption) {
	Eventually(func(g Gomega) {
		got := s.snapshot(ctx, ns, name)(g)
		opt(got)
		g.Expect(s.c.Status().Update(ctx, got)).To(Succeed())
	}).Should(Succeed())
}

// cluster reads a DatabaseCluster.
func (s suite) cluster(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) func(Gomega) *databasev1alpha1.DatabaseCluster {
	return func(g Gomega) *databasev1alpha1.DatabaseCluster {
		got := &databasev1alpha1.DatabaseCluster{}
		g.Expect(s.c.Get(ctx, client.ObjectKeyFromObject(dc), got)).To(Succeed())
		return got
	}
}

// statefulSet reads the StatefulSet of a cluster.
func (s suite) statefulSet(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) func(Gomega) *appsv1.StatefulSet {
	return func(g Gomega) *appsv1.StatefulSet {
		got := &appsv1.StatefulSet{}
		g.Expect(s.c.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: dc.StatefulSetName()}, got)).To(Succeed())
		return got
	}
}

// setPods writes the StatefulSet's status as its controller would with n pods Ready (envtest
// has no StatefulSet controller and no kubelet).
func (s suite) setPods(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, n int32) {
	Eventually(func(g Gomega) {
		sts := s.statefulSet(ctx, dc)(g)
		sts.Status = appsv1.StatefulSetStatus{ObservedGeneration: sts.Generation, Replicas: n, ReadyReplicas: n,
			AvailableReplicas: n, CurrentReplicas: n, UpdatedReplicas: n, CurrentRevision: "r1", UpdateRevision: "r1"}
		g.Expect(s.c.Status().Update(ctx, sts)).To(Succeed())
	}).Should(Succeed())
}

// clusterWithClaims creates a cluster and a Bound data claim per member, as the StatefulSet
// and the volume controllers would (envtest has neither).
func (s suite) clusterWithClaims(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) {
	Expect(s.c.Create(ctx, dc)).To(Succeed())
	s.boundClaims(ctx, dc)
}

// boundClaims creates the data claims of every member of dc and marks them Bound.
func (s suite) boundClaims(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) {
	for ordinal := range *dc.Spec.Replicas {
		claim := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: dc.ClaimName(ordinal), Namespace: dc.Namespace, Labels: dc.Labels()},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				StorageClassName: ptr.To(dc.Spec.Storage.StorageClassName),
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(dc.Spec.Storage.Size)}},
			},
		}
		Expect(s.c.Create(ctx, claim)).To(Succeed())
		claim.Status.Phase = corev1.ClaimBound
		Expect(s.c.Status().Update(ctx, claim)).To(Succeed())
	}
}

// availableCluster creates a cluster with its claims and plays its pods until it is Available.
func (s suite) availableCluster(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) {
	s.clusterWithClaims(ctx, dc)
	s.setPods(ctx, dc, *dc.Spec.Replicas)
	Eventually(func(g Gomega) {
		g.Expect(meta.IsStatusConditionTrue(s.cluster(ctx, dc)(g).Status.Conditions, databasev1alpha1.ConditionAvailable)).To(BeTrue())
	}).Should(Succeed())
}

// offlineHold creates, in a namespace of its own, an Available cluster "db" of replicas and an
// Offline backup of it, and waits until the backup holds the cluster (its annotation is set).
func (s suite) offlineHold(ctx context.Context, replicas int32, backup string) (*databasev1alpha1.DatabaseCluster, *databasev1alpha1.DatabaseBackup) {
	ns := s.namespace(ctx)
	dc := inNamespace(ns, newCluster("db", withReplicas(replicas)))
	s.availableCluster(ctx, dc)
	b := inNamespace(ns, newBackup(backup, withMethod(databasev1alpha1.BackupOffline)))
	Expect(s.c.Create(ctx, b)).To(Succeed())
	Eventually(func(g Gomega) map[string]string { return s.cluster(ctx, dc)(g).Annotations }).
		Should(HaveKeyWithValue(databasev1alpha1.OfflineBackupAnnotation, backup))
	return dc, b
}

// inNamespace moves a fixture into ns.
func inNamespace[T client.Object](ns string, obj T) T {
	obj.SetNamespace(ns)
	return obj
}
