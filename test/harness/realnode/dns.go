//go:build linux

package realnode

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CoreDNSImage is CoreDNS built from hack/coredns by make node-images.
const CoreDNSImage = "database-operator.test/coredns:v1"

const (
	dnsName      = "coredns"
	dnsNamespace = "kube-system"
	dnsAppLabel  = "kube-dns"
	dnsRoleName  = "system:coredns"
	// dnsPort is where CoreDNS listens in its pod: above 1024, so it needs no capability.
	dnsPort   = 1053
	readyPort = 8181
)

// corefile serves cluster.local from the API server (with records for not-ready addresses of
// headless Services that publish them) and nothing else: there is no upstream to forward to.
const corefile = `.:1053 {
    errors
    ready :8181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 5
    }
    cache 5
    loop
    reload
}
`

// dnsObjects returns what runs CoreDNS as the cluster DNS: its ServiceAccount and RBAC, the
// Corefile, the Deployment (restricted security context) and the kube-dns Service at
// DNSServiceIP.
func dnsObjects() []client.Object {
	labels := map[string]string{"k8s-app": dnsAppLabel}
	meta := metav1.ObjectMeta{Name: dnsName, Namespace: dnsNamespace, Labels: labels}
	return []client.Object{
		&corev1.ServiceAccount{ObjectMeta: meta},
		&rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: dnsRoleName},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"endpoints", "services", "pods", "namespaces"}, Verbs: []string{"list", "watch"}},
				{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list", "watch"}},
			},
		},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: dnsRoleName},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: dnsRoleName},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: dnsName, Namespace: dnsNamespace}},
		},
		&corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"Corefile": corefile}},
		dnsDeployment(meta, labels),
		&corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: dnsAppLabel, Namespace: dnsNamespace, Labels: labels},
			Spec: corev1.ServiceSpec{
				ClusterIP: DNSServiceIP,
				Selector:  labels,
				Ports: []corev1.ServicePort{
					{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromInt32(dnsPort)},
					{Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(dnsPort)},
				},
			},
		},
	}
}

func dnsDeployment(meta metav1.ObjectMeta, labels map[string]string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: meta,
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: dnsName,
					// CoreDNS must not resolve through itself.
					DNSPolicy: corev1.DNSDefault,
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						RunAsUser:      ptr.To[int64](65532),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:            dnsName,
						Image:           CoreDNSImage,
						ImagePullPolicy: corev1.PullNever,
						Args:            []string{"-conf", "/etc/coredns/Corefile"},
						Ports: []corev1.ContainerPort{
							{Name: "dns", ContainerPort: dnsPort, Protocol: corev1.ProtocolUDP},
							{Name: "dns-tcp", ContainerPort: dnsPort, Protocol: corev1.ProtocolTCP},
						},
						ReadinessProbe: &corev1.Probe{
							ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(readyPort)}},
							PeriodSeconds: 1,
						},
						VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/coredns", ReadOnly: true}},
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
							ReadOnlyRootFilesystem:   ptr.To(true),
						},
					}},
					Volumes: []corev1.Volume{{
						Name: "config",
						VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: dnsName},
						}},
					}},
				},
			},
		},
	}
}
