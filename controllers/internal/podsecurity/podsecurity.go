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

// Package podsecurity holds the security contexts of the pods and containers the operator
// builds: those of the Pod Security "restricted" profile, so that its children are admitted in a
// namespace that enforces the profile.
package podsecurity

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// Restricted is the security context of a container under the Pod Security "restricted"
// profile: not root, no privilege escalation, no capabilities, the runtime's seccomp profile.
// Every container the operator builds runs with it.
func Restricted() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		RunAsNonRoot:             ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// RestrictedPod is the security context of a pod under the Pod Security "restricted" profile,
// run as user and group (nil for the image's own, which must not be root): non-root and the
// runtime's seccomp profile for every container of the pod.
func RestrictedPod(user, group *int64) *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(true),
		RunAsUser:      user,
		RunAsGroup:     group,
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}
