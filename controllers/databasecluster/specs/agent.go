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
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/certs"
)

// The environment of the member agent: its pod's name and namespace, from the downward API, so
// that its arguments can name the member and its DNS name.
const (
	podNameEnv      = "POD_NAME"
	podNamespaceEnv = "POD_NAMESPACE"
)

// hasAgent says whether the pods of dc carry the operator's agent: for spec.storage.autoGrow
// (the storage agent) or an engine (the member agent), and only when the operator knows the
// agent's image.
func hasAgent(dc *databasev1alpha1.DatabaseCluster, agentImage string) bool {
	return agentImage != "" && (dc.AutoGrows() || dc.HasEngine())
}

// BuildAgent is the operator's agent container of dc: the storage agent of spec.storage.autoGrow
// (BuildStorageAgent, unchanged for a cluster without an engine), and with an engine the member
// agent in the same process, which serves the member's role on MemberAgentPort over mutual TLS
// (the Secret NAME-agent-tls) and reaches the database on 127.0.0.1.
func BuildAgent(dc *databasev1alpha1.DatabaseCluster, image string) corev1.Container {
	agent := BuildStorageAgent(image)
	if !dc.AutoGrows() {
		agent.Args, agent.Ports, agent.VolumeMounts = nil, nil, nil
	}
	if !dc.HasEngine() {
		return agent
	}
	agent.Args = append(agent.Args, memberAgentArgs(dc)...)
	agent.Ports = append(agent.Ports, corev1.ContainerPort{Name: databasev1alpha1.MemberAgentPortName,
		ContainerPort: databasev1alpha1.MemberAgentPort, Protocol: corev1.ProtocolTCP})
	agent.Env = []corev1.EnvVar{fieldEnv(podNameEnv, "metadata.name"), fieldEnv(podNamespaceEnv, "metadata.namespace")}
	agent.VolumeMounts = append(agent.VolumeMounts, corev1.VolumeMount{Name: databasev1alpha1.AgentTLSVolumeName,
		MountPath: databasev1alpha1.AgentTLSMountPath, ReadOnly: true})
	if dc.EngineName() == databasev1alpha1.EnginePostgreSQL {
		agent.Args = append(agent.Args, "--member-health-listen=:"+strconv.Itoa(int(databasev1alpha1.MemberAgentHealthPort)))
		agent.Ports = append(agent.Ports, corev1.ContainerPort{Name: databasev1alpha1.MemberAgentHealthPortName,
			ContainerPort: databasev1alpha1.MemberAgentHealthPort, Protocol: corev1.ProtocolTCP})
	}
	if announces(dc) {
		agent.Args = append(agent.Args, "--member-wait-file="+databasev1alpha1.AgentTLSMountPath+"/"+initialClusterFile)
		agent.StartupProbe = announcementProbe()
	}
	for _, m := range inputMounts(dc) {
		if m.Name == databasev1alpha1.TLSVolumeName || m.Name == databasev1alpha1.CredentialsVolumeName {
			agent.VolumeMounts = append(agent.VolumeMounts, m)
		}
	}
	return agent
}

// memberAgentArgs are the member agent's arguments: the engine, where it serves and with which
// certificate, the member's name, and how it reaches the database (with spec.tls, verifying the
// database's certificate for the member's DNS name; with spec.credentials, as that user).
func memberAgentArgs(dc *databasev1alpha1.DatabaseCluster) []string {
	args := []string{
		"--engine=" + string(dc.EngineName()),
		"--member-listen=:" + strconv.Itoa(int(databasev1alpha1.MemberAgentPort)),
		"--member-tls-dir=" + databasev1alpha1.AgentTLSMountPath,
		"--member-name=$(" + podNameEnv + ")",
		"--database-url=" + databaseURL(dc),
	}
	if dc.TLSSecretName() != "" {
		args = append(args, "--database-ca="+databasev1alpha1.TLSMountPath+"/"+certs.CACertKey,
			"--database-server-name=$("+podNameEnv+")."+dc.HeadlessServiceName()+".$("+podNamespaceEnv+").svc")
	}
	if dc.CredentialsSecretName() != "" {
		args = append(args, "--database-credentials="+databasev1alpha1.CredentialsMountPath)
	}
	return args
}

// databaseURL is where the member agent reaches the database in its pod: etcd's client URL
// (https with spec.tls), PostgreSQL's host and port.
func databaseURL(dc *databasev1alpha1.DatabaseCluster) string {
	local := net.JoinHostPort("127.0.0.1", strconv.Itoa(int(dc.DatabasePort())))
	if dc.EngineName() != databasev1alpha1.EngineEtcd {
		return local
	}
	if dc.TLSSecretName() != "" {
		return "https://" + local
	}
	return "http://" + local
}

// announces says whether dc's members wait for their announcement (engine etcd): the initial
// cluster each member's etcd starts with, which the operator writes on its pod once the member
// is in etcd's member list.
func announces(dc *databasev1alpha1.DatabaseCluster) bool {
	return dc.EngineName() == databasev1alpha1.EngineEtcd
}

// The files of the announcement, in the member agent's volume.
const (
	initialClusterFile      = "etcd-initial-cluster"
	initialClusterStateFile = "etcd-initial-cluster-state"
)

// announcementPeriodSeconds and announcementFailureThreshold: the member agent's startup probe
// looks every second for up to ten minutes (then the kubelet restarts the agent, which waits
// again).
const (
	announcementPeriodSeconds    = 1
	announcementFailureThreshold = 600
)

// announcementProbe is the member agent's startup probe with engine etcd: the agent listens
// only once the member's announcement is there, and the database container starts only once
// this probe succeeds, so that etcd reads its initial cluster from the announcement.
func announcementProbe() *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{
			Port: intstr.FromInt32(databasev1alpha1.MemberAgentPort)}},
		PeriodSeconds:    announcementPeriodSeconds,
		TimeoutSeconds:   probeTimeoutSeconds,
		SuccessThreshold: probeSuccessThreshold,
		FailureThreshold: announcementFailureThreshold,
	}
}

// announcementEnv are the database container's variables that carry the announcement to etcd
// (with engine etcd, and only with an agent to hold etcd back until it is there): the user's
// args cannot set the flags that would shadow them (admission refuses them).
func announcementEnv(dc *databasev1alpha1.DatabaseCluster, agentImage string) []corev1.EnvVar {
	if announcesRole(dc, agentImage) {
		env := []corev1.EnvVar{{Name: databasev1alpha1.RoleDirEnv, Value: databasev1alpha1.RoleMountPath}}
		if r := dc.Spec.Roles; r != nil && r.Synchronous != nil {
			// Any Number of the replicas, whatever their names: every member gets it, and a
			// replica uses it once promoted.
			env = append(env, corev1.EnvVar{Name: synchronousEnv, Value: fmt.Sprintf("ANY %d (*)", r.Synchronous.Number)})
		}
		return env
	}
	if !announces(dc) || !hasAgent(dc, agentImage) {
		return nil
	}
	return []corev1.EnvVar{
		fieldEnv("ETCD_INITIAL_CLUSTER", annotationPath(databasev1alpha1.EtcdInitialClusterAnnotation)),
		fieldEnv("ETCD_INITIAL_CLUSTER_STATE", annotationPath(databasev1alpha1.EtcdInitialClusterStateAnnotation)),
	}
}

// announcesRole says whether dc's database container is told its role at start (engine
// postgresql, with an agent whose reads let the operator decide it): the project's PostgreSQL
// image reads it from RoleMountPath (files role and primary-host) before it starts.
func announcesRole(dc *databasev1alpha1.DatabaseCluster, agentImage string) bool {
	return dc.EngineName() == databasev1alpha1.EnginePostgreSQL && hasAgent(dc, agentImage)
}

// synchronousEnv is the variable of synchronous_standby_names, which the project's PostgreSQL
// image puts on the server's command line.
const synchronousEnv = "DATABASE_SYNCHRONOUS_STANDBY_NAMES"

// The files of the role announcement.
const (
	roleFile        = "role"
	primaryHostFile = "primary-host"
)

// roleVolume is the volume of the role announcement (engine postgresql): the pod's annotations
// through the downward API.
func roleVolume() corev1.Volume {
	return corev1.Volume{Name: databasev1alpha1.RoleVolumeName, VolumeSource: corev1.VolumeSource{
		DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
			{Path: roleFile, FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1",
				FieldPath: annotationPath(databasev1alpha1.PostgreSQLRoleAnnotation)}},
			{Path: primaryHostFile, FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1",
				FieldPath: annotationPath(databasev1alpha1.PostgreSQLPrimaryHostAnnotation)}},
		}},
	}}
}

// roleMounts mount the role announcement in the database container (engine postgresql).
func roleMounts(dc *databasev1alpha1.DatabaseCluster, agentImage string) []corev1.VolumeMount {
	if !announcesRole(dc, agentImage) {
		return nil
	}
	return []corev1.VolumeMount{{Name: databasev1alpha1.RoleVolumeName, MountPath: databasev1alpha1.RoleMountPath, ReadOnly: true}}
}

func annotationPath(key string) string {
	return "metadata.annotations['" + key + "']"
}

// fieldEnv is the environment variable name holding the pod's field path.
func fieldEnv(name, path string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
		APIVersion: "v1", FieldPath: path}}}
}

// agentVolumes are the volumes only the agent mounts: the member agent's certificate, with an
// engine.
func agentVolumes(dc *databasev1alpha1.DatabaseCluster, agentImage string) []corev1.Volume {
	if !hasAgent(dc, agentImage) || !dc.HasEngine() {
		return nil
	}
	certificate := secretVolume(databasev1alpha1.AgentTLSVolumeName, dc.AgentTLSSecretName(), tlsFileMode,
		corev1.TLSCertKey, corev1.TLSPrivateKeyKey, certs.CACertKey)
	if announcesRole(dc, agentImage) {
		return []corev1.Volume{certificate, roleVolume()}
	}
	if !announces(dc) {
		return []corev1.Volume{certificate}
	}
	// With engine etcd the same volume carries the member's announcement, from the pod's
	// annotations (the downward API): the agent waits for it.
	secret := certificate.Secret
	return []corev1.Volume{{Name: databasev1alpha1.AgentTLSVolumeName, VolumeSource: corev1.VolumeSource{
		Projected: &corev1.ProjectedVolumeSource{DefaultMode: secret.DefaultMode, Sources: []corev1.VolumeProjection{
			{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: secret.SecretName}, Items: secret.Items}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
				{Path: initialClusterFile, FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1",
					FieldPath: annotationPath(databasev1alpha1.EtcdInitialClusterAnnotation)}},
				{Path: initialClusterStateFile, FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1",
					FieldPath: annotationPath(databasev1alpha1.EtcdInitialClusterStateAnnotation)}},
			}}},
		}},
	}}}
}

// advertisePeerURLsFlag is etcd's flag of the peer URLs a member advertises.
const advertisePeerURLsFlag = "initial-advertise-peer-urls"

// PeerURLs are the peer URLs the member pod advertises with engine etcd: the spec's
// --initial-advertise-peer-urls, with each $(VAR) of the database container's environment
// replaced as the kubelet replaces it (a literal value, the pod's name or namespace from the
// downward API). It fails when the flag is missing or names a variable it cannot resolve.
func PeerURLs(dc *databasev1alpha1.DatabaseCluster, pod string) ([]string, error) {
	value, ok := "", false
	for _, arg := range dc.Spec.Args {
		for _, prefix := range []string{"--" + advertisePeerURLsFlag + "=", "-" + advertisePeerURLsFlag + "="} {
			if v, found := strings.CutPrefix(arg, prefix); found {
				value, ok = v, true
			}
		}
	}
	if !ok {
		return nil, fmt.Errorf("args set no --%s: the operator cannot tell where the members reach %s", advertisePeerURLsFlag, pod)
	}
	vars := map[string]string{}
	for _, env := range dc.Spec.Env {
		switch {
		case env.ValueFrom == nil:
			vars[env.Name] = env.Value
		case env.ValueFrom.FieldRef != nil && env.ValueFrom.FieldRef.FieldPath == "metadata.name":
			vars[env.Name] = pod
		case env.ValueFrom.FieldRef != nil && env.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			vars[env.Name] = dc.Namespace
		}
	}
	expanded := variableRef.ReplaceAllStringFunc(value, func(ref string) string {
		if v, ok := vars[ref[2:len(ref)-1]]; ok {
			return v
		}
		return ref
	})
	if left := variableRef.FindString(expanded); left != "" {
		return nil, fmt.Errorf("--%s names %s, which is not an env variable with a value, the pod's name or its namespace", advertisePeerURLsFlag, left)
	}
	return strings.Split(expanded, ","), nil
}

// variableRef is a $(VAR) reference of a container's args.
var variableRef = regexp.MustCompile(`\$\([A-Za-z_][A-Za-z0-9_.-]*\)`)
