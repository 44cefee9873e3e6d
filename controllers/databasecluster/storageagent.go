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
	"net"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// hasStorageAgent reports whether pod runs the storage agent, by the kubelet's status of its
// init containers (the cache keeps no pod spec, see cachecfg.TrimPod): a member not rolled yet
// after autoGrow was set has none, and is not measured.
func hasStorageAgent(pod *corev1.Pod) bool {
	for _, c := range pod.Status.InitContainerStatuses {
		if c.Name == databasev1alpha1.StorageAgentContainerName {
			return true
		}
	}
	return false
}

// agentAddress is where the storage agent of pod listens: its pod IP ("" when it has none yet).
func agentAddress(pod *corev1.Pod) string {
	if pod.Status.PodIP == "" {
		return ""
	}
	return net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(int(databasev1alpha1.StorageAgentPort)))
}
