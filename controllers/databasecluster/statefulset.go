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
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/certs"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
	"github.com/seed1b407122/database-operator/controllers/internal/podsecurity"
)

// ContainerName is the name of the database container in every pod.
const ContainerName = "database"

// DataFSGroup is the fsGroup of the database pods: the group that owns the data volume.
const DataFSGroup int64 = 65532

// Probe timings of the database container. Liveness is more patient than readiness so that a
// slow database is taken out of the Service long before it is restarted. Every number is set,
// even where it equals the API server's default: the drift check compares numbers exactly.
const (
	probeTimeoutSeconds       = 1
	probeSuccessThreshold     = 1
	readinessPeriodSeconds    = 5
	readinessFailureThreshold = 3
	livenessInitialDelay      = 15
	livenessPeriodSeconds     = 10
	livenessFailureThreshold  = 6
)

// BuildStatefulSet returns the StatefulSet that runs the pods of dc. It fails when
// spec.storage.size is not a quantity, which the API server's validation already prevents, and
// when the pod extensions break a rule admission cannot check (checkPodExtensions).
func BuildStatefulSet(dc *databasev1alpha1.DatabaseCluster) (*appsv1.StatefulSet, error) {
	size, err := resource.ParseQuantity(dc.Spec.Storage.Size)
	if err != nil {
		return nil, fmt.Errorf("spec.storage.size %q is not a quantity: %w", dc.Spec.Storage.Size, err)
	}
	if err := checkPodExtensions(&dc.Spec); err != nil {
		return nil, err
	}
	return &appsv1.StatefulSet{
		ObjectMeta: childMeta(dc, dc.StatefulSetName()),
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To(dc.DesiredReplicas()),
			ServiceName: dc.HeadlessServiceName(),
			Selector:    &metav1.LabelSelector{MatchLabels: dc.SelectorLabels()},
			// Parallel: pods start together (databases bootstrap their members from each other's
			// stable names); rolling updates still replace one pod at a time, highest ordinal first.
			PodManagementPolicy: appsv1.ParallelPodManagement,
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{
				Type: appsv1.RollingUpdateStatefulSetStrategyType,
			},
			PersistentVolumeClaimRetentionPolicy: buildRetentionPolicy(dc),
			Template:                             buildPodTemplate(dc),
			VolumeClaimTemplates:                 []corev1.PersistentVolumeClaim{buildClaimTemplate(dc, size)},
		},
	}, nil
}

// buildRetentionPolicy is the StatefulSet's claim retention policy: the spec's, except that a
// stopped cluster (hibernated, or held by an Offline backup) retains the claims of the pods it
// stops whatever whenScaled says (stopping keeps the data; whenScaled is about replicas the user
// removed).
func buildRetentionPolicy(dc *databasev1alpha1.DatabaseCluster) *appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy {
	scaled := dc.WhenScaled()
	if dc.Stopped() {
		scaled = databasev1alpha1.RetainPVC
	}
	return &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
		WhenDeleted: retentionType(dc.WhenDeleted()),
		WhenScaled:  retentionType(scaled),
	}
}

func retentionType(p databasev1alpha1.PVCRetentionPolicyType) appsv1.PersistentVolumeClaimRetentionPolicyType {
	if p == databasev1alpha1.DeletePVC {
		return appsv1.DeletePersistentVolumeClaimRetentionPolicyType
	}
	return appsv1.RetainPersistentVolumeClaimRetentionPolicyType
}

func buildClaimTemplate(dc *databasev1alpha1.DatabaseCluster, size resource.Quantity) corev1.PersistentVolumeClaim {
	return corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: databasev1alpha1.DataVolumeName, Labels: dc.Labels()},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: ptr.To(dc.Spec.Storage.StorageClassName),
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: size},
			},
		},
	}
}

func buildPodTemplate(dc *databasev1alpha1.DatabaseCluster) corev1.PodTemplateSpec {
	labels := maps.Clone(dc.Spec.PodLabels)
	if labels == nil {
		labels = map[string]string{}
	}
	// The operator's labels are applied last so that podLabels can never break the selector;
	// managed-by lets the manager's label-selected cache see the pods.
	maps.Copy(labels, dc.Labels())
	annotations := maps.Clone(dc.Spec.PodAnnotations)
	if restartedAt, ok := dc.Annotations[databasev1alpha1.RestartedAtAnnotation]; ok {
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[databasev1alpha1.RestartedAtAnnotation] = restartedAt
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations},
		Spec: corev1.PodSpec{
			// Service links would add an environment variable per Service of the namespace.
			EnableServiceLinks: ptr.To(false),
			// No ServiceAccount token unless the spec asks for one (see the field's doc).
			AutomountServiceAccountToken:  ptr.To(ptr.Deref(dc.Spec.AutomountServiceAccountToken, false)),
			ServiceAccountName:            dc.Spec.ServiceAccountName,
			SecurityContext:               buildPodSecurityContext(dc.Spec.SecurityContext),
			InitContainers:                buildInitContainers(&dc.Spec),
			Containers:                    []corev1.Container{buildContainer(dc)},
			Volumes:                       append(inputVolumes(dc), dc.Spec.Volumes...),
			ImagePullSecrets:              dc.Spec.ImagePullSecrets,
			TerminationGracePeriodSeconds: terminationGracePeriod(&dc.Spec),
			Affinity:                      podAffinity(dc),
			TopologySpreadConstraints:     spreadConstraints(dc),
			NodeSelector:                  dc.Spec.NodeSelector,
			Tolerations:                   dc.Spec.Tolerations,
			PriorityClassName:             dc.Spec.PriorityClassName,
		},
	}
}

// buildPodSecurityContext is the pod's security context: the restricted Pod Security profile,
// and the user and groups of spec.securityContext.
func buildPodSecurityContext(spec *databasev1alpha1.SecurityContextSpec) *corev1.PodSecurityContext {
	if spec == nil {
		spec = &databasev1alpha1.SecurityContextSpec{}
	}
	security := podsecurity.RestrictedPod(spec.RunAsUser, spec.RunAsGroup)
	// A fresh volume's root belongs to root: without an fsGroup a non-root database cannot
	// write its data directory. The kubelet gives the volume to this group (group-writable,
	// setgid) and adds it to every container, whatever its user. OnRootMismatch: only a volume
	// whose root is not already right is walked.
	security.FSGroup = ptr.To(ptr.Deref(spec.FSGroup, DataFSGroup))
	security.FSGroupChangePolicy = ptr.To(corev1.FSGroupChangeOnRootMismatch)
	return security
}

func buildContainer(dc *databasev1alpha1.DatabaseCluster) corev1.Container {
	return corev1.Container{
		Name:            ContainerName,
		Image:           dc.Spec.Image,
		ImagePullPolicy: imagePullPolicy(&dc.Spec),
		Command:         dc.Spec.Command,
		Args:            dc.Spec.Args,
		EnvFrom:         dc.Spec.EnvFrom,
		Env:             append(dc.CredentialsEnv(), dc.Spec.Env...),
		Ports:           containerPorts(dc),
		Resources:       dc.Spec.Resources,
		VolumeMounts: slices.Concat([]corev1.VolumeMount{{
			Name: databasev1alpha1.DataVolumeName, MountPath: databasev1alpha1.DataMountPath,
		}}, inputMounts(dc), dc.Spec.VolumeMounts),
		StartupProbe:    explicitProbe(dc.Spec.StartupProbe),
		ReadinessProbe:  readinessProbe(&dc.Spec),
		LivenessProbe:   livenessProbe(&dc.Spec),
		Lifecycle:       dc.Spec.Lifecycle,
		SecurityContext: podsecurity.Restricted(),
	}
}

// readinessProbe is spec.readinessProbe, or a TCP check of the database port.
func readinessProbe(spec *databasev1alpha1.DatabaseClusterSpec) *corev1.Probe {
	if spec.ReadinessProbe != nil {
		return explicitProbe(spec.ReadinessProbe)
	}
	return tcpProbe(0, readinessPeriodSeconds, readinessFailureThreshold)
}

// livenessProbe is spec.livenessProbe, or a TCP check of the database port, more patient than
// the readiness check.
func livenessProbe(spec *databasev1alpha1.DatabaseClusterSpec) *corev1.Probe {
	if spec.LivenessProbe != nil {
		return explicitProbe(spec.LivenessProbe)
	}
	return tcpProbe(livenessInitialDelay, livenessPeriodSeconds, livenessFailureThreshold)
}

// tcpProbe is a TCP check of the database port with the given timings.
func tcpProbe(delay, period, failures int32) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:        corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString(databasev1alpha1.PortName)}},
		InitialDelaySeconds: delay,
		TimeoutSeconds:      probeTimeoutSeconds,
		PeriodSeconds:       period,
		SuccessThreshold:    probeSuccessThreshold,
		FailureThreshold:    failures,
	}
}

// containerPorts are the database port and, with spec.monitoring, the metrics port the
// PodMonitor scrapes by its name.
func containerPorts(dc *databasev1alpha1.DatabaseCluster) []corev1.ContainerPort {
	ports := []corev1.ContainerPort{{
		Name: databasev1alpha1.PortName, ContainerPort: dc.DatabasePort(), Protocol: corev1.ProtocolTCP,
	}}
	if m := dc.Spec.Monitoring; m != nil {
		ports = append(ports, corev1.ContainerPort{
			Name: databasev1alpha1.MetricsPortName, ContainerPort: m.Port, Protocol: corev1.ProtocolTCP,
		})
	}
	return ports
}

// podAffinity is the user's affinity, or by default a preference to spread the pods of the
// cluster across nodes (preferred, so that a cluster larger than the node count still schedules).
func podAffinity(dc *databasev1alpha1.DatabaseCluster) *corev1.Affinity {
	if dc.Spec.Affinity != nil {
		return dc.Spec.Affinity
	}
	return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			Weight: 100,
			PodAffinityTerm: corev1.PodAffinityTerm{
				LabelSelector: &metav1.LabelSelector{MatchLabels: dc.SelectorLabels()},
				TopologyKey:   corev1.LabelHostname,
			},
		}},
	}}
}

// statefulSetSpec keeps the fields of a StatefulSet the operator owns. Selector, serviceName,
// podManagementPolicy and volumeClaimTemplates are immutable: they are set on create only and
// never sent again.
var statefulSetSpec = child.Spec[*appsv1.StatefulSet]{
	InSync: func(desired, observed *appsv1.StatefulSet) bool {
		return ptr.Equal(desired.Spec.Replicas, observed.Spec.Replicas) &&
			equality.Semantic.DeepDerivative(desired.Spec.UpdateStrategy, observed.Spec.UpdateStrategy) &&
			equality.Semantic.DeepDerivative(desired.Spec.PersistentVolumeClaimRetentionPolicy,
				observed.Spec.PersistentVolumeClaimRetentionPolicy) &&
			templateInSync(desired.Spec.Template, observed.Spec.Template)
	},
	Merge: func(desired, observed *appsv1.StatefulSet) {
		observed.Spec.Replicas = desired.Spec.Replicas
		observed.Spec.UpdateStrategy = desired.Spec.UpdateStrategy
		observed.Spec.PersistentVolumeClaimRetentionPolicy = desired.Spec.PersistentVolumeClaimRetentionPolicy
		// A template in sync is kept as it is: a scale must not write defaults the stored
		// template lacks (spreadInSync), which would roll the pods.
		if templateChanged(desired, observed) {
			observed.Spec.Template = desired.Spec.Template
		}
	},
}

// templateInSync compares the pod template the operator wants with the one the API server
// stored. DeepDerivative ignores fields left empty in desired, which the API server defaults
// (terminationMessagePath, dnsPolicy, ...); the maps, lists and optional fields users control are
// compared exactly so that removing a pod label, an env var, an argument, the metrics port, a
// sidecar, a volume or a probe is applied too.
func templateInSync(desired, observed corev1.PodTemplateSpec) bool {
	want, have := desired.DeepCopy(), observed.DeepCopy()
	// The spread constraints have their own rule (spreadInSync).
	want.Spec.TopologySpreadConstraints, have.Spec.TopologySpreadConstraints = nil, nil
	if !equality.Semantic.DeepDerivative(*want, *have) || !spreadInSync(desired, observed) {
		return false
	}
	if !maps.Equal(desired.Labels, observed.Labels) || !maps.Equal(desired.Annotations, observed.Annotations) {
		return false
	}
	if !containersInSync(desired.Spec.Containers, observed.Spec.Containers) ||
		!containersInSync(desired.Spec.InitContainers, observed.Spec.InitContainers) {
		return false
	}
	return maps.Equal(desired.Spec.NodeSelector, observed.Spec.NodeSelector) &&
		len(desired.Spec.Tolerations) == len(observed.Spec.Tolerations) &&
		len(desired.Spec.Volumes) == len(observed.Spec.Volumes) &&
		len(desired.Spec.ImagePullSecrets) == len(observed.Spec.ImagePullSecrets) &&
		desired.Spec.ServiceAccountName == observed.Spec.ServiceAccountName &&
		ptr.Equal(desired.Spec.TerminationGracePeriodSeconds, observed.Spec.TerminationGracePeriodSeconds) &&
		userInSync(desired.Spec.SecurityContext, observed.Spec.SecurityContext)
}

// containersInSync compares the lists and optional fields of containers that DeepDerivative
// would let a removal slip through.
func containersInSync(desired, observed []corev1.Container) bool {
	if len(desired) != len(observed) {
		return false
	}
	for i := range desired {
		want, have := desired[i], observed[i]
		if len(want.Env) != len(have.Env) || len(want.EnvFrom) != len(have.EnvFrom) || len(want.Args) != len(have.Args) ||
			len(want.Command) != len(have.Command) || len(want.Ports) != len(have.Ports) ||
			len(want.VolumeMounts) != len(have.VolumeMounts) || !equality.Semantic.DeepEqual(want.Resources, have.Resources) ||
			(want.Lifecycle == nil) != (have.Lifecycle == nil) || !ptr.Equal(want.RestartPolicy, have.RestartPolicy) ||
			!probeInSync(want.StartupProbe, have.StartupProbe) || !probeInSync(want.LivenessProbe, have.LivenessProbe) ||
			!probeInSync(want.ReadinessProbe, have.ReadinessProbe) {
			return false
		}
	}
	return true
}

// probeInSync: a probe removed, an initial delay back to 0, or another kind of check is a change;
// the other timings are explicit in desired (explicitProbe) and compared by DeepDerivative.
func probeInSync(desired, observed *corev1.Probe) bool {
	if desired == nil || observed == nil {
		return desired == observed
	}
	return desired.InitialDelaySeconds == observed.InitialDelaySeconds &&
		ptr.Equal(desired.TerminationGracePeriodSeconds, observed.TerminationGracePeriodSeconds) &&
		(desired.Exec == nil) == (observed.Exec == nil) && (desired.HTTPGet == nil) == (observed.HTTPGet == nil) &&
		(desired.TCPSocket == nil) == (observed.TCPSocket == nil) && (desired.GRPC == nil) == (observed.GRPC == nil)
}

// templateHashAnnotation is the StatefulSet's (not its pods') record of the pod template the
// operator last wrote, as a SHA-256 of its JSON. The drift check compares templates field by
// field and cannot see every removal (an item of a projected volume, a word of a probe's
// command: DeepDerivative takes what desired leaves out as "whatever the server has"); the hash
// sees any change of the spec's template. On the StatefulSet's metadata it rolls no pod itself,
// and a StatefulSet without it (written by an operator before it) is left as it is until its
// template changes: an upgrade rolls nothing.
const templateHashAnnotation = "database.seed1b407122.io/template-hash"

// withTemplateHash records the hash of sts's pod template on sts.
func withTemplateHash(sts *appsv1.StatefulSet) {
	data, err := json.Marshal(sts.Spec.Template)
	if err != nil {
		// A PodTemplateSpec always marshals; without a hash the field-by-field check decides.
		return
	}
	if sts.Annotations == nil {
		sts.Annotations = map[string]string{}
	}
	sts.Annotations[templateHashAnnotation] = certs.Checksum(data)
}

// templateChanged says whether the pod template desired asks for differs from observed's: by
// the field-by-field check, or by the hash both record.
func templateChanged(desired, observed *appsv1.StatefulSet) bool {
	if !templateInSync(desired.Spec.Template, observed.Spec.Template) {
		return true
	}
	want, had := desired.Annotations[templateHashAnnotation], observed.Annotations[templateHashAnnotation]
	return want != "" && had != "" && want != had
}

// userInSync: the uid and gid the user may remove from the spec (back to the image's) are
// compared exactly.
func userInSync(desired, observed *corev1.PodSecurityContext) bool {
	if desired == nil || observed == nil {
		return desired == observed
	}
	return ptr.Equal(desired.RunAsUser, observed.RunAsUser) && ptr.Equal(desired.RunAsGroup, observed.RunAsGroup)
}
