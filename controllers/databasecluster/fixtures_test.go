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
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// clusterOption changes a test DatabaseCluster.
type clusterOption func(*databasev1alpha1.DatabaseCluster)

// newCluster returns a valid DatabaseCluster of 3 replicas, changed by the options.
func newCluster(name string, opts ...clusterOption) *databasev1alpha1.DatabaseCluster {
	return testenv.Apply(&databasev1alpha1.DatabaseCluster{
		ObjectMeta: testenv.Meta(name),
		Spec: databasev1alpha1.DatabaseClusterSpec{
			Replicas: ptr.To[int32](3),
			Image:    "registry.example/db:1.0",
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
			},
			Storage: databasev1alpha1.StorageSpec{StorageClassName: "standard", Size: "1Gi"},
		},
	}, opts...)
}

var withNamespace = testenv.InNamespace[*databasev1alpha1.DatabaseCluster]

func withReplicas(n int32) clusterOption {
	return func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Replicas = ptr.To(n) }
}

// withEngine sets spec.engine; with etcd, also the args admission asks for (the peer URL each
// member advertises, from the pod's name).
func withEngine(engine databasev1alpha1.Engine) clusterOption {
	return func(dc *databasev1alpha1.DatabaseCluster) {
		dc.Spec.Engine = engine
		if engine == databasev1alpha1.EngineEtcd {
			dc.Spec.Env = append(dc.Spec.Env, corev1.EnvVar{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{
				FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}})
			dc.Spec.Args = append(dc.Spec.Args, "--initial-advertise-peer-urls=http://$(POD_NAME)."+dc.Name+"-headless:2380")
		}
	}
}

func withServiceType(t corev1.ServiceType) clusterOption {
	return func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Service = &databasev1alpha1.ServiceSpec{Type: t} }
}

func withPort(port int32) clusterOption {
	return func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Port = port }
}

func withImage(image string) clusterOption {
	return func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Image = image }
}

func withSize(size string) clusterOption {
	return func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Storage.Size = size }
}

func withWhenDeleted(policy databasev1alpha1.PVCRetentionPolicyType) clusterOption {
	return func(dc *databasev1alpha1.DatabaseCluster) {
		dc.Spec.PVCRetentionPolicy = &databasev1alpha1.PVCRetentionPolicy{WhenDeleted: policy}
	}
}

func withPDBEnabled(enabled bool) clusterOption {
	return func(dc *databasev1alpha1.DatabaseCluster) {
		dc.Spec.PodDisruptionBudget = &databasev1alpha1.PodDisruptionBudgetSpec{Enabled: ptr.To(enabled)}
	}
}

func withPaused(paused bool) clusterOption {
	return func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Paused = paused }
}

func withPodLabels(labels map[string]string) clusterOption {
	return func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.PodLabels = labels }
}

func withAffinity(affinity *corev1.Affinity) clusterOption {
	return func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Affinity = affinity }
}

func withAnnotation(key, value string) clusterOption {
	return func(dc *databasev1alpha1.DatabaseCluster) {
		if dc.Annotations == nil {
			dc.Annotations = map[string]string{}
		}
		dc.Annotations[key] = value
	}
}
