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

package skeleton

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

// phaseChanged is what a controller reads of a pod in these tests: its phase.
func phaseChanged(before, after *corev1.Pod) bool { return before.Status.Phase != after.Status.Phase }

// podIn returns a pod of generation 1 with the given phase and labels.
func podIn(phase corev1.PodPhase, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Generation: 1, Labels: labels},
		Status: corev1.PodStatus{Phase: phase}}
}

// TestUpdateChanged: an update passes only when changed says so; creates, deletes and an update
// of another type pass.
func TestUpdateChanged(t *testing.T) {
	p := UpdateChanged(phaseChanged)
	for _, tc := range []struct {
		name          string
		before, after client.Object
		want          bool
	}{
		{"phase changed", podIn(corev1.PodPending, nil), podIn(corev1.PodRunning, nil), true},
		{"nothing read changed", podIn(corev1.PodRunning, nil), podIn(corev1.PodRunning, map[string]string{"a": "b"}), false},
		{"another type", &corev1.Service{}, &corev1.Service{}, true},
	} {
		if got := p.Update(event.UpdateEvent{ObjectOld: tc.before, ObjectNew: tc.after}); got != tc.want {
			t.Errorf("%s: Update = %t, want %t", tc.name, got, tc.want)
		}
	}
	if !p.Create(event.CreateEvent{Object: podIn(corev1.PodPending, nil)}) || !p.Delete(event.DeleteEvent{Object: podIn(corev1.PodPending, nil)}) {
		t.Error("UpdateChanged filtered a create or a delete, want both to pass")
	}
}

// TestOwnedChanged: a child's update passes when its generation, its labels or what
// statusChanged compares changed, and not for another status write.
func TestOwnedChanged(t *testing.T) {
	p := OwnedChanged(phaseChanged)
	respecified := podIn(corev1.PodRunning, nil)
	respecified.Generation = 2
	for _, tc := range []struct {
		name  string
		after *corev1.Pod
		want  bool
	}{
		{"spec edited (generation)", respecified, true},
		{"label changed", podIn(corev1.PodRunning, map[string]string{"a": "b"}), true},
		{"status read changed", podIn(corev1.PodFailed, nil), true},
		{"another status write", func() *corev1.Pod {
			p := podIn(corev1.PodRunning, nil)
			p.Status.Message = "other"
			return p
		}(), false},
	} {
		if got := p.Update(event.UpdateEvent{ObjectOld: podIn(corev1.PodRunning, nil), ObjectNew: tc.after}); got != tc.want {
			t.Errorf("%s: Update = %t, want %t", tc.name, got, tc.want)
		}
	}
}
