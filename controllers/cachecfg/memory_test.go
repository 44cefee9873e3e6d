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

package cachecfg

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/seed1b407122/database-operator/api/labels"
	"github.com/seed1b407122/database-operator/controllers/internal/heapsize"
)

// storedClaim is a member claim as the API server serves it once bound: the StatefulSet
// controller's labels and owner, the annotations of the volume binder and the provisioner, the
// protection finalizer, managed fields and a bound status.
func storedClaim(i int) *corev1.PersistentVolumeClaim {
	created := metav1.NewTime(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	storage := corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}
	modes := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	fields := metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{".":{},"f:pv.kubernetes.io/bind-completed":{},` +
		`"f:pv.kubernetes.io/bound-by-controller":{},"f:volume.beta.kubernetes.io/storage-provisioner":{},` +
		`"f:volume.kubernetes.io/storage-provisioner":{}},"f:labels":{".":{},"f:app.kubernetes.io/instance":{},` +
		`"f:app.kubernetes.io/managed-by":{},"f:app.kubernetes.io/name":{}}},"f:spec":{"f:accessModes":{},` +
		`"f:resources":{"f:requests":{".":{},"f:storage":{}}},"f:storageClassName":{},"f:volumeMode":{},"f:volumeName":{}}}`)
	name := fmt.Sprintf("data-db-%05d-0", i)
	return &corev1.PersistentVolumeClaim{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "bench", UID: "0f5b8e0c-2a77-4c3e-9d0e-6d3f2b1a9c11", ResourceVersion: "123456",
			CreationTimestamp: created,
			Labels: map[string]string{labels.Name: "database", labels.Instance: "db-" + name,
				labels.ManagedBy: labels.ManagedByValue},
			Annotations: map[string]string{
				"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes",
				"volume.beta.kubernetes.io/storage-provisioner": "csi.database.seed1b407122.io",
				"volume.kubernetes.io/storage-provisioner":      "csi.database.seed1b407122.io",
				"volume.kubernetes.io/selected-node":            "node-1",
			},
			Finalizers: []string{"kubernetes.io/pvc-protection"},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
					Time: &created, FieldsType: "FieldsV1", FieldsV1: fields},
				{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
					Time: &created, FieldsType: "FieldsV1", FieldsV1: fields, Subresource: "status"},
			},
		},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: modes, Resources: corev1.VolumeResourceRequirements{Requests: storage},
			StorageClassName: ptr.To("standard"), VolumeMode: ptr.To(corev1.PersistentVolumeFilesystem),
			VolumeName: "pvc-0f5b8e0c-2a77-4c3e-9d0e-6d3f2b1a9c11"},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, AccessModes: modes, Capacity: storage},
	}
}

// cachedClaims decodes n claims from their protobuf encoding, as a watch delivers them, and
// keeps what transform returns, as the informer's store does.
func cachedClaims(b *testing.B, n int, transform func(any) (any, error)) []any {
	b.Helper()
	kept := make([]any, 0, n)
	for i := range n {
		data, err := storedClaim(i).Marshal()
		if err != nil {
			b.Fatal(err)
		}
		claim := &corev1.PersistentVolumeClaim{}
		if err := claim.Unmarshal(data); err != nil {
			b.Fatal(err)
		}
		obj, err := transform(claim)
		if err != nil {
			b.Fatal(err)
		}
		kept = append(kept, obj)
	}
	return kept
}

// BenchmarkClaimCacheMemory reports the heap that 1,000 cached claims of 1,000 clusters hold,
// with the default transform (StripMeta: without managed fields) and with TrimClaim, each run
// with empty tables of shared values (NewShared), as a new manager's cache. Each claim's labels are its cluster's, held here by the claim
// alone; in the cache they are shared with the cluster's StatefulSet and Services
// (BenchmarkClusterCacheMemory's "Cluster").
func BenchmarkClaimCacheMemory(b *testing.B) {
	const claims = 1000
	for _, tc := range []struct {
		name      string
		transform func(shared *Shared, obj any) (any, error)
	}{{"StripMeta", func(_ *Shared, obj any) (any, error) { return StripMeta(obj) }}, {"TrimClaim", (*Shared).TrimClaim}} {
		b.Run(tc.name, func(b *testing.B) {
			var held float64
			for b.Loop() {
				shared := NewShared()
				before := heapsize.AfterGC()
				kept := cachedClaims(b, claims, func(obj any) (any, error) { return tc.transform(shared, obj) })
				held = float64(heapsize.AfterGC()) - float64(before)
				runtime.KeepAlive(kept)
			}
			b.ReportMetric(held, "heap-bytes/1000-claims")
		})
	}
}
