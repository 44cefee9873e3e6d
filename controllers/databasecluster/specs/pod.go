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
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/certs"
	"github.com/seed1b407122/database-operator/controllers/internal/podsecurity"
	"github.com/seed1b407122/database-operator/controllers/storageagent"
)

// ContainerName is the name of the database container in every pod.
const ContainerName = "database"

// DataFSGroup is the fsGroup of the database pods: the group that owns the data volume.
const DataFSGroup int64 = 65532

// File modes of the input volumes: the database's user (through the pod's fsGroup) reads the
// credential and certificate files, and nobody else.
const (
	credentialsFileMode int32 = 0o440
	tlsFileMode         int32 = 0o440
)

// agentBinary is the manager binary in the operator's image (the Dockerfile's /manager).
const agentBinary = "/manager"

// BuildPodTemplate is the pod template of dc's StatefulSet: the spec's pod, its inputs' volumes
// and checksum, and the storage agent.
func BuildPodTemplate(dc *databasev1alpha1.DatabaseCluster, in Inputs) corev1.PodTemplateSpec {
	labels := maps.Clone(dc.Spec.PodLabels)
	if labels == nil {
		labels = map[string]string{}
	}
	// The operator's labels are applied last so that podLabels can never break the selector;
	// managed-by lets the manager's label-selected cache see the pods.
	maps.Copy(labels, dc.Labels())
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: podAnnotations(dc, in.InputsChecksum)},
		Spec: corev1.PodSpec{
			// Service links would add an environment variable per Service of the namespace.
			EnableServiceLinks: ptr.To(false),
			// No ServiceAccount token unless the spec asks for one (see the field's doc).
			AutomountServiceAccountToken:  ptr.To(ptr.Deref(dc.Spec.AutomountServiceAccountToken, false)),
			ServiceAccountName:            dc.Spec.ServiceAccountName,
			SecurityContext:               buildPodSecurityContext(dc.Spec.SecurityContext),
			InitContainers:                buildInitContainers(dc, in.AgentImage),
			Containers:                    []corev1.Container{buildContainer(dc, in.AgentImage)},
			Volumes:                       append(append(inputVolumes(dc), agentVolumes(dc, in.AgentImage)...), dc.Spec.Volumes...),
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

// podAnnotations are the spec's pod annotations, the restart the user asked for
// (RestartedAtAnnotation) and the checksum of the inputs, so that a change of their content rolls
// the pods; nil when there are none (an upgrade rolls no pod).
func podAnnotations(dc *databasev1alpha1.DatabaseCluster, checksum string) map[string]string {
	annotations := maps.Clone(dc.Spec.PodAnnotations)
	set := func(key, value string) {
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[key] = value
	}
	if restartedAt, ok := dc.Annotations[databasev1alpha1.RestartedAtAnnotation]; ok {
		set(databasev1alpha1.RestartedAtAnnotation, restartedAt)
	}
	if checksum != "" {
		set(databasev1alpha1.InputsChecksumAnnotation, checksum)
	}
	return annotations
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

func buildContainer(dc *databasev1alpha1.DatabaseCluster, agentImage string) corev1.Container {
	return corev1.Container{
		Name:            ContainerName,
		Image:           dc.Spec.Image,
		ImagePullPolicy: imagePullPolicy(&dc.Spec),
		Command:         dc.Spec.Command,
		Args:            dc.Spec.Args,
		EnvFrom:         dc.Spec.EnvFrom,
		Env:             slices.Concat(dc.CredentialsEnv(), dc.Spec.Env, announcementEnv(dc, agentImage)),
		Ports:           containerPorts(dc),
		Resources:       dc.Spec.Resources,
		VolumeMounts: slices.Concat([]corev1.VolumeMount{{
			Name: databasev1alpha1.DataVolumeName, MountPath: databasev1alpha1.DataMountPath,
		}}, inputMounts(dc), roleMounts(dc, agentImage), dc.Spec.VolumeMounts),
		StartupProbe:    explicitProbe(dc.Spec.StartupProbe),
		ReadinessProbe:  readinessProbe(dc, agentImage),
		LivenessProbe:   livenessProbe(&dc.Spec),
		Lifecycle:       dc.Spec.Lifecycle,
		SecurityContext: podsecurity.Restricted(),
	}
}

// readinessProbe is spec.readinessProbe; with engine postgresql and the member agent, the
// agent's readiness check (the database answers a query); otherwise a TCP check of the database
// port.
func readinessProbe(dc *databasev1alpha1.DatabaseCluster, agentImage string) *corev1.Probe {
	if dc.Spec.ReadinessProbe != nil {
		return explicitProbe(dc.Spec.ReadinessProbe)
	}
	if announcesRole(dc, agentImage) {
		return agentReadinessProbe()
	}
	return tcpProbe(0, readinessPeriodSeconds, readinessFailureThreshold)
}

// The timings of agentReadinessProbe: a member whose database stops answering is not Ready
// within about 6 s (a failover fences only a primary that is not Ready).
const (
	agentReadinessPeriodSeconds    = 2
	agentReadinessFailureThreshold = 2
)

// agentReadinessProbe asks the member agent whether the database answers (its readiness check on
// its health port), waiting a second past the agent's own bound.
func agentReadinessProbe() *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: databasev1alpha1.MemberAgentReadyPath,
			Port: intstr.FromInt32(databasev1alpha1.MemberAgentHealthPort), Scheme: corev1.URISchemeHTTP}},
		PeriodSeconds:    agentReadinessPeriodSeconds,
		TimeoutSeconds:   databasev1alpha1.MemberAgentReadyTimeoutSeconds + 1,
		SuccessThreshold: probeSuccessThreshold,
		FailureThreshold: agentReadinessFailureThreshold,
	}
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

// inputVolumes are the volumes of the pod's inputs: the ConfigMap of spec.config, the Secret of
// spec.tls and the Secret of spec.credentials.
func inputVolumes(dc *databasev1alpha1.DatabaseCluster) []corev1.Volume {
	var volumes []corev1.Volume
	if name := dc.ConfigSourceName(); name != "" {
		volumes = append(volumes, corev1.Volume{Name: databasev1alpha1.ConfigVolumeName, VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}},
		}})
	}
	if name := dc.TLSSecretName(); name != "" {
		volumes = append(volumes, secretVolume(databasev1alpha1.TLSVolumeName, name, tlsFileMode,
			corev1.TLSCertKey, corev1.TLSPrivateKeyKey, certs.CACertKey))
	}
	if name := dc.CredentialsSecretName(); name != "" {
		volumes = append(volumes, secretVolume(databasev1alpha1.CredentialsVolumeName, name, credentialsFileMode,
			databasev1alpha1.UsernameKey, databasev1alpha1.PasswordKey))
	}
	return volumes
}

// secretVolume is the volume name of the keys of Secret secret, each in a file of its own name.
func secretVolume(name, secret string, mode int32, keys ...string) corev1.Volume {
	items := make([]corev1.KeyToPath, len(keys))
	for i, key := range keys {
		items[i] = corev1.KeyToPath{Key: key, Path: key}
	}
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
		Secret: &corev1.SecretVolumeSource{SecretName: secret, Items: items, DefaultMode: ptr.To(mode)},
	}}
}

// inputMounts mount the input volumes read-only in the database container.
func inputMounts(dc *databasev1alpha1.DatabaseCluster) []corev1.VolumeMount {
	var mounts []corev1.VolumeMount
	if dc.ConfigSourceName() != "" {
		mounts = append(mounts, corev1.VolumeMount{
			Name: databasev1alpha1.ConfigVolumeName, MountPath: databasev1alpha1.ConfigMountPath, ReadOnly: true,
		})
	}
	if dc.TLSSecretName() != "" {
		mounts = append(mounts, corev1.VolumeMount{
			Name: databasev1alpha1.TLSVolumeName, MountPath: databasev1alpha1.TLSMountPath, ReadOnly: true,
		})
	}
	if dc.CredentialsSecretName() != "" {
		mounts = append(mounts, corev1.VolumeMount{
			Name: databasev1alpha1.CredentialsVolumeName, MountPath: databasev1alpha1.CredentialsMountPath, ReadOnly: true,
		})
	}
	return mounts
}

// BuildStorageAgent is the storage agent container: restricted, with a read-only root file
// system, no probes (its readiness must never make a member not Ready) and small resources (it
// answers one statfs per member a minute). It runs as a native sidecar (restartPolicy Always),
// the manager binary in its storage-agent mode on the data volume, mounted read-only.
func BuildStorageAgent(image string) corev1.Container {
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
