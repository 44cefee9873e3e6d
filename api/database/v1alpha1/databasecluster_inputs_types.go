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

// Where the operator mounts the pod's inputs in the database container, and the names of their
// volumes (admission refuses a user's volume or mount that would take them).
const (
	// ConfigMountPath holds one file per key of spec.config, read-only.
	ConfigMountPath = "/etc/database/config"
	// CredentialsMountPath holds the files username and password of spec.credentials, read-only.
	CredentialsMountPath = "/etc/database/credentials"
	// TLSMountPath holds tls.crt, tls.key and ca.crt of spec.tls, read-only.
	TLSMountPath = "/etc/database/tls"
	// TLSVolumeName is the volume of spec.tls.
	TLSVolumeName = "tls"
	// ConfigVolumeName is the volume of spec.config.
	ConfigVolumeName = "config"
	// CredentialsVolumeName is the volume of spec.credentials.
	CredentialsVolumeName = "credentials"
)

// The environment variables of the database container that hold spec.credentials.
const (
	UsernameEnvVar = "DATABASE_USERNAME"
	PasswordEnvVar = "DATABASE_PASSWORD"
)

// The keys of a credentials Secret. The generated one is of type kubernetes.io/basic-auth, whose
// keys are username and password, and also says where the database is: host (the client
// Service's name in the cluster's DNS) and port.
const (
	UsernameKey = "username"
	PasswordKey = "password"
	HostKey     = "host"
	PortKey     = "port"
)

// InputsChecksumAnnotation is the pod template's annotation that holds a checksum of the content
// the pods read from their inputs (spec.config's files): a change of the content changes the
// template and so rolls the pods, one at a time.
const InputsChecksumAnnotation = "database.seed1b407122.io/inputs-checksum"

// ConfigSpec gives the database configuration files, mounted read-only at /etc/database/config,
// one file per key: either inline (the operator keeps them in a ConfigMap NAME-config that the
// cluster controls) or from a ConfigMap of the user's. A change of the content rolls the pods.
// +kubebuilder:validation:XValidation:rule="has(self.files) != has(self.configMapRef)",message="config takes either files or configMapRef: the files given inline, or a ConfigMap of yours that holds them"
type ConfigSpec struct {
	// Files are the configuration files: file name to content.
	// +optional
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 253 && k.matches('^[-._a-zA-Z0-9]+$') && k != '.' && k != '..')",message="config.files names must be file names of letters, digits, '-', '_' and '.' (at most 253 characters, not . or ..): they are keys of a ConfigMap"
	Files map[string]string `json:"files,omitempty"`

	// ConfigMapRef names a ConfigMap of the cluster's namespace whose keys are the files. The
	// operator reads it and never changes it; while it does not exist, Degraded says so and no
	// pod is changed.
	// +optional
	ConfigMapRef *ConfigMapReference `json:"configMapRef,omitempty"`
}

// ConfigMapReference names a ConfigMap of the cluster's namespace.
type ConfigMapReference struct {
	// Name of the ConfigMap.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')`,message="configMapRef.name must be a ConfigMap name (a DNS subdomain)"
	Name string `json:"name"`
}

// CredentialsSpec gives the database a user name and password, in a Secret the database
// container reads as the environment variables DATABASE_USERNAME and DATABASE_PASSWORD and as
// the files /etc/database/credentials/username and password. By default the operator generates
// the Secret NAME-credentials once, when the cluster is created: a random password of 32
// letters and digits from crypto/rand. It never changes or regenerates it (the database keeps
// the password it was initialized with), and keeps it when the cluster is deleted with
// pvcRetentionPolicy.whenDeleted Retain: data that is kept needs its password.
type CredentialsSpec struct {
	// Username of the generated Secret. Default admin. It is written once, with the Secret: a
	// later change applies only to a cluster whose Secret does not exist yet.
	// +optional
	// +kubebuilder:default=admin
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-zA-Z_][a-zA-Z0-9_]*$')",message="credentials.username must be letters, digits and '_', starting with a letter or '_': a name every database accepts unquoted"
	Username string `json:"username,omitempty"`

	// SecretName names a Secret of the user's, in the cluster's namespace, with the keys username
	// and password, to use instead of generating one (e.g. to restore a backup with the
	// original cluster's password). The operator reads it and never changes it.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')`,message="credentials.secretName must be a Secret name (a DNS subdomain)"
	SecretName string `json:"secretName,omitempty"`
}

// TLSSpec makes the database serve TLS with a certificate mounted read-only at
// /etc/database/tls (tls.crt, tls.key, ca.crt). By default the operator runs a CA of the
// cluster's own: a Secret NAME-ca (the CA's key never leaves it) and a serving certificate in
// NAME-tls, ECDSA P-256, whose names cover the client Service, the headless Service and every
// member's stable name (NAME-<i>.NAME-headless.<namespace>.svc, also with .cluster.local, and
// the wildcard *.NAME-headless... so that a scale-up needs no new certificate), renewed when two
// thirds of its life have passed. Or a kubernetes.io/tls Secret of yours (what cert-manager
// writes) serves instead. A new certificate rolls the pods, one at a time.
// +kubebuilder:validation:XValidation:rule="!has(self.serverSecretName) || !has(self.certificateDuration)",message="certificateDuration applies to the certificates the operator issues, not to spec.tls.serverSecretName's"
type TLSSpec struct {
	// ServerSecretName names a Secret of type kubernetes.io/tls of yours, in the cluster's
	// namespace, with tls.crt, tls.key and ca.crt (cert-manager writes all three), to serve
	// instead of the operator's certificate. The operator reads it and never changes it; a
	// change of it rolls the pods within ten minutes.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')`,message="tls.serverSecretName must be a Secret name (a DNS subdomain)"
	ServerSecretName string `json:"serverSecretName,omitempty"`

	// CertificateDuration is the life of the serving certificates the operator issues, e.g.
	// 2160h (90 days, the default). They are renewed when two thirds of it have passed. At
	// least 15m.
	// +optional
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('15m')",message="tls.certificateDuration must be at least 15m: a certificate is renewed when two thirds of its life have passed, and every renewal rolls the pods"
	CertificateDuration *metav1.Duration `json:"certificateDuration,omitempty"`
}

// CASecretName is the name of the Secret of the cluster's own CA.
func (dc *DatabaseCluster) CASecretName() string { return dc.Name + "-ca" }

// GeneratedTLSSecretName is the name of the Secret of the serving certificate the operator issues.
func (dc *DatabaseCluster) GeneratedTLSSecretName() string { return dc.Name + "-tls" }

// TLSSecretName is the Secret the pods' certificate comes from: the user's or the operator's;
// empty without spec.tls.
func (dc *DatabaseCluster) TLSSecretName() string {
	switch {
	case dc.Spec.TLS == nil:
		return ""
	case dc.Spec.TLS.ServerSecretName != "":
		return dc.Spec.TLS.ServerSecretName
	}
	return dc.GeneratedTLSSecretName()
}

// ConfigMapName is the name of the ConfigMap of spec.config.files.
func (dc *DatabaseCluster) ConfigMapName() string { return dc.Name + "-config" }

// ConfigSourceName is the name of the ConfigMap the config files come from: the user's, or
// ConfigMapName for inline files; empty without spec.config.
func (dc *DatabaseCluster) ConfigSourceName() string {
	switch {
	case dc.Spec.Config == nil:
		return ""
	case dc.Spec.Config.ConfigMapRef != nil:
		return dc.Spec.Config.ConfigMapRef.Name
	}
	return dc.ConfigMapName()
}

// GeneratedCredentialsName is the name of the Secret the operator generates for
// spec.credentials.
func (dc *DatabaseCluster) GeneratedCredentialsName() string { return dc.Name + "-credentials" }

// CredentialsSecretName is the Secret the credentials come from: the user's, or the generated
// one; empty without spec.credentials.
func (dc *DatabaseCluster) CredentialsSecretName() string {
	switch {
	case dc.Spec.Credentials == nil:
		return ""
	case dc.Spec.Credentials.SecretName != "":
		return dc.Spec.Credentials.SecretName
	}
	return dc.GeneratedCredentialsName()
}

// CredentialsEnv are the environment variables of spec.credentials, from the Secret's keys.
func (dc *DatabaseCluster) CredentialsEnv() []corev1.EnvVar {
	name := dc.CredentialsSecretName()
	if name == "" {
		return nil
	}
	from := func(key string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key,
		}}
	}
	return []corev1.EnvVar{
		{Name: UsernameEnvVar, ValueFrom: from(UsernameKey)},
		{Name: PasswordEnvVar, ValueFrom: from(PasswordKey)},
	}
}
