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

package specs

import (
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/api/labels"
)

// BuildHeadlessService returns the headless Service that gives each pod of dc a stable DNS name.
// It publishes not-ready addresses so that members can find each other while they bootstrap.
func BuildHeadlessService(dc *databasev1alpha1.DatabaseCluster) *corev1.Service {
	svc := buildService(dc, dc.HeadlessServiceName())
	svc.Spec.ClusterIP = corev1.ClusterIPNone
	svc.Spec.PublishNotReadyAddresses = true
	return svc
}

// BuildClientService returns the Service clients connect to; it only routes to Ready pods. Its
// type, metadata and extra ports are spec.service's (ClusterIP with the database port alone by
// default).
func BuildClientService(dc *databasev1alpha1.DatabaseCluster) *corev1.Service {
	svc := buildService(dc, dc.ClientServiceName())
	exposure := dc.Spec.Service
	if exposure == nil {
		return svc
	}
	if exposure.Type != "" {
		svc.Spec.Type = exposure.Type
	}
	svc.Labels = userMetadata(exposure.Labels, dc.Labels())
	svc.Annotations = userMetadata(exposure.Annotations, nil)
	// userKeys reads the user's labels and annotations, so it runs after they are set; the
	// annotations are nil when spec.service has none.
	svc.Annotations = userMetadata(svc.Annotations, userKeys(svc))
	if svc.Spec.Type != corev1.ServiceTypeClusterIP {
		// Written out, so that removing spec.service.externalTrafficPolicy is applied too.
		svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
		if exposure.ExternalTrafficPolicy != "" {
			svc.Spec.ExternalTrafficPolicy = exposure.ExternalTrafficPolicy
		}
	}
	svc.Spec.LoadBalancerSourceRanges = exposure.LoadBalancerSourceRanges
	svc.Spec.LoadBalancerClass = exposure.LoadBalancerClass
	for _, p := range exposure.Ports {
		target := intstr.FromInt32(p.Port)
		if p.TargetPort != nil {
			target = *p.TargetPort
		}
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{
			Name: p.Name, Port: p.Port, TargetPort: target, Protocol: corev1.ProtocolTCP,
		})
	}
	return svc
}

// BuildRoleServices returns the Services of a cluster with an engine that route by role:
// NAME-rw to the primary and NAME-ro to the replicas, as the pods' role label says; none
// without an engine. They route to Ready pods only, on the database port, as ClusterIP Services
// (spec.service exposes the client Service NAME only).
func BuildRoleServices(dc *databasev1alpha1.DatabaseCluster) []*corev1.Service {
	if !dc.HasEngine() {
		return nil
	}
	return []*corev1.Service{
		roleService(dc, dc.ReadWriteServiceName(), databasev1alpha1.MemberRolePrimary),
		roleService(dc, dc.ReadOnlyServiceName(), databasev1alpha1.MemberRoleReplica),
	}
}

// roleService is the ClusterIP Service name of dc that routes to the members of role.
func roleService(dc *databasev1alpha1.DatabaseCluster, name string, role databasev1alpha1.MemberRole) *corev1.Service {
	svc := buildService(dc, name)
	svc.Spec.Selector[databasev1alpha1.RoleLabel] = string(role)
	return svc
}

// The annotations of the client Service that list the keys of the labels and annotations that
// came from spec.service, so that a key removed from the spec is removed from the Service too,
// while keys others added (a cloud controller's, a user's by hand) are kept.
const (
	userLabelsAnnotation      = "database.seed1b407122.io/service-labels"
	userAnnotationsAnnotation = "database.seed1b407122.io/service-annotations"
)

// userMetadata is the user's map with the operator's entries on top (nil when both are empty).
func userMetadata(user, operator map[string]string) map[string]string {
	if len(user)+len(operator) == 0 {
		return nil
	}
	merged := maps.Clone(user)
	if merged == nil {
		merged = map[string]string{}
	}
	maps.Copy(merged, operator)
	return merged
}

// userKeys are the keys of desired's labels (the operator's aside) and annotations: on the
// client Service, those spec.service gave, as the annotations that record them hold them.
func userKeys(desired *corev1.Service) map[string]string {
	keys := map[string]string{}
	var labelKeys []string
	for key := range desired.Labels {
		if key != labels.Name && key != labels.Instance && key != labels.ManagedBy {
			labelKeys = append(labelKeys, key)
		}
	}
	if len(labelKeys) > 0 {
		slices.Sort(labelKeys)
		keys[userLabelsAnnotation] = strings.Join(labelKeys, ",")
	}
	var annotationKeys []string
	for key := range desired.Annotations {
		if key != userLabelsAnnotation && key != userAnnotationsAnnotation {
			annotationKeys = append(annotationKeys, key)
		}
	}
	if len(annotationKeys) > 0 {
		slices.Sort(annotationKeys)
		keys[userAnnotationsAnnotation] = strings.Join(annotationKeys, ",")
	}
	return keys
}

// userKeysInSync says whether observed records the same user keys as desired has.
func userKeysInSync(desired, observed *corev1.Service) bool {
	want := userKeys(desired)
	return want[userLabelsAnnotation] == observed.Annotations[userLabelsAnnotation] &&
		want[userAnnotationsAnnotation] == observed.Annotations[userAnnotationsAnnotation]
}

// dropRemovedUserKeys deletes from observed the labels and annotations that an earlier
// spec.service set (as observed records them) and desired no longer has, and records desired's.
func dropRemovedUserKeys(desired, observed *corev1.Service) {
	had := observed.GetAnnotations()
	for _, key := range splitKeys(had[userLabelsAnnotation]) {
		if _, ok := desired.Labels[key]; !ok {
			delete(observed.Labels, key)
		}
	}
	for _, key := range splitKeys(had[userAnnotationsAnnotation]) {
		if _, ok := desired.Annotations[key]; !ok {
			delete(observed.Annotations, key)
		}
	}
	want := userKeys(desired)
	for _, key := range []string{userLabelsAnnotation, userAnnotationsAnnotation} {
		if value, ok := want[key]; ok {
			if observed.Annotations == nil {
				observed.Annotations = map[string]string{}
			}
			observed.Annotations[key] = value
		} else {
			delete(observed.Annotations, key)
		}
	}
}

func splitKeys(list string) []string {
	if list == "" {
		return nil
	}
	return strings.Split(list, ",")
}

// buildService is a ClusterIP Service of dc named name that routes the database port to the pods.
func buildService(dc *databasev1alpha1.DatabaseCluster, name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: ChildMeta(dc, name),
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

// ServiceInSync says whether observed holds the ports, selector, type and load balancer settings
// of desired, and records the same keys of spec.service's labels and annotations. A node port
// the API server allocated (none in desired) is not a difference, nor an external traffic policy
// desired leaves to the API server's default.
func ServiceInSync(desired, observed *corev1.Service) bool {
	return observed.Spec.Type == desired.Spec.Type &&
		equality.Semantic.DeepEqual(desired.Spec.Selector, observed.Spec.Selector) &&
		observed.Spec.PublishNotReadyAddresses == desired.Spec.PublishNotReadyAddresses &&
		portsInSync(desired.Spec.Ports, observed.Spec.Ports) &&
		slices.Equal(desired.Spec.LoadBalancerSourceRanges, observed.Spec.LoadBalancerSourceRanges) &&
		ptr.Equal(desired.Spec.LoadBalancerClass, observed.Spec.LoadBalancerClass) &&
		(desired.Spec.ExternalTrafficPolicy == "" || desired.Spec.ExternalTrafficPolicy == observed.Spec.ExternalTrafficPolicy) &&
		userKeysInSync(desired, observed)
}

// MergeService writes into observed the ports, selector, type and load balancer settings of
// desired, and the labels and annotations spec.service gives (removing those it no longer
// gives). clusterIP is never written: it is immutable once allocated.
func MergeService(desired, observed *corev1.Service) {
	observed.Spec.Type = desired.Spec.Type
	observed.Spec.Selector = desired.Spec.Selector
	observed.Spec.PublishNotReadyAddresses = desired.Spec.PublishNotReadyAddresses
	observed.Spec.Ports = desired.Spec.Ports
	observed.Spec.LoadBalancerSourceRanges = desired.Spec.LoadBalancerSourceRanges
	observed.Spec.LoadBalancerClass = desired.Spec.LoadBalancerClass
	if desired.Spec.ExternalTrafficPolicy != "" {
		observed.Spec.ExternalTrafficPolicy = desired.Spec.ExternalTrafficPolicy
	}
	dropRemovedUserKeys(desired, observed)
}

// portsInSync compares the ports of a Service; a node port the API server allocated (none in
// desired) is not a difference.
func portsInSync(desired, observed []corev1.ServicePort) bool {
	if len(desired) != len(observed) {
		return false
	}
	for i := range desired {
		have := observed[i]
		if desired[i].NodePort == 0 {
			have.NodePort = 0
		}
		if !equality.Semantic.DeepDerivative(desired[i], have) {
			return false
		}
	}
	return true
}
