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
	"net"
	"strconv"

	corev1 "k8s.io/api/core/v1"

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
	return []corev1.Volume{secretVolume(databasev1alpha1.AgentTLSVolumeName, dc.AgentTLSSecretName(), tlsFileMode,
		corev1.TLSCertKey, corev1.TLSPrivateKeyKey, certs.CACertKey)}
}
