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

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// PodExtensions are what a team adds to the database pods: containers beside the database,
// volumes, probes and the pod's scheduling and shutdown. Every field can be changed at any time;
// a change rolls the pods like an image change, one at a time, highest ordinal first. The
// operator's own parts (the container "database", the volumes data, config, credentials and
// tls, the paths under /var/lib/database and /etc/database) cannot be replaced: admission
// refuses a spec that names them. Two rules are checked by the operator, not at admission (the
// API server cannot bound the cost of comparing every name of one list with every name of
// another): a sidecar and an init container must not share a name, and every volumeMounts entry
// must name a volume of spec.volumes; a spec that breaks one is reported by the Degraded
// condition, and no pod is changed.
type PodExtensions struct {
	// InitContainers run one after the other before the database container starts, and must
	// exit successfully (e.g. to prepare the data directory). A container that runs beside the
	// database belongs in sidecars.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=10
	// +kubebuilder:validation:XValidation:rule="self.all(c, c.name != 'database')",message="initContainers cannot be named database: the operator's database container has that name"
	// +kubebuilder:validation:XValidation:rule="self.all(c, has(c.image) && size(c.image) > 0)",message="every init container needs an image"
	// +kubebuilder:validation:XValidation:rule="self.all(c, !has(c.restartPolicy))",message="initContainers cannot set restartPolicy: an init container with restartPolicy Always runs beside the database, so put it in sidecars"
	InitContainers []corev1.Container `json:"initContainers,omitempty"`

	// Sidecars run beside the database for the whole life of the pod (an exporter, a backup
	// agent, a proxy). They are native sidecars: init containers with restartPolicy Always, so
	// the kubelet starts them before the database and stops them after it.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=10
	// +kubebuilder:validation:XValidation:rule="self.all(c, c.name != 'database')",message="sidecars cannot be named database: the operator's database container has that name"
	// +kubebuilder:validation:XValidation:rule="self.all(c, has(c.image) && size(c.image) > 0)",message="every sidecar needs an image"
	// +kubebuilder:validation:XValidation:rule="self.all(c, !has(c.restartPolicy) || c.restartPolicy == 'Always')",message="sidecars run for the whole life of the pod: restartPolicy must be Always or unset"
	Sidecars []corev1.Container `json:"sidecars,omitempty"`

	// Volumes are added to the pods, for volumeMounts and for the containers of sidecars and
	// initContainers (e.g. a Secret, a ConfigMap, an emptyDir). Sidecars and initContainers may
	// also mount the data volume ("data").
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="self.all(v, !(v.name in ['data', 'config', 'credentials', 'tls', 'agent-tls', 'role']))",message="volumes cannot be named data, config, credentials, tls, agent-tls or role: the operator adds volumes of those names (the data claim, spec.config, spec.credentials, spec.tls, the member agent's certificate and, with engine postgresql, the member's role)"
	Volumes []corev1.Volume `json:"volumes,omitempty"`

	// VolumeMounts are added to the database container; each names a volume of spec.volumes.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="self.all(m, m.mountPath != '/var/lib/database' && !m.mountPath.startsWith('/var/lib/database/'))",message="volumeMounts cannot mount at or under /var/lib/database: the data volume is mounted there"
	// +kubebuilder:validation:XValidation:rule="self.all(m, m.mountPath != '/etc/database' && !m.mountPath.startsWith('/etc/database/'))",message="volumeMounts cannot mount at or under /etc/database: the operator mounts spec.config, spec.credentials and spec.tls there"
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts,omitempty"`

	// EnvFrom sets environment variables of the database container from every key of a
	// ConfigMap or a Secret. Variables in spec.env win over these.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	EnvFrom []corev1.EnvFromSource `json:"envFrom,omitempty"`

	// ImagePullSecrets are the Secrets the kubelet uses to pull the images of the pods.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=8
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// ImagePullPolicy of the database container. Unset: Always for an image without a tag or
	// with the tag latest, IfNotPresent otherwise (the API server's own default).
	// +optional
	// +kubebuilder:validation:Enum=Always;IfNotPresent;Never
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`

	// ServiceAccountName is the ServiceAccount the pods run as. Unset: the namespace's default.
	// Its token is mounted only with automountServiceAccountToken: true.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')`,message="serviceAccountName must be a ServiceAccount name (a DNS subdomain: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit)"
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// TopologySpreadConstraints spread the members across zones, nodes or any other topology.
	// A constraint without a labelSelector selects this cluster's pods. Unset: the members are
	// spread across zones (topology.kubernetes.io/zone) and then nodes (kubernetes.io/hostname),
	// maxSkew 1, whenUnsatisfiable ScheduleAnyway: a quorum survives the loss of one zone or
	// node where the cluster has them, and a cluster larger than its zones or nodes still
	// schedules.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`

	// TerminationGracePeriodSeconds is how long the database may take to shut down after
	// SIGTERM before it is killed. Default 30.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`

	// Lifecycle hooks of the database container (e.g. a preStop that hands leadership over).
	// +optional
	Lifecycle *corev1.Lifecycle `json:"lifecycle,omitempty"`

	// StartupProbe of the database container. Unset: none.
	// +optional
	// +kubebuilder:validation:XValidation:rule="[has(self.exec), has(self.httpGet), has(self.tcpSocket), has(self.grpc)].filter(x, x).size() == 1",message="startupProbe needs exactly one handler: exec, httpGet, tcpSocket or grpc"
	// +kubebuilder:validation:XValidation:rule="!has(self.successThreshold) || self.successThreshold == 1",message="startupProbe.successThreshold must be 1"
	StartupProbe *corev1.Probe `json:"startupProbe,omitempty"`

	// LivenessProbe of the database container. Unset: a TCP check of the database port every 10
	// seconds after 15, restarting the container after 6 failures.
	// +optional
	// +kubebuilder:validation:XValidation:rule="[has(self.exec), has(self.httpGet), has(self.tcpSocket), has(self.grpc)].filter(x, x).size() == 1",message="livenessProbe needs exactly one handler: exec, httpGet, tcpSocket or grpc"
	// +kubebuilder:validation:XValidation:rule="!has(self.successThreshold) || self.successThreshold == 1",message="livenessProbe.successThreshold must be 1"
	LivenessProbe *corev1.Probe `json:"livenessProbe,omitempty"`

	// ReadinessProbe of the database container. Unset: a TCP check of the database port every 5
	// seconds, not Ready after 3 failures; with engine postgresql, the member agent's check that
	// the database answers (HTTP GET /readyz on port 9192) every 2 seconds, not Ready after 2
	// failures (a TCP check passes while the server is frozen). An exec probe runs in the
	// database's container, and stops with it when it is frozen.
	// +optional
	// +kubebuilder:validation:XValidation:rule="[has(self.exec), has(self.httpGet), has(self.tcpSocket), has(self.grpc)].filter(x, x).size() == 1",message="readinessProbe needs exactly one handler: exec, httpGet, tcpSocket or grpc"
	ReadinessProbe *corev1.Probe `json:"readinessProbe,omitempty"`
}

// ServiceSpec shapes the client Service NAME, through which clients reach the database. The
// headless Service NAME-headless, which gives each member its stable name, is not changed by it.
// +kubebuilder:validation:XValidation:rule="!has(self.loadBalancerClass) || self.type == 'LoadBalancer'",message="loadBalancerClass applies only to type LoadBalancer"
// +kubebuilder:validation:XValidation:rule="!has(self.loadBalancerSourceRanges) || self.type == 'LoadBalancer'",message="loadBalancerSourceRanges applies only to type LoadBalancer"
// +kubebuilder:validation:XValidation:rule="!has(self.externalTrafficPolicy) || self.type != 'ClusterIP'",message="externalTrafficPolicy applies only to types NodePort and LoadBalancer: a ClusterIP Service has no external traffic"
type ServiceSpec struct {
	// Type of the client Service: ClusterIP (default), NodePort or LoadBalancer.
	// +optional
	// +kubebuilder:default=ClusterIP
	// +kubebuilder:validation:Enum=ClusterIP;NodePort;LoadBalancer
	Type corev1.ServiceType `json:"type,omitempty"`

	// Annotations are added to the client Service (e.g. a cloud's load balancer settings).
	// Removing one here removes it from the Service.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule=`self.all(k, k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$') && (!k.contains('/') || k.indexOf('/') <= 253))`,message="service annotations keys must be annotation keys: an optional prefix (a DNS subdomain of at most 253 characters) and '/', then a name of 1 to 63 letters, digits, '-', '_' or '.' that starts and ends with a letter or digit"
	Annotations map[string]string `json:"annotations,omitempty"`

	// Labels are added to the client Service. They cannot set the operator's labels.
	// Removing one here removes it from the Service.
	// +optional
	// +kubebuilder:validation:MaxProperties=15
	// +kubebuilder:validation:XValidation:rule=`self.all(k, k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$') && (!k.contains('/') || k.indexOf('/') <= 253))`,message="service labels keys must be label keys: an optional prefix (a DNS subdomain of at most 253 characters) and '/', then a name of 1 to 63 letters, digits, '-', '_' or '.' that starts and ends with a letter or digit"
	// +kubebuilder:validation:XValidation:rule=`self.all(k, size(self[k]) <= 63 && !self[k].matches('[^-.\\w]') && !(self[k].startsWith('-') || self[k].startsWith('.') || self[k].startsWith('_') || self[k].endsWith('-') || self[k].endsWith('.') || self[k].endsWith('_')))`,message="service labels values must be label values: empty, or 1 to 63 letters, digits, '-', '_' or '.' that start and end with a letter or digit"
	// +kubebuilder:validation:XValidation:rule="!('app.kubernetes.io/name' in self) && !('app.kubernetes.io/instance' in self) && !('app.kubernetes.io/managed-by' in self)",message="service labels cannot set app.kubernetes.io/name, app.kubernetes.io/instance or app.kubernetes.io/managed-by: the operator sets them"
	Labels map[string]string `json:"labels,omitempty"`

	// LoadBalancerSourceRanges are the client CIDRs a LoadBalancer lets in, where the cloud
	// supports it. Empty: every client.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=43
	// +kubebuilder:validation:XValidation:rule="self.all(r, isCIDR(r))",message="loadBalancerSourceRanges must be CIDRs such as 10.0.0.0/8 or 2001:db8::/32"
	LoadBalancerSourceRanges []string `json:"loadBalancerSourceRanges,omitempty"`

	// LoadBalancerClass picks the load balancer implementation (type LoadBalancer only).
	// +optional
	// +kubebuilder:validation:MaxLength=253
	LoadBalancerClass *string `json:"loadBalancerClass,omitempty"`

	// ExternalTrafficPolicy of a NodePort or LoadBalancer Service: Cluster (the API server's
	// default) or Local (keeps the client's address, routes only to nodes running a member).
	// +optional
	// +kubebuilder:validation:Enum=Cluster;Local
	ExternalTrafficPolicy corev1.ServiceExternalTrafficPolicy `json:"externalTrafficPolicy,omitempty"`

	// Ports are extra ports of the client Service besides the database port (named db), e.g.
	// the metrics port of a sidecar.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:XValidation:rule="self.all(p, p.name != 'db')",message="service ports cannot be named db: the database port has that name"
	Ports []ServicePort `json:"ports,omitempty"`
}

// ServicePort is an extra TCP port of the client Service.
type ServicePort struct {
	// Name of the port, a DNS label (e.g. metrics).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$') && self.matches('[a-z]')",message="a service port name must be an IANA service name: lowercase letters, digits and '-', at least one letter, starting and ending with a letter or digit"
	Name string `json:"name"`

	// Port the Service exposes.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port"`

	// TargetPort is the container port traffic goes to: a number, or the name of a container
	// port (e.g. metrics). Unset: the same number as port.
	// +optional
	TargetPort *intstr.IntOrString `json:"targetPort,omitempty"`
}
