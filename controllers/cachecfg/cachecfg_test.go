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
	"reflect"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// TestTrimPodKeepsWhatTheOperatorReads: identity, labels (the revision among them), the
// operator's own annotations (a member's announcement), owners, deletion, readiness (the Ready condition), PodScheduled, the pod IP and the containers' and init
// containers' state and last termination stay; the spec, the other conditions and the rest of the
// status go.
func TestTrimPodKeepsWhatTheOperatorReads(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	deleting := metav1.NewTime(created.Add(time.Minute))
	owners := []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db", UID: "s-1", Controller: ptr.To(true)}}
	conditions := []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: created},
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: created}}
	allConditions := append([]corev1.PodCondition{{Type: "PodReadyToStartContainers", Status: corev1.ConditionTrue},
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}, conditions[0],
		{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady"}}, conditions[1])
	waiting := corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 40s"}}
	crashed := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", StartedAt: created}}
	pulling := corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "Back-off pulling image"}}
	labels := map[string]string{"app.kubernetes.io/instance": "db", "controller-revision-hash": "db-5d4f8"}
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "db-0", Namespace: "ns", UID: "p-1", ResourceVersion: "7", CreationTimestamp: created,
			DeletionTimestamp: &deleting, Labels: labels, OwnerReferences: owners,
			Annotations: map[string]string{"big": "annotation",
				"database.seed1b407122.io/postgresql-role": "replica"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "database", Image: "db:1",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: allConditions, StartTime: &created, HostIP: "10.0.0.1",
			PodIP: "10.1.0.1", PodIPs: []corev1.PodIP{{IP: "10.1.0.1"}},
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "setup", State: pulling, Image: "setup:1"}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "database", Ready: false, State: waiting, LastTerminationState: crashed,
				RestartCount: 3, Image: "db:1", ImageID: "sha256:abc", ContainerID: "containerd://123"}}},
	}
	got, err := TrimPod(pod)
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.Pod{
		TypeMeta: pod.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: "db-0", Namespace: "ns", UID: "p-1", ResourceVersion: "7", CreationTimestamp: created,
			DeletionTimestamp: &deleting, Labels: labels, OwnerReferences: owners,
			Annotations: map[string]string{"database.seed1b407122.io/postgresql-role": "replica"}},
		Spec: corev1.PodSpec{NodeName: "node-1"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: conditions, StartTime: &created, PodIP: "10.1.0.1",
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "setup", State: pulling}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "database", Ready: false, State: waiting, LastTerminationState: crashed,
				RestartCount: 3}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("TrimPod =\n%+v\nwant\n%+v", got, want)
	}
	if other, _ := TrimPod("not a pod"); other != "not a pod" {
		t.Fatalf("TrimPod of another type = %v, want it unchanged", other)
	}
}

// TestTrimServiceKeepsWhatTheOperatorCompares: identity, labels, annotations, owners and the
// owned spec fields (the load balancer's too) stay; managedFields, the last-applied
// configuration, the allocated cluster IPs, IP families, the internal traffic policy and the
// status go.
func TestTrimServiceKeepsWhatTheOperatorCompares(t *testing.T) {
	owners := []metav1.OwnerReference{{APIVersion: "database.seed1b407122.io/v1alpha1", Kind: "DatabaseCluster", Name: "db", UID: "d-1", Controller: ptr.To(true)}}
	ports := []corev1.ServicePort{{Name: "db", Port: 5432, TargetPort: intstr.FromString("db"), Protocol: corev1.ProtocolTCP}}
	selector := map[string]string{"app.kubernetes.io/instance": "db"}
	svc := &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns", UID: "s-1", ResourceVersion: "9", Labels: selector,
			Annotations:     map[string]string{"team": "a", LastAppliedAnnotation: `{"big":"json"}`},
			OwnerReferences: owners, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "database-operator"}}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: selector, Ports: ports, PublishNotReadyAddresses: true,
			LoadBalancerSourceRanges: []string{"10.0.0.0/8"}, LoadBalancerClass: ptr.To("example.com/lb"),
			ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal, HealthCheckNodePort: 32000,
			ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10"}, IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
			IPFamilyPolicy: ptr.To(corev1.IPFamilyPolicySingleStack), SessionAffinity: corev1.ServiceAffinityNone,
			InternalTrafficPolicy: ptr.To(corev1.ServiceInternalTrafficPolicyCluster)},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "1.2.3.4"}}}},
	}
	got, err := NewShared().TrimService(svc)
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.Service{
		TypeMeta: svc.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns", UID: "s-1", ResourceVersion: "9", Labels: selector,
			Annotations: map[string]string{"team": "a"}, OwnerReferences: owners},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: selector, Ports: ports, PublishNotReadyAddresses: true,
			LoadBalancerSourceRanges: []string{"10.0.0.0/8"}, LoadBalancerClass: ptr.To("example.com/lb"),
			ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("TrimService =\n%+v\nwant\n%+v", got, want)
	}
	if other, _ := NewShared().TrimService("not a service"); other != "not a service" {
		t.Fatalf("TrimService of another type = %v, want it unchanged", other)
	}
}

// TestTrimClaimKeepsWhatTheOperatorReads: identity, labels, owners, deletion, the operator's
// own annotation (the last automatic growth), the access modes, resources, StorageClass and
// volume, the phase, capacity and resize conditions stay; the binder's and provisioners'
// annotations, the finalizers, the data source and the rest of the status go.
func TestTrimClaimKeepsWhatTheOperatorReads(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	deleting := metav1.NewTime(created.Add(time.Minute))
	owners := []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db", UID: "s-1"}}
	labels := map[string]string{"app.kubernetes.io/instance": "db"}
	resources := corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}}
	capacity := corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}
	resizing := []corev1.PersistentVolumeClaimCondition{{Type: corev1.PersistentVolumeClaimResizing, Status: corev1.ConditionTrue}}
	modes := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	grownAt := map[string]string{databasev1alpha1.AutoGrownAtAnnotation: "2026-11-29T12:00:00Z"}
	claim := &corev1.PersistentVolumeClaim{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: metav1.ObjectMeta{Name: "data-db-0", Namespace: "ns", UID: "c-1", ResourceVersion: "11", Generation: 2,
			CreationTimestamp: created, DeletionTimestamp: &deleting, Labels: labels, OwnerReferences: owners,
			Annotations: map[string]string{databasev1alpha1.AutoGrownAtAnnotation: "2026-11-29T12:00:00Z",
				"pv.kubernetes.io/bind-completed": "yes", "volume.kubernetes.io/storage-provisioner": "csi.example.com",
				"volume.kubernetes.io/selected-node": "node-1"},
			Finalizers:    []string{"kubernetes.io/pvc-protection"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager"}}},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: modes, Resources: resources, StorageClassName: ptr.To("standard"),
			VolumeName: "pv-1", VolumeMode: ptr.To(corev1.PersistentVolumeFilesystem),
			DataSourceRef: &corev1.TypedObjectReference{Kind: "VolumeSnapshot", Name: "snap"}},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: capacity, Conditions: resizing,
			AccessModes: modes, AllocatedResources: resources.Requests},
	}
	got, err := NewShared().TrimClaim(claim)
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.PersistentVolumeClaim{
		TypeMeta: claim.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: "data-db-0", Namespace: "ns", UID: "c-1", ResourceVersion: "11", Generation: 2,
			CreationTimestamp: created, DeletionTimestamp: &deleting, Labels: labels, OwnerReferences: owners, Annotations: grownAt},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: modes, Resources: resources, StorageClassName: ptr.To("standard"),
			VolumeName: "pv-1"},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: capacity, Conditions: resizing},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("TrimClaim =\n%+v\nwant\n%+v", got, want)
	}
	claim.Annotations = map[string]string{"pv.kubernetes.io/bind-completed": "yes"}
	if got, _ := NewShared().TrimClaim(claim); got.(*corev1.PersistentVolumeClaim).Annotations != nil {
		t.Fatalf("TrimClaim of a claim without the operator's annotations kept %v, want nil", got.(*corev1.PersistentVolumeClaim).Annotations)
	}
	if other, _ := NewShared().TrimClaim("not a claim"); other != "not a claim" {
		t.Fatalf("TrimClaim of another type = %v, want it unchanged", other)
	}
}

// TestTrimStatefulSetKeepsWhatTheOperatorReads: the metadata (without managed fields and
// last-applied), the spec but the templates, and the status stay; of the templates only the
// containers' images and the claim templates' storage requests, as annotations of a pod template
// named TrimmedTemplateName, which ContainerImage and ClaimTemplateSize read as they read a
// whole StatefulSet.
func TestTrimStatefulSetKeepsWhatTheOperatorReads(t *testing.T) {
	meta := metav1.ObjectMeta{Name: "db", Namespace: "ns", UID: "s-1", ResourceVersion: "7", Generation: 3,
		Labels: map[string]string{"app.kubernetes.io/instance": "db"}, Finalizers: []string{"f"},
		Annotations:     map[string]string{"database.seed1b407122.io/template-hash": "abc"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "database.seed1b407122.io/v1alpha1", Kind: "DatabaseCluster", Name: "db", UID: "d-1"}}}
	spec := func() appsv1.StatefulSetSpec {
		return appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3), ServiceName: "db-headless",
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/instance": "db"}},
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.RetainPersistentVolumeClaimRetentionPolicyType},
			MinReadySeconds: 5, RevisionHistoryLimit: ptr.To[int32](10)}
	}
	status := appsv1.StatefulSetStatus{ObservedGeneration: 3, Replicas: 3, ReadyReplicas: 2, CurrentRevision: "db-1", UpdateRevision: "db-2"}
	whole := &appsv1.StatefulSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"}, ObjectMeta: *meta.DeepCopy(),
		Spec: spec(), Status: status}
	whole.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "database-operator"}}
	whole.Annotations[LastAppliedAnnotation] = "{}"
	whole.Spec.Template = corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"c": "d"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "database", Image: "registry.example/db:1.0", Args: []string{"--x"},
				Env: []corev1.EnvVar{{Name: "E", Value: "v"}}}, {Name: "exporter", Image: "registry.example/exporter:1"}},
			InitContainers: []corev1.Container{{Name: "prepare", Image: "busybox"}},
			Volumes:        []corev1.Volume{{Name: "config"}},
		},
	}
	whole.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Labels: map[string]string{"a": "b"}},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: ptr.To("standard"), VolumeMode: ptr.To(corev1.PersistentVolumeFilesystem),
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceStorage: resource.MustParse("2Gi"), corev1.ResourceName("example.com/iops"): resource.MustParse("100")}}},
	}, {ObjectMeta: metav1.ObjectMeta{Name: "logs"}}}
	wholeCopy := whole.DeepCopy()
	got, err := NewShared().TrimStatefulSet(whole)
	if err != nil {
		t.Fatal(err)
	}
	want := &appsv1.StatefulSet{TypeMeta: whole.TypeMeta, ObjectMeta: meta, Spec: spec(), Status: status}
	want.Spec.Template = corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Name: TrimmedTemplateName,
		Annotations: map[string]string{"image/database": "registry.example/db:1.0", "image/exporter": "registry.example/exporter:1",
			"storage/data": "2Gi", "storage/logs": ""}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("TrimStatefulSet =\n%+v\nwant\n%+v", got, want)
	}
	if !TemplateTrimmed(got.(*appsv1.StatefulSet)) {
		t.Fatal("TemplateTrimmed of a trimmed StatefulSet = false, want true")
	}
	if TemplateTrimmed(&appsv1.StatefulSet{Spec: spec()}) {
		t.Fatal("TemplateTrimmed of a StatefulSet as the API server sends it = true, want false")
	}
	trimmed := got.(*appsv1.StatefulSet)
	for _, sts := range []*appsv1.StatefulSet{wholeCopy, trimmed} {
		if image := ContainerImage(sts, "database"); image != "registry.example/db:1.0" {
			t.Errorf("ContainerImage(database) of trimmed=%v = %q, want registry.example/db:1.0", TemplateTrimmed(sts), image)
		}
		if image := ContainerImage(sts, "prepare"); image != "" {
			t.Errorf("ContainerImage(prepare), an init container, of trimmed=%v = %q, want none", TemplateTrimmed(sts), image)
		}
		if size, ok := ClaimTemplateSize(sts, "data"); !ok || size.Cmp(resource.MustParse("2Gi")) != 0 {
			t.Errorf("ClaimTemplateSize(data) of trimmed=%v = %s, %v; want 2Gi, true", TemplateTrimmed(sts), size.String(), ok)
		}
		if size, ok := ClaimTemplateSize(sts, "logs"); !ok || !size.IsZero() {
			t.Errorf("ClaimTemplateSize(logs), no request, of trimmed=%v = %s, %v; want zero, true", TemplateTrimmed(sts), size.String(), ok)
		}
		if size, ok := ClaimTemplateSize(sts, "backup"); ok || !size.IsZero() {
			t.Errorf("ClaimTemplateSize(backup), no such template, of trimmed=%v = %s, %v; want zero, false", TemplateTrimmed(sts), size.String(), ok)
		}
	}
	// Untrim: the template given, and the claim templates' names and sizes back.
	untrimmed := trimmed.DeepCopy()
	Untrim(untrimmed, &wholeCopy.Spec.Template)
	wantUntrimmed := want.DeepCopy()
	wantUntrimmed.Spec.Template = wholeCopy.Spec.Template
	wantUntrimmed.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "logs"}}}
	if !equality.Semantic.DeepEqual(untrimmed, wantUntrimmed) || TemplateTrimmed(untrimmed) {
		t.Fatalf("Untrim =\n%+v\nwant\n%+v", untrimmed, wantUntrimmed)
	}
	if size, ok := ClaimTemplateSize(untrimmed, "data"); !ok || size.Cmp(resource.MustParse("2Gi")) != 0 {
		t.Errorf("ClaimTemplateSize(data) untrimmed = %s, %v; want 2Gi, true", size.String(), ok)
	}
	if other, _ := NewShared().TrimStatefulSet("not a StatefulSet"); other != "not a StatefulSet" {
		t.Fatalf("TrimStatefulSet of another type = %v, want it unchanged", other)
	}
}

// TestStripMeta: managedFields and the last-applied annotation go, every other annotation stays,
// and an object left with no annotation has none (not an empty map).
func TestStripMeta(t *testing.T) {
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		want        map[string]string
	}{
		{name: "only last-applied", annotations: map[string]string{LastAppliedAnnotation: "{}"}, want: nil},
		{name: "others stay", annotations: map[string]string{LastAppliedAnnotation: "{}", "a": "b"}, want: map[string]string{"a": "b"}},
		{name: "no last-applied", annotations: map[string]string{"a": "b"}, want: map[string]string{"a": "b"}},
		{name: "none", annotations: nil, want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Annotations: tc.annotations,
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}}
			got, err := StripMeta(cm)
			if err != nil {
				t.Fatal(err)
			}
			want := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Annotations: tc.want}}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("StripMeta =\n%+v\nwant\n%+v", got, want)
			}
		})
	}
	if other, _ := StripMeta("not an object"); other != "not an object" {
		t.Fatalf("StripMeta of a non-object = %v, want it unchanged", other)
	}
}

// TestTransformsAreIdempotent: client-go may hand an object of the cache to its transform again
// (a relist's Replace), so each transform applied to its own result changes nothing. A
// StatefulSet trimmed twice once lost its claim templates' sizes, and a claim template of size
// zero is one the storage phase replaces by an orphan delete (the HA suite caught it).
func TestTransformsAreIdempotent(t *testing.T) {
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns"},
		Spec: appsv1.StatefulSetSpec{
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "database", Image: "db:1"}}}},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}},
		}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db-0", Namespace: "ns", Labels: map[string]string{"a": "b"}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: corev1.ConditionTrue},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "database", Ready: true, RestartCount: 1, Image: "db:1"}}}}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.7", Ports: []corev1.ServicePort{{Name: "db", Port: 2379}}}}
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data-db-0", Namespace: "ns",
		Annotations: map[string]string{OwnAnnotationPrefix + "auto-grown-at": "t", "pv.kubernetes.io/bind-completed": "yes"}},
		Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv-1"}}
	shared := NewShared()
	for _, tc := range []struct {
		name      string
		obj       any
		transform func(any) (any, error)
	}{
		{"StatefulSet", sts, shared.TrimStatefulSet},
		{"Pod", pod, TrimPod},
		{"Service", svc, shared.TrimService},
		{"PersistentVolumeClaim", claim, shared.TrimClaim},
	} {
		t.Run(tc.name, func(t *testing.T) {
			once, err := tc.transform(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			want := once.(runtime.Object).DeepCopyObject()
			twice, err := tc.transform(once)
			if err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(twice, want) {
				t.Fatalf("transformed twice =\n%+v\nonce\n%+v", twice, want)
			}
		})
	}
	trimmed, err := shared.TrimStatefulSet(sts.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	again, _ := shared.TrimStatefulSet(trimmed)
	if size, ok := ClaimTemplateSize(again.(*appsv1.StatefulSet), "data"); !ok || size.Cmp(resource.MustParse("1Gi")) != 0 {
		t.Fatalf("ClaimTemplateSize of a StatefulSet trimmed twice = %s, %v; want 1Gi, true", size.String(), ok)
	}
}
