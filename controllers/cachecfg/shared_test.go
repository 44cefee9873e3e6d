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
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// protoMessage is a built-in kind as a watch delivers it.
type protoMessage interface {
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}

// decoded is obj after a protobuf round trip into into: a copy that shares no memory with obj,
// as each watch event decodes its own.
func decoded[T protoMessage](t *testing.T, obj protoMessage, into T) T {
	t.Helper()
	data, err := obj.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := into.Unmarshal(data); err != nil {
		t.Fatal(err)
	}
	return into
}

// same says whether two maps or slices are the very same memory.
func same(a, b any) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	return va.Len() > 0 && va.UnsafePointer() == vb.UnsafePointer()
}

func sizedClaim(name, size string) *corev1.PersistentVolumeClaim {
	storage := corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec:   corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: storage}},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: storage}}
}

func trimmedClaim(t *testing.T, name, size string) *corev1.PersistentVolumeClaim {
	t.Helper()
	got, err := TrimClaim(decoded(t, sizedClaim(name, size), &corev1.PersistentVolumeClaim{}))
	if err != nil {
		t.Fatal(err)
	}
	return got.(*corev1.PersistentVolumeClaim)
}

// TestTrimClaimSharesTheResourceMaps: two claims decoded apart, of the same size, hold one
// request map and one capacity map; a claim of another size holds its own; the values read the
// same as decoded.
func TestTrimClaimSharesTheResourceMaps(t *testing.T) {
	a, b := trimmedClaim(t, "data-a-0", "3Gi"), trimmedClaim(t, "data-b-0", "3Gi")
	if !same(a.Spec.Resources.Requests, b.Spec.Resources.Requests) || !same(a.Status.Capacity, b.Status.Capacity) {
		t.Fatal("two claims of 3Gi hold two request or capacity maps, want one of each")
	}
	c := trimmedClaim(t, "data-c-0", "5Gi")
	if same(a.Spec.Resources.Requests, c.Spec.Resources.Requests) {
		t.Fatal("a claim of 5Gi shares the request map of the claims of 3Gi")
	}
	if q := c.Spec.Resources.Requests[corev1.ResourceStorage]; q.Cmp(resource.MustParse("5Gi")) != 0 {
		t.Fatalf("request of the 5Gi claim = %s", q.String())
	}
	if q := b.Status.Capacity[corev1.ResourceStorage]; q.String() != "3Gi" {
		t.Fatalf("capacity of a 3Gi claim = %s", q.String())
	}
}

// TestSharedValuesAreCopiedOnRead: what a reader gets from the cache is a deep copy
// (controller-runtime's cache and the client's DeepCopyObject), so a change to a claim read
// from the cache, as the storage phase makes before a patch, leaves the shared map, and the
// other claims, as they were.
func TestSharedValuesAreCopiedOnRead(t *testing.T) {
	a, b := trimmedClaim(t, "data-a-0", "6Gi"), trimmedClaim(t, "data-b-0", "6Gi")
	read := a.DeepCopyObject().(*corev1.PersistentVolumeClaim)
	read.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("8Gi")
	if q := b.Spec.Resources.Requests[corev1.ResourceStorage]; q.String() != "6Gi" {
		t.Fatalf("after a change to a copy of claim a, claim b requests %s, want 6Gi", q.String())
	}
	if q := a.Spec.Resources.Requests[corev1.ResourceStorage]; q.String() != "6Gi" {
		t.Fatalf("after a change to a copy of claim a, the cached claim a requests %s, want 6Gi", q.String())
	}
}

// TestTrimServiceSharesPortsWithoutNodePorts: two Services with the same ports hold one slice;
// different ports, or a node port (the API server's, one per Service), are not shared.
func TestTrimServiceSharesPortsWithoutNodePorts(t *testing.T) {
	svc := func(name string, port int32, nodePort int32) *corev1.Service {
		s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: []corev1.ServicePort{{Name: "db", Port: port,
				TargetPort: intstr.FromString("db"), Protocol: corev1.ProtocolTCP, NodePort: nodePort, AppProtocol: ptr.To("postgresql")}}}}
		got, err := TrimService(decoded(t, s, &corev1.Service{}))
		if err != nil {
			t.Fatal(err)
		}
		return got.(*corev1.Service)
	}
	a, b := svc("a", 6543, 0), svc("b", 6543, 0)
	if !same(a.Spec.Ports, b.Spec.Ports) {
		t.Fatal("two Services with the same ports hold two slices, want one")
	}
	if c := svc("c", 6544, 0); same(a.Spec.Ports, c.Spec.Ports) {
		t.Fatal("Services with different ports share a slice")
	}
	if d, e := svc("d", 6543, 30001), svc("e", 6543, 30001); same(d.Spec.Ports, e.Spec.Ports) || same(a.Spec.Ports, d.Spec.Ports) {
		t.Fatal("ports with a node port are shared")
	}
}

// TestTrimStatefulSetSharesWhatItKeeps: two StatefulSets of the same image and size keep one
// map; another image keeps its own.
func TestTrimStatefulSetSharesWhatItKeeps(t *testing.T) {
	sts := func(name, image string) *appsv1.StatefulSet {
		s := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
			Spec: appsv1.StatefulSetSpec{
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "database", Image: image}}}},
				VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"},
					Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}}}}
		got, err := TrimStatefulSet(decoded(t, s, &appsv1.StatefulSet{}))
		if err != nil {
			t.Fatal(err)
		}
		return got.(*appsv1.StatefulSet)
	}
	a, b, c := sts("a", "db:shared-1"), sts("b", "db:shared-1"), sts("c", "db:shared-2")
	if !same(a.Spec.Template.Annotations, b.Spec.Template.Annotations) {
		t.Fatal("two StatefulSets of one image and size keep two maps, want one")
	}
	if same(a.Spec.Template.Annotations, c.Spec.Template.Annotations) {
		t.Fatal("StatefulSets of two images share what they keep")
	}
	if got := ContainerImage(c, "database"); got != "db:shared-2" {
		t.Fatalf("ContainerImage of c = %q", got)
	}
}

// TestSharedValuesAreBounded: a table keeps at most maxShared values; past it, a value is
// returned as given and not kept, and the values kept are still shared.
func TestSharedValuesAreBounded(t *testing.T) {
	var table sharedValues[[]int]
	first := []int{0}
	for i := range maxShared + 10 {
		value := []int{i}
		if i == 0 {
			value = first
		}
		if got := table.share(fmt.Sprint(i), value); !same(got, value) {
			t.Fatalf("share of a new key %d returned another value", i)
		}
	}
	if got := table.size(); got != maxShared {
		t.Fatalf("table keeps %d values, want the bound %d", got, maxShared)
	}
	if got := table.share("0", []int{0}); !same(got, first) {
		t.Fatal("a value kept before the bound is no longer shared")
	}
	past := []int{maxShared + 1}
	if got := table.share(fmt.Sprint(maxShared+1), past); !same(got, past) || table.size() != maxShared {
		t.Fatal("a value past the bound was not returned as given, or was kept")
	}
}
