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

package podsecurity

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// TestRestricted: a container's context meets the "restricted" Pod Security Standard: no
// privilege escalation, not root, every capability dropped, the runtime's seccomp profile.
func TestRestricted(t *testing.T) {
	want := &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		RunAsNonRoot:             ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	got := Restricted()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Restricted() = %+v, want %+v", got, want)
	}
	got.Capabilities.Drop[0] = "NET_RAW"
	if again := Restricted(); again.Capabilities.Drop[0] != "ALL" {
		t.Fatal("Restricted() shares its values between calls: a caller's change leaked into the next")
	}
}

// TestRestrictedPod: a pod's context is not root, uses the runtime's seccomp profile, and
// carries the user and group given, nil leaving the image's.
func TestRestrictedPod(t *testing.T) {
	for _, tc := range []struct {
		name        string
		user, group *int64
	}{
		{"image's user", nil, nil},
		{"user and group", ptr.To[int64](999), ptr.To[int64](998)},
	} {
		want := &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: tc.user, RunAsGroup: tc.group,
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
		if got := RestrictedPod(tc.user, tc.group); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: RestrictedPod = %+v, want %+v", tc.name, got, want)
		}
	}
}
