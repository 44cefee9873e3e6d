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
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/api/scheme"
	"github.com/seed1b407122/database-operator/controllers/cachecfg"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
	"github.com/seed1b407122/database-operator/controllers/internal/heapsize"
	"github.com/seed1b407122/database-operator/test/harness/fuzzspec"
)

// protoMessage is a built-in kind as the API server serves it to the manager: protobuf.
type protoMessage interface {
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}

// BenchmarkClusterCacheMemory reports the heap the manager's cache holds for 1,000 clusters of
// the scale benchmark (hack/bench: one replica, 1Gi of storage class "standard"), per kind: each
// object built by the operator's builders with the API server's defaults (fuzzspec), decoded as
// a watch delivers it (protobuf; JSON for the DatabaseCluster, with the status of an Available
// cluster) and kept through the cache's transform for its kind (cachecfg.Options). The claims
// are cachecfg's BenchmarkClaimCacheMemory too. "StatefulSet whole" is the StatefulSet as the
// cache held it before TrimStatefulSet (managed fields dropped only), for comparison. Each kind
// is measured alone, and "Cluster" is all six objects of each cluster together, which share
// their labels and selectors (cachecfg's shared.go); each run starts from empty tables of
// shared values (cachecfg.NewShared), as a new manager's cache does.
func BenchmarkClusterCacheMemory(b *testing.B) {
	const clusters = 1000
	stored := storedClusters(b, clusters)
	kinds, err := scheme.New()
	if err != nil {
		b.Fatal(err)
	}
	decoder := serializer.NewCodecFactory(kinds).UniversalDeserializer()
	var shared *cachecfg.Shared // the tables of the run, made anew by each
	for _, tc := range []struct {
		name string
		keep func(b *testing.B, dc *storedCluster) any
	}{
		{"DatabaseCluster", func(b *testing.B, dc *storedCluster) any { return decodeJSONCluster(b, decoder, dc.cluster) }},
		{"StatefulSet", func(b *testing.B, dc *storedCluster) any {
			return transformed(b, decodeProto(b, dc.statefulSet, &appsv1.StatefulSet{}), shared.TrimStatefulSet)
		}},
		{"StatefulSet whole", func(b *testing.B, dc *storedCluster) any {
			return transformed(b, decodeProto(b, dc.statefulSet, &appsv1.StatefulSet{}), cachecfg.StripMeta)
		}},
		{"Services", func(b *testing.B, dc *storedCluster) any {
			return []any{transformed(b, decodeProto(b, dc.services[0], &corev1.Service{}), shared.TrimService),
				transformed(b, decodeProto(b, dc.services[1], &corev1.Service{}), shared.TrimService)}
		}},
		{"Pod", func(b *testing.B, dc *storedCluster) any {
			return transformed(b, decodeProto(b, dc.pod, &corev1.Pod{}), cachecfg.TrimPod)
		}},
		{"Claim", func(b *testing.B, dc *storedCluster) any {
			return transformed(b, decodeProto(b, dc.claim, &corev1.PersistentVolumeClaim{}), shared.TrimClaim)
		}},
		{"Cluster", func(b *testing.B, dc *storedCluster) any { return cachedCluster(b, decoder, shared, dc) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var held float64
			for b.Loop() {
				kept := make([]any, 0, clusters)
				shared = cachecfg.NewShared()
				before := heapsize.AfterGC()
				for i := range stored {
					kept = append(kept, tc.keep(b, &stored[i]))
				}
				held = float64(heapsize.AfterGC()) - float64(before)
				runtime.KeepAlive(kept)
			}
			b.ReportMetric(held, "heap-bytes/1000-clusters")
		})
	}
}

// BenchmarkClusterCacheTransform reports the CPU and the allocations of decoding one cluster's
// six objects and passing each through its kind's transform, as the informers do for each watch
// event ("Cluster" of BenchmarkClusterCacheMemory, without its measurement of the heap): what
// the transforms' sharing costs, or saves, per event. The clusters come round in turn, so the
// tables of shared values are warm, as in a running manager.
func BenchmarkClusterCacheTransform(b *testing.B) {
	stored := storedClusters(b, 1000)
	kinds, err := scheme.New()
	if err != nil {
		b.Fatal(err)
	}
	decoder := serializer.NewCodecFactory(kinds).UniversalDeserializer()
	shared := cachecfg.NewShared()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		runtime.KeepAlive(cachedCluster(b, decoder, shared, &stored[i%len(stored)]))
		i++
	}
}

// cachedCluster is what the cache holds of one cluster: each object through its kind's
// transform, the objects of the cluster decoded one after the other as their watch events
// come, so that they share what the transforms share (shared, cachecfg's shared.go).
func cachedCluster(b *testing.B, decoder k8sruntime.Decoder, shared *cachecfg.Shared, dc *storedCluster) any {
	return []any{decodeJSONCluster(b, decoder, dc.cluster),
		transformed(b, decodeProto(b, dc.statefulSet, &appsv1.StatefulSet{}), shared.TrimStatefulSet),
		transformed(b, decodeProto(b, dc.services[0], &corev1.Service{}), shared.TrimService),
		transformed(b, decodeProto(b, dc.services[1], &corev1.Service{}), shared.TrimService),
		transformed(b, decodeProto(b, dc.pod, &corev1.Pod{}), cachecfg.TrimPod),
		transformed(b, decodeProto(b, dc.claim, &corev1.PersistentVolumeClaim{}), shared.TrimClaim)}
}

// storedCluster is one cluster and its children, encoded as the API server serves them.
type storedCluster struct {
	cluster, statefulSet, pod, claim []byte
	services                         [2][]byte
}

// storedClusters builds n clusters of the scale benchmark and their children.
func storedClusters(b *testing.B, n int) []storedCluster {
	b.Helper()
	admitter, err := fuzzspec.NewAdmitter()
	if err != nil {
		b.Fatal(err)
	}
	out := make([]storedCluster, n)
	for i := range out {
		dc := newCluster(fmt.Sprintf("db-%05d", i), withReplicas(1))
		dc.Spec.Resources = corev1.ResourceRequirements{}
		if errs, err := admitter.Admit(dc); err != nil || len(errs) > 0 {
			b.Fatalf("the benchmark's cluster is not admitted: %v %v", errs, err)
		}
		sts, err := specs.BuildStatefulSet(dc, specs.Inputs{})
		if err != nil {
			b.Fatal(err)
		}
		withTemplateHash(sts)
		sts = storedAs(b, sts)
		sts.Status = appsv1.StatefulSetStatus{ObservedGeneration: 1, Replicas: 1, ReadyReplicas: 1, CurrentReplicas: 1,
			UpdatedReplicas: 1, AvailableReplicas: 1, CurrentRevision: sts.Name + "-5d4f8c7b9", UpdateRevision: sts.Name + "-5d4f8c7b9",
			CollisionCount: ptr.To[int32](0)}
		dc.Status = computeStatus(dc, observation{statefulSet: cachecfg.ViewStatefulSet(sts)})
		out[i] = storedCluster{
			cluster:     marshalJSON(b, dc),
			statefulSet: marshalProto(b, sts),
			pod:         marshalProto(b, memberPod(b, sts)),
			claim:       marshalProto(b, boundClaim(b, sts)),
			services: [2][]byte{marshalProto(b, storedAs(b, specs.BuildHeadlessService(dc))),
				marshalProto(b, storedAs(b, specs.BuildClientService(dc)))},
		}
	}
	return out
}

// memberPod is the first pod of sts, Running and Ready, as the StatefulSet controller and the
// kubelet leave it.
func memberPod(b *testing.B, sts *appsv1.StatefulSet) *corev1.Pod {
	b.Helper()
	labels := map[string]string{"controller-revision-hash": sts.Status.UpdateRevision,
		"statefulset.kubernetes.io/pod-name": sts.Name + "-0", "apps.kubernetes.io/pod-index": "0"}
	for k, v := range sts.Spec.Template.Labels {
		labels[k] = v
	}
	pod := storedAs(b, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: sts.Name + "-0", Namespace: sts.Namespace, UID: "7c0f0b7e-61a2-4f0e-9a57-0d1c8a9e2b10",
			ResourceVersion: "123456", Labels: labels, Annotations: sts.Spec.Template.Annotations,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: sts.Name, UID: sts.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: sts.Spec.Template.Spec,
	})
	pod.Spec.NodeName = "node-1"
	now := metav1.NewTime(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	for _, t := range []corev1.PodConditionType{"PodReadyToStartContainers", corev1.PodInitialized, corev1.PodReady,
		corev1.ContainersReady, corev1.PodScheduled} {
		pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	for _, c := range pod.Spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Ready: true,
			Started: ptr.To(true), Image: c.Image, ImageID: c.Image + "@sha256:0f5b8e0c", ContainerID: "containerd://0f5b8e0c",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}})
	}
	pod.Status.Phase, pod.Status.PodIP, pod.Status.HostIP, pod.Status.StartTime = corev1.PodRunning, "10.244.0.7", "10.0.0.1", &now
	return pod
}

// boundClaim is the claim of sts's first pod, bound, as the StatefulSet controller creates it
// from the claim template (the template's labels and the selector's) and the volume binder and
// the provisioner leave it.
func boundClaim(b *testing.B, sts *appsv1.StatefulSet) *corev1.PersistentVolumeClaim {
	b.Helper()
	template := sts.Spec.VolumeClaimTemplates[0]
	labels := map[string]string{}
	for k, v := range template.Labels {
		labels[k] = v
	}
	for k, v := range sts.Spec.Selector.MatchLabels {
		labels[k] = v
	}
	name := template.Name + "-" + sts.Name + "-0"
	claim := storedAs(b, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: sts.Namespace, UID: "0f5b8e0c-2a77-4c3e-9d0e-6d3f2b1a9c11",
			ResourceVersion: "123456", Labels: labels, Finalizers: []string{"kubernetes.io/pvc-protection"},
			Annotations: map[string]string{"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes",
				"volume.kubernetes.io/storage-provisioner": "csi.database.seed1b407122.io", "volume.kubernetes.io/selected-node": "node-1"}},
		Spec: *template.Spec.DeepCopy(),
	})
	claim.Spec.VolumeName = "pvc-0f5b8e0c-2a77-4c3e-9d0e-6d3f2b1a9c11"
	claim.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, AccessModes: claim.Spec.AccessModes,
		Capacity: claim.Spec.Resources.Requests.DeepCopy()}
	return claim
}

// storedAs returns obj with the API server's defaults, as it stores it on create.
func storedAs[T interface {
	protoMessage
	client.Object
}](b *testing.B, obj T) T {
	b.Helper()
	stored, err := fuzzspec.Stored(obj)
	if err != nil {
		b.Fatal(err)
	}
	return stored
}

func marshalProto(b *testing.B, obj protoMessage) []byte {
	b.Helper()
	data, err := obj.Marshal()
	if err != nil {
		b.Fatal(err)
	}
	return data
}

func marshalJSON(b *testing.B, obj any) []byte {
	b.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// decodeProto decodes data into into, as the protobuf serializer does for a watch event.
func decodeProto[T protoMessage](b *testing.B, data []byte, into T) T {
	b.Helper()
	if err := into.Unmarshal(data); err != nil {
		b.Fatal(err)
	}
	return into
}

// decodeJSONCluster decodes a DatabaseCluster as the manager's client does (the scheme's JSON
// serializer) and applies the cache's default transform.
func decodeJSONCluster(b *testing.B, decoder k8sruntime.Decoder, data []byte) any {
	b.Helper()
	obj, _, err := decoder.Decode(data, nil, &databasev1alpha1.DatabaseCluster{})
	if err != nil {
		b.Fatal(err)
	}
	return transformed(b, obj, cachecfg.StripMeta)
}

func transformed(b *testing.B, obj any, transform func(any) (any, error)) any {
	b.Helper()
	kept, err := transform(obj)
	if err != nil {
		b.Fatal(err)
	}
	return kept
}
