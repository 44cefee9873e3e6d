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
	"hash/maphash"
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

func trimmedClaim(t *testing.T, shared *Shared, claim *corev1.PersistentVolumeClaim) *corev1.PersistentVolumeClaim {
	t.Helper()
	got, err := shared.TrimClaim(decoded(t, claim, &corev1.PersistentVolumeClaim{}))
	if err != nil {
		t.Fatal(err)
	}
	return got.(*corev1.PersistentVolumeClaim)
}

// TestTrimClaimSharesTheResourceMaps: two claims decoded apart, of the same size, hold one
// request map and one capacity map; a claim of another size holds its own; the values read the
// same as decoded.
func TestTrimClaimSharesTheResourceMaps(t *testing.T) {
	shared := NewShared()
	a, b := trimmedClaim(t, shared, sizedClaim("data-a-0", "3Gi")), trimmedClaim(t, shared, sizedClaim("data-b-0", "3Gi"))
	if !same(a.Spec.Resources.Requests, b.Spec.Resources.Requests) || !same(a.Status.Capacity, b.Status.Capacity) {
		t.Fatal("two claims of 3Gi hold two request or capacity maps, want one of each")
	}
	c := trimmedClaim(t, shared, sizedClaim("data-c-0", "5Gi"))
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
	shared := NewShared()
	a, b := trimmedClaim(t, shared, sizedClaim("data-a-0", "6Gi")), trimmedClaim(t, shared, sizedClaim("data-b-0", "6Gi"))
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
	shared := NewShared()
	svc := func(name string, port int32, nodePort int32) *corev1.Service {
		s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: []corev1.ServicePort{{Name: "db", Port: port,
				TargetPort: intstr.FromString("db"), Protocol: corev1.ProtocolTCP, NodePort: nodePort, AppProtocol: ptr.To("postgresql")}}}}
		got, err := shared.TrimService(decoded(t, s, &corev1.Service{}))
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
	shared := NewShared()
	sts := func(name, image string) *appsv1.StatefulSet {
		s := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
			Spec: appsv1.StatefulSetSpec{
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "database", Image: image}}}},
				VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"},
					Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}}}}
		got, err := shared.TrimStatefulSet(decoded(t, s, &appsv1.StatefulSet{}))
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

// TestSharedTablesBelongToTheirCache: the transforms of two caches (two Shared) share nothing
// with each other, and a nil Shared shares nothing at all; each trims the
// same.
func TestSharedTablesBelongToTheirCache(t *testing.T) {
	first, second := NewShared(), NewShared()
	a, b := trimmedClaim(t, first, sizedClaim("data-a-0", "2Gi")), trimmedClaim(t, second, sizedClaim("data-b-0", "2Gi"))
	if same(a.Spec.Resources.Requests, b.Spec.Resources.Requests) {
		t.Fatal("claims trimmed by the transforms of two caches share a request map")
	}
	c, d := trimmedClaim(t, nil, sizedClaim("data-c-0", "2Gi")), trimmedClaim(t, nil, sizedClaim("data-d-0", "2Gi"))
	if same(c.Spec.Resources.Requests, d.Spec.Resources.Requests) || same(a.Spec.Resources.Requests, c.Spec.Resources.Requests) {
		t.Fatal("claims trimmed without tables share a request map")
	}
	if !reflect.DeepEqual(a.Spec, c.Spec) || !reflect.DeepEqual(a.Status, c.Status) {
		t.Fatalf("a claim trimmed with tables =\n%+v\nwithout\n%+v", a, c)
	}
	labels := map[string]string{"app.kubernetes.io/instance": "db"}
	s := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns", Labels: labels}}
	x, err := (*Shared)(nil).TrimStatefulSet(decoded(t, s, &appsv1.StatefulSet{}))
	if err != nil {
		t.Fatal(err)
	}
	y, err := (*Shared)(nil).TrimStatefulSet(decoded(t, s, &appsv1.StatefulSet{}))
	if err != nil {
		t.Fatal(err)
	}
	if same(x.(*appsv1.StatefulSet).Labels, y.(*appsv1.StatefulSet).Labels) || !TemplateTrimmed(x.(*appsv1.StatefulSet)) {
		t.Fatal("TrimStatefulSet shared the labels of two StatefulSets, or did not trim")
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

// TestTheChildrenOfAClusterShareTheirLabels: the StatefulSet, the two Services and the claim of
// one cluster, decoded apart, hold one map of labels, and the StatefulSet and the Services one
// selector; the children of another cluster hold their own.
func TestTheChildrenOfAClusterShareTheirLabels(t *testing.T) {
	shared := NewShared()
	children := func(cluster string) (*appsv1.StatefulSet, [2]*corev1.Service, *corev1.PersistentVolumeClaim) {
		labels := map[string]string{"app.kubernetes.io/name": "database", "app.kubernetes.io/instance": cluster,
			"app.kubernetes.io/managed-by": "database-operator"}
		selector := map[string]string{"app.kubernetes.io/name": "database", "app.kubernetes.io/instance": cluster}
		s := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: cluster, Namespace: "ns", Labels: labels},
			Spec: appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: selector}}}
		sts, err := shared.TrimStatefulSet(decoded(t, s, &appsv1.StatefulSet{}))
		if err != nil {
			t.Fatal(err)
		}
		var services [2]*corev1.Service
		for i, name := range []string{cluster + "-headless", cluster} {
			svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: labels},
				Spec: corev1.ServiceSpec{Selector: selector}}
			got, err := shared.TrimService(decoded(t, svc, &corev1.Service{}))
			if err != nil {
				t.Fatal(err)
			}
			services[i] = got.(*corev1.Service)
		}
		claim := sizedClaim("data-"+cluster+"-0", "1Gi")
		claim.Labels = labels
		return sts.(*appsv1.StatefulSet), services, trimmedClaim(t, shared, claim)
	}
	sts, services, claim := children("shared-a")
	for _, other := range []map[string]string{services[0].Labels, services[1].Labels, claim.Labels} {
		if !same(sts.Labels, other) {
			t.Fatal("the children of one cluster hold more than one map of labels")
		}
	}
	for _, svc := range services {
		if !same(sts.Spec.Selector.MatchLabels, svc.Spec.Selector) {
			t.Fatal("the StatefulSet and a Service of one cluster hold two selectors")
		}
	}
	read := services[0].DeepCopy()
	read.Labels["added-to-a-copy"] = "yes"
	if _, ok := sts.Labels["added-to-a-copy"]; ok {
		t.Fatal("a label added to a copy of a cached Service shows on the cached StatefulSet")
	}
	other, _, _ := children("shared-b")
	if same(sts.Labels, other.Labels) || other.Labels["app.kubernetes.io/instance"] != "shared-b" {
		t.Fatalf("two clusters share their labels, or the second holds %v", other.Labels)
	}
}

// TestSharedMapsCheckTheContent: a map held under the hash of another is not handed out for it.
func TestSharedMapsCheckTheContent(t *testing.T) {
	table := sharedMaps{seed: maphash.MakeSeed()}
	a, b := map[string]string{"k": "a"}, map[string]string{"k": "b"}
	table.young = map[uint64]map[string]string{table.hash(a): b}
	if got := table.share(a); !same(got, a) {
		t.Fatalf("share of %v returned %v, held under the same hash", a, got)
	}
	table.young, table.old = map[uint64]map[string]string{}, map[uint64]map[string]string{table.hash(a): b}
	if got := table.share(a); !same(got, a) {
		t.Fatalf("share of %v returned %v, held under the same hash in the older generation", a, got)
	}
}

// TestSharedMapsAreBoundedAndKeepWhatIsInUse: the table never holds more than two generations;
// a map still looked up moves to the newer one and stays shared, one no longer looked up is
// forgotten after two turns.
func TestSharedMapsAreBoundedAndKeepWhatIsInUse(t *testing.T) {
	table := sharedMaps{seed: maphash.MakeSeed()}
	kept, dropped := map[string]string{"k": "kept"}, map[string]string{"k": "dropped"}
	table.share(kept)
	table.share(dropped)
	for i := range 3 * labelsTurn {
		table.share(map[string]string{"k": fmt.Sprint(i)})
		if i%(labelsTurn/2) == 0 {
			if got := table.share(map[string]string{"k": "kept"}); !same(got, kept) {
				t.Fatalf("after %d other maps, a map in use is no longer shared", i)
			}
		}
		if held := table.held(); held > 2*labelsTurn {
			t.Fatalf("the table holds %d maps, more than two generations of %d", held, labelsTurn)
		}
	}
	if got := table.share(map[string]string{"k": "dropped"}); same(got, dropped) {
		t.Fatal("a map no longer looked up is still held after three turns")
	}
}
