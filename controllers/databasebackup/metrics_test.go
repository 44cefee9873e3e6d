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
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// clusterMetrics are the per-cluster series of the operator: the backup and storage series
// this file is about, and the replica series that say the cluster controller knows the cluster.
var clusterMetrics = []string{
	"database_operator_databasecluster_last_backup_completion_timestamp_seconds",
	"database_operator_databasecluster_last_backup_succeeded",
	"database_operator_databasecluster_storage_requested_bytes",
	"database_operator_databasecluster_storage_capacity_bytes",
	"database_operator_databasecluster_replicas",
}

// clusterSeries reads the per-cluster series of cluster name in ns from the manager's registry,
// by metric name.
func clusterSeries(ns, name string) func(Gomega) map[string]float64 {
	return func(g Gomega) map[string]float64 {
		got := map[string]float64{}
		for _, metric := range clusterMetrics {
			series, err := testenv.Gauges(metric, map[string]string{"namespace": ns, "name": name})
			g.Expect(err).NotTo(HaveOccurred())
			for key, value := range series {
				g.Expect(key).To(Equal("{}"), "a per-cluster series has no label but namespace and name")
				got[metric] = value
			}
		}
		return got
	}
}

// The backup controller and the cluster controller together, as the manager runs them: the
// last-backup series of a cluster come from its backups and exist while the cluster does.
var _ = Describe("The per-cluster backup and storage series", Ordered, Label("integration"), func() {
	env := testenv.StartInBeforeAll(setupWithSnapshots)
	var s suite

	BeforeAll(func(ctx context.Context) {
		s = suite{c: env.Client}
		Expect(s.c.Create(ctx, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "standard"}, Provisioner: simDriver})).To(Succeed())
		class := snapshotClass("sim-default", simDriver, true)
		Expect(s.c.Create(ctx, &class)).To(Succeed())
	})

	// completedBackup creates a backup of dc and plays the snapshot-controller until it is
	// Completed; it returns the backup then.
	completedBackup := func(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, name string) *databasev1alpha1.DatabaseBackup {
		b := inNamespace(dc.Namespace, newBackup(name, withCluster(dc.Name)))
		Expect(s.c.Create(ctx, b)).To(Succeed())
		s.phase(ctx, b, databasev1alpha1.BackupRunning)
		s.setSnapshotStatus(ctx, dc.Namespace, b.SnapshotName(0), ready("1Gi"))
		return s.phase(ctx, b, databasev1alpha1.BackupCompleted)
	}
	deleted := func(ctx context.Context, obj client.Object) {
		Expect(s.c.Delete(ctx, obj)).To(Succeed())
		Eventually(func() error { return s.c.Get(ctx, client.ObjectKeyFromObject(obj), obj) }).Should(Satisfy(apierrors.IsNotFound))
	}
	const gi = 1 << 30

	It("follow the backups of the cluster and go with it", func(ctx context.Context) {
		ns := s.namespace(ctx)
		dc := inNamespace(ns, newCluster("db", withReplicas(1)))
		s.clusterWithClaims(ctx, dc)

		By("the requested size at once, the capacity once a claim reports one; no backup series yet")
		Eventually(clusterSeries(ns, "db")).Should(Equal(map[string]float64{
			"database_operator_databasecluster_replicas":                1,
			"database_operator_databasecluster_storage_requested_bytes": gi,
		}))
		claim := &corev1.PersistentVolumeClaim{}
		Expect(s.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: dc.ClaimName(0)}, claim)).To(Succeed())
		claim.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}
		Expect(s.c.Status().Update(ctx, claim)).To(Succeed())
		Eventually(clusterSeries(ns, "db")).Should(HaveKeyWithValue("database_operator_databasecluster_storage_capacity_bytes", float64(gi)))

		By("a Completed backup: its completion time, and success")
		first := completedBackup(ctx, dc, "first")
		firstDone := float64(first.Status.CompletionTime.Unix())
		withBackups := func(completed, succeeded float64) map[string]float64 {
			want := map[string]float64{
				"database_operator_databasecluster_replicas":                1,
				"database_operator_databasecluster_storage_requested_bytes": gi,
				"database_operator_databasecluster_storage_capacity_bytes":  gi,
				"database_operator_databasecluster_last_backup_succeeded":   succeeded,
			}
			if completed != 0 {
				want["database_operator_databasecluster_last_backup_completion_timestamp_seconds"] = completed
			}
			return want
		}
		Eventually(clusterSeries(ns, "db")).Should(Equal(withBackups(firstDone, 1)))

		By("a later Failed backup: failure, the completion time of the Completed one kept")
		second := inNamespace(ns, newBackup("second"))
		Expect(s.c.Create(ctx, second)).To(Succeed())
		s.phase(ctx, second, databasev1alpha1.BackupRunning)
		s.setSnapshotStatus(ctx, ns, second.SnapshotName(0), failed("rpc error: code = Internal desc = disk full"))
		failedAt := s.phase(ctx, second, databasev1alpha1.BackupFailed).Status.CompletionTime
		Expect(failedAt.Unix()).To(BeNumerically(">=", first.Status.CompletionTime.Unix()))
		Eventually(clusterSeries(ns, "db")).Should(Equal(withBackups(firstDone, 0)))

		By("the Failed backup deleted: the Completed one is the last again")
		deleted(ctx, second)
		Eventually(clusterSeries(ns, "db")).Should(Equal(withBackups(firstDone, 1)))

		By("every finished backup deleted: no backup series, the cluster's others stay")
		deleted(ctx, first)
		withoutBackups := withBackups(0, 0)
		delete(withoutBackups, "database_operator_databasecluster_last_backup_succeeded")
		Eventually(clusterSeries(ns, "db")).Should(Equal(withoutBackups))

		By("the cluster deleted while a backup of it is kept: every per-cluster series goes")
		third := completedBackup(ctx, dc, "third")
		Eventually(clusterSeries(ns, "db")).Should(Equal(withBackups(float64(third.Status.CompletionTime.Unix()), 1)))
		deleted(ctx, dc)
		Eventually(clusterSeries(ns, "db")).Should(BeEmpty())
		Expect(s.backup(ctx, third)(Default).Status.Phase).To(Equal(databasev1alpha1.BackupCompleted), "the backup outlives its cluster")
	})

	It("count reconcile errors by reason from 0 for each kind the manager runs", func() {
		for _, kind := range []string{"DatabaseBackup", "DatabaseCluster"} {
			got, err := testenv.Gauges("database_operator_reconcile_errors_total", map[string]string{"kind": kind})
			Expect(err).NotTo(HaveOccurred())
			Expect(got).To(HaveLen(6), fmt.Sprintf("the series of %s: %v", kind, got))
			for _, reason := range []string{"conflict", "invalid", "forbidden", "notfound", "timeout", "other"} {
				Expect(got).To(HaveKey(fmt.Sprintf("{reason=%q}", reason)))
			}
		}
	})
})
