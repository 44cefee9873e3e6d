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

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/podsecurity"
	"github.com/seed1b407122/database-operator/controllers/storageagent"
)

// agentBinary is the manager binary in the operator's image (the Dockerfile's /manager).
const agentBinary = "/manager"

// withStorageAgent adds the storage agent to the pod template of sts when dc has
// spec.storage.autoGrow and the operator knows its own image: a native sidecar (restartPolicy
// Always) after the user's init containers and sidecars, running the manager binary in its
// storage-agent mode on the data volume, mounted read-only. Without autoGrow the template is
// left as it is: clusters that do not ask for it are never rolled for it.
func withStorageAgent(sts *appsv1.StatefulSet, dc *databasev1alpha1.DatabaseCluster, image string) {
	if !dc.AutoGrows() || image == "" {
		return
	}
	spec := &sts.Spec.Template.Spec
	spec.InitContainers = append(spec.InitContainers, buildStorageAgent(image))
}

// buildStorageAgent is the storage agent container: restricted, with a read-only root file
// system, no probes (its readiness must never make a member not Ready) and small resources
// (it answers one statfs per member a minute).
func buildStorageAgent(image string) corev1.Container {
	security := podsecurity.Restricted()
	security.ReadOnlyRootFilesystem = ptr.To(true)
	return corev1.Container{
		Name:            databasev1alpha1.StorageAgentContainerName,
		Image:           image,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Command:         []string{agentBinary, storageagent.Command},
		Args: []string{"--path=" + databasev1alpha1.DataMountPath,
			"--listen=:" + strconv.Itoa(int(databasev1alpha1.StorageAgentPort))},
		Ports: []corev1.ContainerPort{{Name: databasev1alpha1.StorageAgentContainerName,
			ContainerPort: databasev1alpha1.StorageAgentPort, Protocol: corev1.ProtocolTCP}},
		VolumeMounts: []corev1.VolumeMount{{Name: databasev1alpha1.DataVolumeName,
			MountPath: databasev1alpha1.DataMountPath, ReadOnly: true}},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("5m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
		},
		RestartPolicy:   ptr.To(corev1.ContainerRestartPolicyAlways),
		SecurityContext: security,
	}
}

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
