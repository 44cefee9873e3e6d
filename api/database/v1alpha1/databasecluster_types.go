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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultPort is the port the database listens on when spec.port is not set.
const DefaultPort int32 = 9000

// PVCRetentionPolicyType says what happens to the claims of a DatabaseCluster.
// +kubebuilder:validation:Enum=Retain;Delete
type PVCRetentionPolicyType string

const (
	// RetainPVC keeps the claims and the data on them.
	RetainPVC PVCRetentionPolicyType = "Retain"
	// DeletePVC deletes the claims, and with them the data.
	DeletePVC PVCRetentionPolicyType = "Delete"
)

// StorageSpec describes the volume each database pod gets.
// +kubebuilder:validation:XValidation:rule="!has(self.autoGrow) || !isQuantity(self.size) || !isQuantity(string(self.autoGrow.maxSize)) || quantity(string(self.autoGrow.maxSize)).compareTo(quantity(self.size)) >= 0",fieldPath=".autoGrow.maxSize",message="autoGrow.maxSize must be at least size: claims never shrink, so a cap below the size they already have could never hold"
type StorageSpec struct {
	// StorageClassName is the StorageClass of the claims. It cannot be changed once set.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')`,message="storageClassName must be a StorageClass name (a DNS subdomain: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit): the API server refuses claims of any other class"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="storageClassName is immutable: create a new DatabaseCluster to move to another StorageClass"
	StorageClassName string `json:"storageClassName"`

	// Size is the requested capacity of each claim, as a Kubernetes quantity (e.g. 10Gi).
	// It may grow, which expands every claim, and never shrink.
	// +required
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$`
	// +kubebuilder:validation:XValidation:rule="quantity(self).compareTo(quantity(oldSelf)) >= 0",message="storage size cannot shrink: volumes can only be expanded"
	// +kubebuilder:validation:XValidation:rule="!isQuantity(self) || quantity(self).isGreaterThan(quantity('0'))",message="storage size must be greater than 0: a claim of size 0 can hold no data"
	Size string `json:"size"`

	// AutoGrow lets the operator grow each member's claim before it fills, up to a cap
	// (AutoGrowSpec). Unset: claims grow only with size.
	// +optional
	AutoGrow *AutoGrowSpec `json:"autoGrow,omitempty"`
}

// PVCRetentionPolicy says whether claims are kept when the cluster is deleted or scaled down.
type PVCRetentionPolicy struct {
	// WhenDeleted applies when the DatabaseCluster is deleted.
	// +optional
	// +kubebuilder:default=Retain
	WhenDeleted PVCRetentionPolicyType `json:"whenDeleted,omitempty"`

	// WhenScaled applies to the claims of pods removed by a scale-down.
	// +optional
	// +kubebuilder:default=Retain
	WhenScaled PVCRetentionPolicyType `json:"whenScaled,omitempty"`
}

// PodDisruptionBudgetSpec configures the PodDisruptionBudget of the cluster.
type PodDisruptionBudgetSpec struct {
	// Enabled creates a PodDisruptionBudget with maxUnavailable 1 when replicas > 1.
	// +optional
	// +kubebuilder:default=true
	Enabled *bool `json:"enabled,omitempty"`
}

// SecurityContextSpec is the user and groups the database container runs as. The pods keep the
// restricted Pod Security profile whatever is set here: runAsNonRoot, no privilege escalation,
// every capability dropped, the RuntimeDefault seccomp profile.
type SecurityContextSpec struct {
	// RunAsUser is the uid of the database process. Unset: the image's USER, which must then be
	// numeric and not 0 (the kubelet refuses to start a container it cannot prove non-root).
	// Images that run as root by default (postgres, etcd) need it: e.g. 999 for the official
	// postgres image, 65532 for etcd.
	// +optional
	// +kubebuilder:validation:Maximum=2147483647
	// +kubebuilder:validation:XValidation:rule="self > 0",message="runAsUser must be a non-root uid (1 or more): database pods never run as root (the restricted Pod Security profile); use the uid of the image's database user, e.g. 999 for postgres"
	RunAsUser *int64 `json:"runAsUser,omitempty"`

	// RunAsGroup is the primary gid of the database process. Unset: the image's group.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2147483647
	RunAsGroup *int64 `json:"runAsGroup,omitempty"`

	// FSGroup owns the data volume: the kubelet makes the volume's root group-writable by it and
	// adds it to the process's groups, so that a non-root database can write its data directory.
	// Default 65532.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2147483647
	FSGroup *int64 `json:"fsGroup,omitempty"`
}

// MonitoringSpec says where the database image serves its own Prometheus metrics. The operator
// names the port "metrics" in the pod template and, when the Prometheus Operator's PodMonitor
// CRD (monitoring.coreos.com/v1) is installed, keeps a PodMonitor NAME that scrapes every pod.
type MonitoringSpec struct {
	// Port is the TCP port the database serves its metrics on. It is not spec.port: a metrics
	// port of its own is named "metrics" in the pod template, and a container cannot declare one
	// port twice.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port"`

	// Path is the HTTP path of the metrics. Default /metrics.
	// +optional
	// +kubebuilder:default="/metrics"
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="self.startsWith('/')",message="path must start with '/': it is the HTTP path Prometheus requests on the metrics port, e.g. /metrics"
	Path string `json:"path,omitempty"`

	// Interval is how often Prometheus scrapes the pods, as a Prometheus duration (30s, 1m).
	// Empty: Prometheus's own scrape interval.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule=`self.matches('^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$')`,message="interval must be a Prometheus duration such as 30s, 1m or 1m30s (units ms, s, m, h, d, w, y)"
	Interval string `json:"interval,omitempty"`
}

// BootstrapSpec says where the data of a new cluster comes from.
type BootstrapSpec struct {
	// FromBackup restores every member's data claim from its snapshot in a DatabaseBackup, before
	// the StatefulSet exists: a restore after the old cluster is gone, a clone under another name,
	// or a clone into another namespace (fromBackup.namespace). The backup must be Completed,
	// from a cluster of at most spec.replicas members, with no snapshot larger than
	// spec.storage.size.
	// +required
	FromBackup BackupSource `json:"fromBackup"`
}

// BackupSource names a DatabaseBackup.
type BackupSource struct {
	// Name of the DatabaseBackup.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// Namespace of the DatabaseBackup. Empty: the cluster's namespace. A backup of another
	// namespace is restored only when that backup allows it: its spec.restoreAllowedNamespaces
	// lists this cluster's namespace (the owner of the data decides, not the one who asks). The
	// operator then copies each snapshot into this namespace (a VolumeSnapshotContent with
	// deletionPolicy Retain on the same snapshot handle, and a VolumeSnapshot bound to it) and
	// deletes the copies once the claims restored from them are bound; the backup, its snapshots
	// and their contents are never changed.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="namespace must be a namespace name (a DNS label: lowercase letters, digits and '-', starting and ending with a letter or digit)"
	Namespace string `json:"namespace,omitempty"`
}

// DatabaseClusterSpec is the desired state of a DatabaseCluster.
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || self.replicas >= self.minReplicas",fieldPath=".replicas",message="replicas cannot be below minReplicas: the cluster needs that many members (e.g. for its quorum); lower minReplicas first to go below it"
// +kubebuilder:validation:XValidation:rule="!has(self.autoHeal) || !has(self.autoHeal.replaceLostMembers) || !self.autoHeal.replaceLostMembers || self.replicas > 1",fieldPath=".autoHeal.replaceLostMembers",message="autoHeal.replaceLostMembers needs replicas of 2 or more: replacing the only member deletes the only copy of the data"
// +kubebuilder:validation:XValidation:rule="!has(self.storage.autoGrow) || (has(self.port) ? self.port : 9000) != 9190",fieldPath=".port",message="port cannot be 9190 while storage.autoGrow is set: the operator's storage-agent sidecar listens on it"
// +kubebuilder:validation:XValidation:rule="!has(self.storage.autoGrow) || !has(self.monitoring) || self.monitoring.port != 9190",fieldPath=".monitoring.port",message="monitoring.port cannot be 9190 while storage.autoGrow is set: the operator's storage-agent sidecar listens on it"
// +kubebuilder:validation:XValidation:rule="!has(self.storage.autoGrow) || !has(self.sidecars) || self.sidecars.all(c, c.name != 'storage-agent')",fieldPath=".sidecars",message="sidecars cannot be named storage-agent while storage.autoGrow is set: the operator adds a sidecar of that name"
// +kubebuilder:validation:XValidation:rule="has(self.bootstrap) == has(oldSelf.bootstrap)",message="bootstrap is set when the cluster is created and never added or removed: create a new DatabaseCluster to restore a backup"
// +kubebuilder:validation:XValidation:rule="!has(self.monitoring) || self.monitoring.port != (has(self.port) ? self.port : 9000)",fieldPath=".monitoring.port",message="monitoring.port must differ from spec.port: the database port is named db and the metrics port metrics, and a container cannot declare one port twice"
// +kubebuilder:validation:XValidation:rule="!has(self.service) || !has(self.service.ports) || self.service.ports.all(p, p.port != (has(self.port) ? self.port : 9000))",fieldPath=".service.ports",message="service.ports cannot use spec.port: the client Service already exposes the database port as db"
// +kubebuilder:validation:XValidation:rule="(has(self.engine) ? self.engine : 'none') == (has(oldSelf.engine) ? oldSelf.engine : 'none')",fieldPath=".engine",message="engine is set when the cluster is created and never changes: the members' data and roles were made for it; create a new DatabaseCluster (e.g. bootstrapped from a backup) to change it"
// +kubebuilder:validation:XValidation:rule="!has(self.roles) || (has(self.engine) && self.engine != 'none')",fieldPath=".roles",message="roles needs engine etcd or postgresql: without an engine the operator knows no roles"
// +kubebuilder:validation:XValidation:rule="!has(self.roles) || !has(self.roles.failover) || !has(self.roles.failover.enabled) || !self.roles.failover.enabled || self.replicas >= 2",fieldPath=".roles.failover.enabled",message="roles.failover.enabled needs replicas of 2 or more: with one member there is no replica to promote"
// +kubebuilder:validation:XValidation:rule="!has(self.roles) || !has(self.roles.synchronous) || self.roles.synchronous.number < self.replicas",fieldPath=".roles.synchronous.number",message="roles.synchronous.number must be below replicas: the primary cannot wait for more replicas than the cluster has, and a commit that waits for every replica stops with the first one down"
// +kubebuilder:validation:XValidation:rule="!has(self.roles) || !has(self.roles.synchronous) || (has(self.engine) && self.engine == 'postgresql')",fieldPath=".roles.synchronous",message="roles.synchronous needs engine postgresql: it sets PostgreSQL's synchronous_standby_names (etcd commits by quorum already)"
// +kubebuilder:validation:XValidation:rule="!has(self.engine) || self.engine == 'none' || (has(self.port) ? self.port : 9000) != 9191",fieldPath=".port",message="port cannot be 9191 with an engine: the operator's member agent listens on it"
// +kubebuilder:validation:XValidation:rule="!has(self.engine) || self.engine == 'none' || !has(self.monitoring) || self.monitoring.port != 9191",fieldPath=".monitoring.port",message="monitoring.port cannot be 9191 with an engine: the operator's member agent listens on it"
// +kubebuilder:validation:XValidation:rule="!has(self.engine) || self.engine == 'none' || !has(self.sidecars) || self.sidecars.all(c, c.name != 'storage-agent')",fieldPath=".sidecars",message="sidecars cannot be named storage-agent with an engine: the operator adds a sidecar of that name (its member agent)"
// +kubebuilder:validation:XValidation:rule="!has(self.engine) || self.engine != 'etcd' || !has(self.args) || self.args.all(a, !a.matches('^--?initial-cluster(-state)?(=|$)'))",fieldPath=".args",message="args cannot set --initial-cluster or --initial-cluster-state with engine etcd: the operator owns etcd's membership and gives each member its own (ETCD_INITIAL_CLUSTER and ETCD_INITIAL_CLUSTER_STATE), so that members can be added and removed"
// +kubebuilder:validation:XValidation:rule="!has(self.engine) || self.engine != 'etcd' || (has(self.args) && self.args.exists(a, a.startsWith('--initial-advertise-peer-urls=') && a.contains('$(')))",fieldPath=".args",message="args must set --initial-advertise-peer-urls with engine etcd, naming the member through the downward API (e.g. https://$(POD_NAME).NAME-headless.$(POD_NAMESPACE).svc:2380): the operator announces each member to the others at that URL"
type DatabaseClusterSpec struct {
	// Replicas is the number of database pods. kubectl scale, a HorizontalPodAutoscaler or KEDA
	// may set it through the scale subresource, within minReplicas and 9.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=9
	Replicas *int32 `json:"replicas"`

	// MinReplicas is the fewest members the cluster may be scaled to, by anyone, autoscalers
	// included: e.g. 3 for a database that needs a quorum of 2. Unset: 1.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=9
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// Image is the database container image.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[^[:space:]]+$')`,message="image must be an image reference without whitespace (e.g. registry.example.com/db:1.0): no registry serves a name with spaces, so the pods could never start"
	Image string `json:"image"`

	// Resources are the requests and limits of the database container. The cpu, memory and
	// ephemeral-storage limits must be at least their requests; claims are not supported (the
	// pods declare no resource claims).
	// +required
	// +kubebuilder:validation:XValidation:rule=`!has(self.limits) || !has(self.requests) || !('cpu' in self.limits) || !('cpu' in self.requests) || !isQuantity(string(self.limits['cpu'])) || !isQuantity(string(self.requests['cpu'])) || quantity(string(self.limits['cpu'])).compareTo(quantity(string(self.requests['cpu']))) >= 0`,message="limits.cpu must be at least requests.cpu: the API server refuses a container whose limit is below its request"
	// +kubebuilder:validation:XValidation:rule=`!has(self.limits) || !has(self.requests) || !('memory' in self.limits) || !('memory' in self.requests) || !isQuantity(string(self.limits['memory'])) || !isQuantity(string(self.requests['memory'])) || quantity(string(self.limits['memory'])).compareTo(quantity(string(self.requests['memory']))) >= 0`,message="limits.memory must be at least requests.memory: the API server refuses a container whose limit is below its request"
	// +kubebuilder:validation:XValidation:rule=`!has(self.limits) || !has(self.requests) || !('ephemeral-storage' in self.limits) || !('ephemeral-storage' in self.requests) || !isQuantity(string(self.limits['ephemeral-storage'])) || !isQuantity(string(self.requests['ephemeral-storage'])) || quantity(string(self.limits['ephemeral-storage'])).compareTo(quantity(string(self.requests['ephemeral-storage']))) >= 0`,message="limits.ephemeral-storage must be at least requests.ephemeral-storage: the API server refuses a container whose limit is below its request"
	// +kubebuilder:validation:XValidation:rule="!has(self.claims) || size(self.claims) == 0",message="claims must be empty: the database pods declare no resource claims for the container to use"
	Resources corev1.ResourceRequirements `json:"resources"`

	// Storage is the volume of each database pod.
	// +required
	Storage StorageSpec `json:"storage"`

	// Port is the TCP port the database listens on and the Services expose.
	// +optional
	// +kubebuilder:default=9000
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`

	// Env are extra environment variables of the database container.
	// +optional
	// +listType=map
	// +listMapKey=name
	Env []corev1.EnvVar `json:"env,omitempty"`

	// Command replaces the image's ENTRYPOINT. Needed by images that name their program in CMD
	// only (the upstream etcd image: CMD ["/usr/local/bin/etcd"]), where args alone would replace
	// the program itself.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Command []string `json:"command,omitempty"`

	// Args are the arguments of the database container. With engine etcd they must set
	// --initial-advertise-peer-urls and must not set --initial-cluster or
	// --initial-cluster-state: the operator owns etcd's membership.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=4096
	Args []string `json:"args,omitempty"`

	// SecurityContext sets the user and groups of the database container.
	// +optional
	SecurityContext *SecurityContextSpec `json:"securityContext,omitempty"`

	// NodeSelector constrains the nodes the pods run on. Keys and values are those of labels.
	// +optional
	// +kubebuilder:validation:MaxProperties=15
	// +kubebuilder:validation:XValidation:rule=`self.all(k, k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$') && (!k.contains('/') || k.indexOf('/') <= 253))`,message="nodeSelector keys must be label keys, as they name node labels: an optional prefix (a DNS subdomain of at most 253 characters) and '/', then a name of 1 to 63 letters, digits, '-', '_' or '.' that starts and ends with a letter or digit"
	// +kubebuilder:validation:XValidation:rule=`self.all(k, size(self[k]) <= 63 && !self[k].matches('[^-.\\w]') && !(self[k].startsWith('-') || self[k].startsWith('.') || self[k].startsWith('_') || self[k].endsWith('-') || self[k].endsWith('.') || self[k].endsWith('_')))`,message="nodeSelector values must be label values, as they match node labels: empty, or 1 to 63 letters, digits, '-', '_' or '.' that start and end with a letter or digit"
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations of the database pods.
	// +optional
	// +listType=atomic
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// Affinity replaces the default affinity (pods preferably on different nodes).
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// PriorityClassName of the database pods.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')`,message="priorityClassName must be a PriorityClass name (a DNS subdomain: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit): the API server refuses pods with any other"
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// AutomountServiceAccountToken mounts a token of the pods' ServiceAccount (the namespace's
	// "default") into the database pods when true. Unset or false: no token, since a database
	// does not talk to the Kubernetes API and a mounted token is a credential anyone who gets
	// into the pod could use.
	// +optional
	AutomountServiceAccountToken *bool `json:"automountServiceAccountToken,omitempty"`

	// PodLabels are added to the database pods. They cannot set the operator's labels
	// (app.kubernetes.io/name, instance and managed-by), which select the pods.
	// +optional
	// +kubebuilder:validation:MaxProperties=15
	// +kubebuilder:validation:XValidation:rule=`self.all(k, k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$') && (!k.contains('/') || k.indexOf('/') <= 253))`,message="podLabels keys must be label keys: an optional prefix (a DNS subdomain of at most 253 characters) and '/', then a name of 1 to 63 letters, digits, '-', '_' or '.' that starts and ends with a letter or digit"
	// +kubebuilder:validation:XValidation:rule=`self.all(k, size(self[k]) <= 63 && !self[k].matches('[^-.\\w]') && !(self[k].startsWith('-') || self[k].startsWith('.') || self[k].startsWith('_') || self[k].endsWith('-') || self[k].endsWith('.') || self[k].endsWith('_')))`,message="podLabels values must be label values: empty, or 1 to 63 letters, digits, '-', '_' or '.' that start and end with a letter or digit"
	// +kubebuilder:validation:XValidation:rule="!('app.kubernetes.io/name' in self) && !('app.kubernetes.io/instance' in self) && !('app.kubernetes.io/managed-by' in self)",message="podLabels cannot set app.kubernetes.io/name, app.kubernetes.io/instance or app.kubernetes.io/managed-by: the operator sets them to select the cluster's pods"
	PodLabels map[string]string `json:"podLabels,omitempty"`

	// PodAnnotations are added to the database pods. Keys are those of labels.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule=`self.all(k, k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$') && (!k.contains('/') || k.indexOf('/') <= 253))`,message="podAnnotations keys must be annotation keys: an optional prefix (a DNS subdomain of at most 253 characters) and '/', then a name of 1 to 63 letters, digits, '-', '_' or '.' that starts and ends with a letter or digit"
	PodAnnotations map[string]string `json:"podAnnotations,omitempty"`

	// PVCRetentionPolicy says whether claims are deleted with the cluster or on scale-down.
	// Data is kept unless this says Delete.
	// +optional
	// +kubebuilder:default={whenDeleted: Retain, whenScaled: Retain}
	PVCRetentionPolicy *PVCRetentionPolicy `json:"pvcRetentionPolicy,omitempty"`

	// Paused stops the operator from changing any child while true.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// Bootstrap restores the cluster's data from a backup when it is created. Immutable.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="bootstrap is immutable: it says where the data came from when the cluster was created"
	Bootstrap *BootstrapSpec `json:"bootstrap,omitempty"`

	// Hibernated scales the cluster to zero pods while true and keeps everything else: the
	// claims and their data (whatever pvcRetentionPolicy.whenScaled says), the Services, the
	// PodDisruptionBudget and the status. False brings back spec.replicas pods on the same
	// claims.
	// +optional
	Hibernated bool `json:"hibernated,omitempty"`

	// PodDisruptionBudget configures the PodDisruptionBudget of the cluster.
	// +optional
	// +kubebuilder:default={enabled: true}
	PodDisruptionBudget *PodDisruptionBudgetSpec `json:"podDisruptionBudget,omitempty"`

	// Monitoring names the port and path of the database's own metrics: the pods get a container
	// port "metrics", and a PodMonitor NAME (Prometheus Operator) scrapes them when its CRD is
	// installed; the MonitoringReady condition says whether it is.
	// +optional
	Monitoring *MonitoringSpec `json:"monitoring,omitempty"`

	// Service shapes the client Service NAME: its type (ClusterIP, NodePort, LoadBalancer),
	// annotations, labels and extra ports. Unset: a ClusterIP Service with the database port.
	// +optional
	Service *ServiceSpec `json:"service,omitempty"`

	// Config gives the database its configuration files, mounted read-only at
	// /etc/database/config: inline, or from a ConfigMap of yours. A change of their content
	// rolls the pods one at a time.
	// +optional
	Config *ConfigSpec `json:"config,omitempty"`

	// Credentials gives the database a user name and a password in a Secret: one the operator
	// generates once (NAME-credentials), or one of yours. The database container reads them as
	// DATABASE_USERNAME and DATABASE_PASSWORD and as files under /etc/database/credentials.
	// +optional
	Credentials *CredentialsSpec `json:"credentials,omitempty"`

	// TLS makes the database serve TLS, with a certificate from the operator's own CA for the
	// cluster or from a kubernetes.io/tls Secret of yours, mounted at /etc/database/tls.
	// +optional
	TLS *TLSSpec `json:"tls,omitempty"`

	// Rollout says when a rollout is stuck (RolloutSpec); unset: progressDeadlineSeconds 600.
	// +optional
	Rollout *RolloutSpec `json:"rollout,omitempty"`

	// AutoHeal says when a member is lost with its node and whether the operator replaces it
	// (AutoHealSpec); unset: lostMemberAfterSeconds 300, replaceLostMembers false.
	// +optional
	AutoHeal *AutoHealSpec `json:"autoHeal,omitempty"`

	// Engine says how the operator learns and changes the members' roles: none (default; the
	// StatefulSet rolls the pods and the operator knows no roles, as in 0.4), etcd or
	// postgresql. Set when the cluster is created; it never changes.
	// +optional
	Engine Engine `json:"engine,omitempty"`

	// Roles says how the operator updates the primary, whether it fails over, and PostgreSQL's
	// synchronous replication. Needs an engine.
	// +optional
	Roles *RolesSpec `json:"roles,omitempty"`

	PodExtensions `json:",inline"`
}

// DatabaseClusterStatus is the observed state of a DatabaseCluster.
type DatabaseClusterStatus struct {
	// Replicas is the number of pods the StatefulSet has.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// ReadyReplicas is the number of Ready pods.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// UpdatedReplicas is the number of pods at the current revision.
	// +optional
	UpdatedReplicas int32 `json:"updatedReplicas,omitempty"`

	// CurrentImage is the image of the StatefulSet's pod template.
	// +optional
	CurrentImage string `json:"currentImage,omitempty"`

	// Selector is the label selector of the cluster's pods, as a string: the scale subresource
	// reports it, so that kubectl scale, a HorizontalPodAutoscaler or KEDA can count the pods.
	// +optional
	Selector string `json:"selector,omitempty"`

	// CertificateNotAfter is when the pods' serving certificate (spec.tls) expires.
	// +optional
	CertificateNotAfter *metav1.Time `json:"certificateNotAfter,omitempty"`

	// ObservedGeneration is the generation of the spec the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// RestoredFromBackup names the DatabaseBackup the member claims were restored from, once
	// they were created from its snapshots.
	// +optional
	RestoredFromBackup string `json:"restoredFromBackup,omitempty"`

	// Storage is the usage of the members' data volumes, while spec.storage.autoGrow is set.
	// +optional
	Storage *StorageStatus `json:"storage,omitempty"`

	// Conditions: Available, Progressing, Degraded, Resizing, Paused, Hibernated, MemberLost,
	// MonitoringReady while spec.monitoring is set, and StorageAutoGrow while
	// spec.storage.autoGrow is set.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// CurrentPrimary is the member observed as the only writable one (etcd: the leader), with
	// an engine.
	// +optional
	CurrentPrimary string `json:"currentPrimary,omitempty"`

	// TargetPrimary is the member a switchover or failover in progress hands the primary role
	// to; empty when none is in progress.
	// +optional
	TargetPrimary string `json:"targetPrimary,omitempty"`

	// Switchover is the switchover or failover in progress, nil when none is.
	// +optional
	Switchover *SwitchoverStatus `json:"switchover,omitempty"`

	// Members are the members' roles and replication positions, with an engine.
	// +optional
	// +listType=map
	// +listMapKey=name
	Members []MemberStatus `json:"members,omitempty"`
}

// The rules on the name are checked on create only (optionalOldSelf, oldSelf has no value): a name
// never changes, and a cluster stored before a rule existed must still take updates, such as the
// removal of its finalizer. The length is MaxNameLength, 52: the pods' controller-revision-hash
// label is "NAME-<hash of up to 10 characters>" and label values are limited to 63
// (63 - 1 - 10 = 52); the arithmetic for every other child is on MaxNameLength. The client
// Service is NAME and the headless one NAME-headless, and Service names are DNS-1035 labels: no
// dots (which DatabaseCluster names, DNS subdomains, may have) and a letter first.
// +kubebuilder:validation:XValidation:rule="oldSelf.hasValue() || size(self.metadata.name) <= 52",optionalOldSelf=true,message="metadata.name must be at most 52 characters: every pod carries the label controller-revision-hash=NAME-<hash of up to 10 characters>, and label values are limited to 63"
// +kubebuilder:validation:XValidation:rule="oldSelf.hasValue() || self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",optionalOldSelf=true,message="metadata.name must be a DNS-1035 label (lowercase letters, digits and '-', starting with a letter, ending with a letter or digit, no dots): the client and headless Services are named after it"

// DatabaseCluster is a replicated database: a StatefulSet with persistent storage, a headless and
// a client Service, and a PodDisruptionBudget, kept in place by the operator.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:shortName=dbc,categories=all;database
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].reason`
// +kubebuilder:printcolumn:name="Primary",type=string,JSONPath=`.status.currentPrimary`
// +kubebuilder:printcolumn:name="Hibernated",type=string,JSONPath=`.status.conditions[?(@.type=="Hibernated")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type DatabaseCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec DatabaseClusterSpec `json:"spec"`

	// +optional
	Status DatabaseClusterStatus `json:"status,omitempty"`
}

// DatabaseClusterList is a list of DatabaseClusters.
// +kubebuilder:object:root=true
type DatabaseClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []DatabaseCluster `json:"items"`
}

func init() {
	register(&DatabaseCluster{}, &DatabaseClusterList{})
}
