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
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/intstr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
)

// BuildHeadlessService returns the headless Service that gives each pod of dc a stable DNS name.
// It publishes not-ready addresses so that members can find each other while they bootstrap.
func BuildHeadlessService(dc *databasev1alpha1.DatabaseCluster) *corev1.Service {
	svc := buildService(dc, dc.HeadlessServiceName())
	svc.Spec.ClusterIP = corev1.ClusterIPNone
	svc.Spec.PublishNotReadyAddresses = true
	return svc
}

// BuildClientService returns the ClusterIP Service clients connect to; it only routes to Ready pods.
func BuildClientService(dc *databasev1alpha1.DatabaseCluster) *corev1.Service {
	return buildService(dc, dc.ClientServiceName())
}

func buildService(dc *databasev1alpha1.DatabaseCluster, name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: childMeta(dc, name),
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: dc.SelectorLabels(),
			Ports: []corev1.ServicePort{{
				Name:       databasev1alpha1.PortName,
				Port:       dc.DatabasePort(),
				TargetPort: intstr.FromString(databasev1alpha1.PortName),
				Protocol:   corev1.ProtocolTCP,
			}},
		},
	}
}

// serviceSpec keeps the ports, selector and type of a Service. clusterIP is immutable once
// allocated and is only ever set on create.
var serviceSpec = child.Spec[*corev1.Service]{
	InSync: func(desired, observed *corev1.Service) bool {
		return observed.Spec.Type == desired.Spec.Type &&
			equality.Semantic.DeepEqual(desired.Spec.Selector, observed.Spec.Selector) &&
			observed.Spec.PublishNotReadyAddresses == desired.Spec.PublishNotReadyAddresses &&
			equality.Semantic.DeepDerivative(desired.Spec.Ports, observed.Spec.Ports) &&
			len(desired.Spec.Ports) == len(observed.Spec.Ports)
	},
	Merge: func(desired, observed *corev1.Service) {
		observed.Spec.Type = desired.Spec.Type
		observed.Spec.Selector = desired.Spec.Selector
		observed.Spec.PublishNotReadyAddresses = desired.Spec.PublishNotReadyAddresses
		observed.Spec.Ports = desired.Spec.Ports
	},
}
