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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestTrimPodKeepsWhatTheOperatorReads: identity, labels, owners, deletion, readiness and the
// containers' state stay; the spec and the rest of the status go.
func TestTrimPodKeepsWhatTheOperatorReads(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	deleting := metav1.NewTime(created.Add(time.Minute))
	owners := []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db", UID: "s-1", Controller: ptr.To(true)}}
	conditions := []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: created}}
	waiting := corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "Back-off pulling image"}}
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "db-0", Namespace: "ns", UID: "p-1", ResourceVersion: "7", CreationTimestamp: created,
			DeletionTimestamp: &deleting, Labels: map[string]string{"app.kubernetes.io/instance": "db"}, OwnerReferences: owners,
			Annotations:   map[string]string{"big": "annotation"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "database", Image: "db:1",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: conditions, StartTime: &created, HostIP: "10.0.0.1",
			PodIPs: []corev1.PodIP{{IP: "10.1.0.1"}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "database", Ready: false, State: waiting, RestartCount: 3,
				Image: "db:1", ImageID: "sha256:abc", ContainerID: "containerd://123"}}},
	}
	got, err := TrimPod(pod)
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.Pod{
		TypeMeta: pod.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: "db-0", Namespace: "ns", UID: "p-1", ResourceVersion: "7", CreationTimestamp: created,
			DeletionTimestamp: &deleting, Labels: map[string]string{"app.kubernetes.io/instance": "db"}, OwnerReferences: owners},
		Spec: corev1.PodSpec{NodeName: "node-1"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: conditions, StartTime: &created,
			ContainerStatuses: []corev1.ContainerStatus{{Name: "database", Ready: false, State: waiting, RestartCount: 3}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("TrimPod =\n%+v\nwant\n%+v", got, want)
	}
	if other, _ := TrimPod("not a pod"); other != "not a pod" {
		t.Fatalf("TrimPod of another type = %v, want it unchanged", other)
	}
}
