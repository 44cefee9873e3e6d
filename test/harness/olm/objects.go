// Package olm installs an operator bundle through the Operator Lifecycle Manager the way
// "operator-sdk run bundle" does, without operator-sdk: it renders a one-bundle file-based
// catalog (FBC) from a bundle directory, serves it, points a CatalogSource at it, creates an
// OperatorGroup and a Subscription, and waits for the ClusterServiceVersion (CSV) to succeed;
// and it takes all of that away again. "make run-bundle" / "make cleanup-bundle" (through
// hack/runbundle) and the OLM e2e (test/olme2e) share this code.
//
// The pieces, smallest first:
//   - Build* functions are pure builders of the objects (CatalogSource, OperatorGroup,
//     Subscription, the in-cluster catalog server).
//   - RenderBundleCatalog turns a bundle directory into a catalog directory with opm.
//   - ServeCatalog serves a catalog directory from this machine on 127.0.0.1 (catalog-serve,
//     hack/olm); ServeCatalogInCluster serves it from a Deployment running the opm image.
//   - CreateCatalogSource, EnsureOperatorGroup, Subscribe, ApproveInstallPlan, WaitForCSV and
//     Install are the install steps; Uninstall and DeleteCatalog undo them.
//   - StartOLM runs OLM's own controllers (cmd/olm, cmd/catalog) as host processes.
//   - RunBundle and CleanupBundle are what the make targets do, with their state on disk.
//
// Objects are unstructured: the operator's module does not import OLM's API.
package olm

import (
	"fmt"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// API versions and kinds of the OLM objects this package reads and writes.
const (
	APIVersionV1       = "operators.coreos.com/v1"
	APIVersionV1alpha1 = "operators.coreos.com/v1alpha1"

	KindCatalogSource         = "CatalogSource"
	KindClusterServiceVersion = "ClusterServiceVersion"
	KindInstallPlan           = "InstallPlan"
	KindOLMConfig             = "OLMConfig"
	KindOperatorGroup         = "OperatorGroup"
	KindSubscription          = "Subscription"
)

const (
	// ManagedByLabel marks what RunBundle created (value ManagedBy), so that CleanupBundle
	// deletes only that: an OperatorGroup or a Service of the same name made by someone else
	// stays.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	// ManagedBy is the value of ManagedByLabel on what RunBundle created.
	ManagedBy = "run-bundle"

	// DefaultOPMImage runs the in-cluster catalog server: the opm that hack/olm pins.
	DefaultOPMImage = "quay.io/operator-framework/opm:v1.74.0"
	// CatalogPort is the gRPC port of the in-cluster catalog server and its Service.
	CatalogPort = 50051
	// grpc is the CatalogSource source type this package uses, and the name of the catalog
	// server's port.
	grpc = "grpc"
	// catalogFile is the FBC file name, in the catalog directory and the ConfigMap.
	catalogFile = "catalog.json"
	// inClusterConfigsDir is where the opm image serves catalogs from, as catalog images do.
	inClusterConfigsDir = "/configs"
)

// Approval is a Subscription's installPlanApproval.
type Approval string

// The two approvals OLM knows.
const (
	ApprovalAutomatic Approval = "Automatic"
	ApprovalManual    Approval = "Manual"
)

// NewObject returns an empty unstructured object with its type and name set.
func NewObject(apiVersion, kind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

// NewList returns an empty unstructured list of kind (e.g. KindClusterServiceVersion).
func NewList(apiVersion, kind string) *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion(apiVersion)
	l.SetKind(kind + "List")
	return l
}

// NewCSV returns an empty ClusterServiceVersion reference.
func NewCSV(namespace, name string) *unstructured.Unstructured {
	return NewObject(APIVersionV1alpha1, KindClusterServiceVersion, namespace, name)
}

// NewSubscription returns an empty Subscription reference.
func NewSubscription(namespace, name string) *unstructured.Unstructured {
	return NewObject(APIVersionV1alpha1, KindSubscription, namespace, name)
}

// NewCatalogSource returns an empty CatalogSource reference.
func NewCatalogSource(namespace, name string) *unstructured.Unstructured {
	return NewObject(APIVersionV1alpha1, KindCatalogSource, namespace, name)
}

// NewOperatorGroup returns an empty OperatorGroup reference.
func NewOperatorGroup(namespace, name string) *unstructured.Unstructured {
	return NewObject(APIVersionV1, KindOperatorGroup, namespace, name)
}

// BuildCatalogSource returns a gRPC CatalogSource that points OLM at address (host:port of a
// running catalog server); OLM starts no registry pod for it. labels may be nil.
func BuildCatalogSource(namespace, name, address, displayName string, labels map[string]string) *unstructured.Unstructured {
	cs := NewCatalogSource(namespace, name)
	cs.SetLabels(labels)
	cs.Object["spec"] = map[string]any{
		"sourceType":  grpc,
		"address":     address,
		"displayName": displayName,
		"publisher":   ManagedBy,
	}
	return cs
}

// BuildImageCatalogSource returns a gRPC CatalogSource of a catalog image, as on a cluster: OLM
// runs the image in a registry pod (its ENTRYPOINT serves the catalog on :50051) with the
// restricted security context, and polls the image for updates every pollInterval (empty:
// never). labels may be nil.
func BuildImageCatalogSource(namespace, name, image, displayName, pollInterval string, labels map[string]string) *unstructured.Unstructured {
	cs := NewCatalogSource(namespace, name)
	cs.SetLabels(labels)
	spec := map[string]any{
		"sourceType":    grpc,
		"image":         image,
		"displayName":   displayName,
		"publisher":     ManagedBy,
		"grpcPodConfig": map[string]any{"securityContextConfig": "restricted"},
	}
	if pollInterval != "" {
		spec["updateStrategy"] = map[string]any{"registryPoll": map[string]any{"interval": pollInterval}}
	}
	cs.Object["spec"] = spec
	return cs
}

// BuildOperatorGroup returns an OperatorGroup with the target namespaces; none means
// AllNamespaces. labels may be nil.
func BuildOperatorGroup(namespace, name string, targets []string, labels map[string]string) *unstructured.Unstructured {
	og := NewOperatorGroup(namespace, name)
	og.SetLabels(labels)
	spec := map[string]any{}
	if len(targets) > 0 {
		spec["targetNamespaces"] = toAny(targets)
	}
	og.Object["spec"] = spec
	return og
}

// SubscriptionOptions say what a Subscription subscribes to.
type SubscriptionOptions struct {
	// Namespace and Name of the Subscription; Name defaults to Package.
	Namespace, Name string
	// Package and Channel in the catalog.
	Package, Channel string
	// CatalogSource and CatalogSourceNamespace name the catalog (spec.source, sourceNamespace).
	CatalogSource, CatalogSourceNamespace string
	// StartingCSV, when set, is the CSV to install first (else the head of the channel).
	StartingCSV string
	// Approval defaults to ApprovalAutomatic.
	Approval Approval
	// Labels of the Subscription, may be nil.
	Labels map[string]string
	// Env is spec.config.env (names and values): OLM sets it on every container of the operator's Deployments, of
	// each CSV the Subscription installs.
	Env []corev1.EnvVar
}

// BuildSubscription returns the Subscription of o.
func BuildSubscription(o SubscriptionOptions) *unstructured.Unstructured {
	name := o.Name
	if name == "" {
		name = o.Package
	}
	approval := o.Approval
	if approval == "" {
		approval = ApprovalAutomatic
	}
	sub := NewSubscription(o.Namespace, name)
	sub.SetLabels(o.Labels)
	spec := map[string]any{
		"channel":             o.Channel,
		"name":                o.Package,
		"source":              o.CatalogSource,
		"sourceNamespace":     o.CatalogSourceNamespace,
		"installPlanApproval": string(approval),
	}
	if o.StartingCSV != "" {
		spec["startingCSV"] = o.StartingCSV
	}
	if len(o.Env) > 0 {
		env := make([]any, 0, len(o.Env))
		for _, e := range o.Env {
			env = append(env, map[string]any{"name": e.Name, "value": e.Value})
		}
		spec["config"] = map[string]any{"env": env}
	}
	sub.Object["spec"] = spec
	return sub
}

// InClusterCatalog is what serves a catalog inside the cluster: the FBC in a ConfigMap, a
// Deployment running "opm serve" on it, and a Service in front. All three are named after
// the CatalogSource.
type InClusterCatalog struct {
	ConfigMap  *corev1.ConfigMap
	Deployment *appsv1.Deployment
	Service    *corev1.Service
}

// Address is the CatalogSource address of the in-cluster catalog: the Service's DNS name.
func (c InClusterCatalog) Address() string {
	return fmt.Sprintf("%s.%s.svc:%d", c.Service.Name, c.Service.Namespace, CatalogPort)
}

// BuildInClusterCatalog returns the objects that serve fbc (the content of a catalog.json for
// package pkg) in namespace with the opm image, as operator-sdk's file-based catalog mode
// does. The catalog file is mounted with subPath: a whole-ConfigMap volume would show opm its
// "..data" links and timestamped directory, and it would load the catalog twice. The pod
// meets the restricted Pod Security profile; opm writes its cache to an emptyDir.
func BuildInClusterCatalog(namespace, name, pkg, image string, fbc []byte) InClusterCatalog {
	labels := map[string]string{
		"app.kubernetes.io/name":      name,
		"app.kubernetes.io/component": "catalog-server",
		ManagedByLabel:                ManagedBy,
	}
	selector := map[string]string{"app.kubernetes.io/name": name, "app.kubernetes.io/component": "catalog-server"}
	meta := func() metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: maps.Clone(labels)}
	}
	cm := &corev1.ConfigMap{ObjectMeta: meta(), Data: map[string]string{catalogFile: string(fbc)}}
	grpcPort := intstr.FromString(grpc)
	dep := &appsv1.Deployment{
		ObjectMeta: meta(),
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: maps.Clone(labels)},
				Spec: corev1.PodSpec{
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:  "registry-grpc",
						Image: image,
						// The cache is built when the server starts, into the emptyDir: with
						// --cache-dir, opm otherwise insists on a cache built beforehand (it exits 1,
						// "integrity check failed: read existing cache digest").
						Command: []string{"/bin/opm", "serve", inClusterConfigsDir,
							fmt.Sprintf("--port=%d", CatalogPort), "--cache-dir=/tmp/cache", "--cache-enforce-integrity=false"},
						Ports: []corev1.ContainerPort{{Name: grpc, ContainerPort: CatalogPort, Protocol: corev1.ProtocolTCP}},
						ReadinessProbe: &corev1.Probe{
							ProbeHandler:  corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: CatalogPort}},
							PeriodSeconds: 5,
						},
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceCPU:    resource.MustParse("10m"),
							corev1.ResourceMemory: resource.MustParse("50Mi"),
						}},
						SecurityContext: &corev1.SecurityContext{
							// The opm image's user is numeric in the image config; say it here so that
							// runAsNonRoot can be checked whatever the image declares.
							RunAsUser:                ptr.To[int64](1001),
							AllowPrivilegeEscalation: ptr.To(false),
							ReadOnlyRootFilesystem:   ptr.To(true),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
						VolumeMounts: []corev1.VolumeMount{
							{Name: "catalog", MountPath: inClusterConfigsDir + "/" + pkg + "/" + catalogFile, SubPath: catalogFile, ReadOnly: true},
							{Name: "tmp", MountPath: "/tmp"},
						},
					}},
					Volumes: []corev1.Volume{
						{Name: "catalog", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: name},
						}}},
						{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
					},
				},
			},
		},
	}
	svc := &corev1.Service{
		ObjectMeta: meta(),
		Spec: corev1.ServiceSpec{
			Selector: maps.Clone(selector),
			Ports:    []corev1.ServicePort{{Name: grpc, Port: CatalogPort, TargetPort: grpcPort, Protocol: corev1.ProtocolTCP}},
		},
	}
	return InClusterCatalog{ConfigMap: cm, Deployment: dep, Service: svc}
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
