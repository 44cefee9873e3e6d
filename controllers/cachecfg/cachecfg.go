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

// Package cachecfg holds the cache settings of the manager, shared by main.go and the test
// suites so that tests run with the cache the operator really has.
package cachecfg

import (
	"slices"
	"strings"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed1b407122/database-operator/api/labels"
)

// Options keep the cache small: only the given namespaces (all when empty), only children that
// carry the operator's managed-by label, no managedFields or last-applied configuration
// (StripMeta), and of a StatefulSet, a pod, a Service or a claim only what the operator reads
// (TrimStatefulSet, TrimPod, TrimService, TrimClaim). shared are the tables of values the
// transforms share: the caller's (the manager makes one for its cache, for as long as it runs;
// a test or a benchmark its own), nil to share nothing.
func Options(namespaces []string, shared *Shared) cache.Options {
	owned := cache.ByObject{Label: k8slabels.SelectorFromSet(k8slabels.Set{labels.ManagedBy: labels.ManagedByValue})}
	opts := cache.Options{
		DefaultTransform: StripMeta,
		ByObject: map[client.Object]cache.ByObject{
			&appsv1.StatefulSet{}:           {Label: owned.Label, Transform: shared.TrimStatefulSet},
			&corev1.Service{}:               {Label: owned.Label, Transform: shared.TrimService},
			&policyv1.PodDisruptionBudget{}: owned,
			&corev1.PersistentVolumeClaim{}: {Label: owned.Label, Transform: shared.TrimClaim},
			&corev1.Pod{}:                   {Label: owned.Label, Transform: TrimPod},
			&batchv1.Job{}:                  owned,
			&batchv1.CronJob{}:              owned,
			&corev1.ConfigMap{}:             owned,
		},
	}
	if len(namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return opts
}

// WithVolumeSnapshots adds the operator's VolumeSnapshots (label-selected like every child) to
// opts. Only for an API server that serves snapshot.storage.k8s.io/v1: the cache refuses to
// start with a kind the server does not know.
func WithVolumeSnapshots(opts cache.Options) cache.Options {
	owned := cache.ByObject{Label: k8slabels.SelectorFromSet(k8slabels.Set{labels.ManagedBy: labels.ManagedByValue})}
	opts.ByObject[&snapshotv1.VolumeSnapshot{}] = owned
	return opts
}

// InputsOptions are the options of the cache of the pods' inputs that belong to the user (a
// ConfigMap named by spec.config.configMapRef): every ConfigMap of the namespaces (all when
// empty), of which the operator watches the metadata only (PartialObjectMetadata), without
// managedFields. It is a cache of its own because the manager's cache selects ConfigMaps by the
// operator's label, per kind, whatever the form they are read in; a change of a ConfigMap's
// content changes its resourceVersion, which is what the watch needs. The content is read from
// the API server, by name, only for the ConfigMaps a cluster names.
func InputsOptions(namespaces []string, scheme *runtime.Scheme, mapper apimeta.RESTMapper) cache.Options {
	opts := cache.Options{Scheme: scheme, Mapper: mapper, DefaultTransform: StripMeta}
	if len(namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return opts
}

// LastAppliedAnnotation is where "kubectl apply" keeps the whole object it applied, as JSON: on
// a DatabaseCluster applied with kubectl it is as large as the spec, and the operator never
// reads it.
const LastAppliedAnnotation = corev1.LastAppliedConfigAnnotation

// StripMeta is the cache's transform of every kind without its own: it drops managedFields and
// the last-applied annotation, which the operator never reads. Patches are computed between two
// copies of a cached object, so a field missing from both is never written: the API server
// keeps both.
func StripMeta(obj any) (any, error) {
	meta, ok := obj.(metav1.Object)
	if !ok {
		return obj, nil
	}
	meta.SetManagedFields(nil)
	if annotations := meta.GetAnnotations(); annotations != nil {
		if _, ok := annotations[LastAppliedAnnotation]; ok {
			delete(annotations, LastAppliedAnnotation)
			if len(annotations) == 0 {
				meta.SetAnnotations(nil)
			}
		}
	}
	return obj, nil
}

// TrimService is the cache's transform of Services: the operator reads a Service's identity,
// labels, annotations, owners and deletion, and compares only the fields it owns (type,
// selector, ports, publishNotReadyAddresses, the load balancer's source ranges and class, the
// external traffic policy; specs.ServiceInSync in controllers/databasecluster/specs). The
// allocated cluster IPs, IP families, the internal traffic policy and the status are dropped; the
// labels and the selector are shared with the cluster's other children, and the ports with the
// Services that have the same (s, shared.go). A patch of a Service is computed between two
// trimmed copies, so the dropped fields are never written; every field the operator writes must
// be kept here, or a patch could never remove it.
func (s *Shared) TrimService(obj any) (any, error) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return obj, nil
	}
	if _, err := StripMeta(svc); err != nil {
		return nil, err
	}
	meta := svc.ObjectMeta
	meta.Labels = s.shareLabels(meta.Labels)
	return &corev1.Service{
		TypeMeta:   svc.TypeMeta,
		ObjectMeta: meta,
		Spec: corev1.ServiceSpec{
			Type: svc.Spec.Type, Selector: s.shareLabels(svc.Spec.Selector), Ports: s.sharePorts(svc.Spec.Ports),
			PublishNotReadyAddresses: svc.Spec.PublishNotReadyAddresses,
			LoadBalancerSourceRanges: svc.Spec.LoadBalancerSourceRanges,
			LoadBalancerClass:        svc.Spec.LoadBalancerClass,
			ExternalTrafficPolicy:    svc.Spec.ExternalTrafficPolicy,
		},
	}, nil
}

// TrimmedTemplateName marks the pod template of a StatefulSet as the cache holds it
// (TrimStatefulSet), as the template's metadata.name, which the API server keeps but never
// uses and the operator never sets. A trimmed template compared with the spec's is not in sync
// (it has no container), so a path that forgot to read the whole template would write the
// spec's again rather than take the trimmed one for it.
const TrimmedTemplateName = "cache.database.seed1b407122.io/trimmed-template"

// The annotations of a trimmed pod template, which exist only in the cache: the image of each
// container, and the storage request of each claim template, by name.
const (
	trimmedImagePrefix = "image/"
	trimmedClaimPrefix = "storage/"
)

// TrimStatefulSet is the cache's transform of StatefulSets: its metadata (StripMeta), its spec
// but the templates, and its status are kept. Of the templates, only the containers' images
// (the status reports the database's) and the claim templates' storage requests (a larger
// spec.storage.size replaces the StatefulSet) are kept, as annotations of a pod template named
// TrimmedTemplateName: one small map, shared with the StatefulSets that keep the same (and the
// labels and selector with the cluster's other children; s, shared.go), where a container or a
// claim template costs a struct of some 400 bytes even when empty. Read them with
// ContainerImage and ClaimTemplateSize. The templates are most of a StatefulSet, and the
// operator reads them only to compare them (BenchmarkClusterCacheMemory measures what is left).
// The operator compares the pod template with the spec only after reading the StatefulSet whole
// from the API server, unless the StatefulSet records that it is still at the generation at
// which its template was written or compared (its template-generation annotation); the claim
// templates are immutable and never written after the create. Reconcile code reads a cached
// StatefulSet only through StatefulSetView.
func (s *Shared) TrimStatefulSet(obj any) (any, error) {
	sts, ok := obj.(*appsv1.StatefulSet)
	if !ok {
		return obj, nil
	}
	if _, err := StripMeta(sts); err != nil {
		return nil, err
	}
	// client-go may pass an object of the cache to the transform again (a relist's Replace):
	// trimming a trimmed copy would lose what it keeps, and a claim template of size zero is
	// one the storage phase replaces.
	if TemplateTrimmed(sts) {
		return sts, nil
	}
	sts.Labels = s.shareLabels(sts.Labels)
	if sts.Spec.Selector != nil {
		sts.Spec.Selector.MatchLabels = s.shareLabels(sts.Spec.Selector.MatchLabels)
	}
	kept := make(map[string]string, len(sts.Spec.Template.Spec.Containers)+len(sts.Spec.VolumeClaimTemplates))
	for _, c := range sts.Spec.Template.Spec.Containers {
		kept[trimmedImagePrefix+c.Name] = c.Image
	}
	for _, t := range sts.Spec.VolumeClaimTemplates {
		size := ""
		if request, ok := t.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
			size = request.String()
		}
		kept[trimmedClaimPrefix+t.Name] = size
	}
	sts.Spec.Template = corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Name: TrimmedTemplateName, Annotations: s.shareAnnotations(kept)}}
	sts.Spec.VolumeClaimTemplates = nil
	return sts, nil
}

// TemplateTrimmed says whether sts is a cached StatefulSet whose templates TrimStatefulSet
// dropped.
func TemplateTrimmed(sts *appsv1.StatefulSet) bool {
	return sts.Spec.Template.Name == TrimmedTemplateName
}

// Untrim gives sts, as the cache holds it (TrimStatefulSet), the pod template template, which
// the caller knows to be sts's, and back the claim templates as far as the cache kept them:
// their names and storage requests. The rest of a claim template is immutable and not read.
func Untrim(sts *appsv1.StatefulSet, template *corev1.PodTemplateSpec) {
	var claims []corev1.PersistentVolumeClaim
	for key, size := range sts.Spec.Template.Annotations {
		name, ok := strings.CutPrefix(key, trimmedClaimPrefix)
		if !ok {
			continue
		}
		claim := corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if size != "" {
			claim.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: keptSize(size)}
		}
		claims = append(claims, claim)
	}
	slices.SortFunc(claims, func(a, b corev1.PersistentVolumeClaim) int { return strings.Compare(a.Name, b.Name) })
	sts.Spec.Template = *template.DeepCopy()
	sts.Spec.VolumeClaimTemplates = claims
}

// ContainerImage is the image of the container name of sts's pod template, whether sts is whole
// or as the cache holds it; "" when there is no such container.
func ContainerImage(sts *appsv1.StatefulSet, name string) string {
	if TemplateTrimmed(sts) {
		return sts.Spec.Template.Annotations[trimmedImagePrefix+name]
	}
	for _, c := range sts.Spec.Template.Spec.Containers {
		if c.Name == name {
			return c.Image
		}
	}
	return ""
}

// ClaimTemplateSize is the storage request of sts's claim template name, whether sts is whole or
// as the cache holds it (zero when it requests none), and false when sts has no such template.
func ClaimTemplateSize(sts *appsv1.StatefulSet, name string) (resource.Quantity, bool) {
	if TemplateTrimmed(sts) {
		kept, ok := sts.Spec.Template.Annotations[trimmedClaimPrefix+name]
		if !ok || kept == "" {
			return resource.Quantity{}, ok
		}
		return keptSize(kept), true
	}
	for _, t := range sts.Spec.VolumeClaimTemplates {
		if t.Name == name {
			return t.Spec.Resources.Requests[corev1.ResourceStorage], true
		}
	}
	return resource.Quantity{}, false
}

// keptSize is a claim template's storage request as TrimStatefulSet kept it, not empty: it wrote
// it from a Quantity, so it parses.
func keptSize(kept string) resource.Quantity {
	return resource.MustParse(kept)
}

// TrimPod is the cache's transform of Pods: the operator only reads a member pod's identity,
// labels (the controller-revision-hash among them), owners and deletion, and its readiness as
// the kubelet reports it (phase, the Ready condition, the state and last termination of its
// containers and init containers), to count members, tell why one is not Ready and whether a
// rollout is stuck; the scheduler's PodScheduled condition, which says a member cannot be
// placed; and its pod IP, where the storage agent of spec.storage.autoGrow is read. The spec
// (containers, volumes, env), the other conditions (Initialized, ContainersReady,
// PodReadyToStartContainers: 120 bytes each) and the rest of the status are dropped: at 1,000
// clusters the pods are the largest objects the cache holds. Of the annotations the operator's
// own (OwnAnnotationPrefix: a member's announcement, written once) are kept, so that it sees
// what it wrote. The operator writes a pod's role label and its announcement by merge patches
// computed between two trimmed copies under the pod's resourceVersion: a field missing from both
// is never written.
func TrimPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	meta := identity(&pod.ObjectMeta)
	meta.Annotations = ownAnnotations(pod.Annotations)
	trimmed := &corev1.Pod{
		TypeMeta:   pod.TypeMeta,
		ObjectMeta: meta,
		Spec:       corev1.PodSpec{NodeName: pod.Spec.NodeName},
		Status: corev1.PodStatus{Phase: pod.Status.Phase, Conditions: readConditions(pod.Status.Conditions),
			StartTime: pod.Status.StartTime, PodIP: pod.Status.PodIP},
	}
	trimmed.Status.InitContainerStatuses = trimStatuses(pod.Status.InitContainerStatuses)
	trimmed.Status.ContainerStatuses = trimStatuses(pod.Status.ContainerStatuses)
	return trimmed, nil
}

// readConditions are the conditions of a pod the operator reads: Ready and PodScheduled.
func readConditions(conditions []corev1.PodCondition) []corev1.PodCondition {
	var kept []corev1.PodCondition
	for _, c := range conditions {
		if c.Type == corev1.PodReady || c.Type == corev1.PodScheduled {
			kept = append(kept, c)
		}
	}
	return kept
}

// identity is what the trimmed kinds keep of an object's metadata: its identity, labels,
// owners and deletion; not its annotations, finalizers or managed fields.
func identity(m *metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		Generation: m.Generation, CreationTimestamp: m.CreationTimestamp, DeletionTimestamp: m.DeletionTimestamp,
		Labels: m.Labels, OwnerReferences: m.OwnerReferences,
	}
}

// OwnAnnotationPrefix starts the key of every annotation the operator writes on a claim
// (AutoGrownAtAnnotation, the time of the last automatic growth) or a pod (a member's
// announcement): the only annotations of claims and pods it reads.
const OwnAnnotationPrefix = "database.seed1b407122.io/"

// TrimClaim is the cache's transform of PersistentVolumeClaims: the operator reads a member
// claim's identity, labels, owners, deletion and its own annotations (OwnAnnotationPrefix); of
// its spec the access modes, the resources, the StorageClass and the bound volume; of its
// status the phase, the capacity and the resize conditions. The annotations of the volume
// binder and the provisioners, the finalizers, the data source and the rest of the status are
// dropped, and the resource maps (a request and a capacity of one entry each) are shared with
// the claims of the same sizes, the labels with the cluster's other children (s, shared.go;
// BenchmarkClaimCacheMemory measures what a cached claim holds). The operator
// writes a claim only by merge patches computed between two trimmed copies (the storage
// request, its own annotation, the owner references), so a dropped field is never written;
// every field it writes must be kept here.
func (s *Shared) TrimClaim(obj any) (any, error) {
	claim, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return obj, nil
	}
	meta := identity(&claim.ObjectMeta)
	meta.Labels = s.shareLabels(meta.Labels)
	meta.Annotations = ownAnnotations(claim.Annotations)
	return &corev1.PersistentVolumeClaim{
		TypeMeta:   claim.TypeMeta,
		ObjectMeta: meta,
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: claim.Spec.AccessModes,
			Resources: corev1.VolumeResourceRequirements{
				Limits: s.shareResources(claim.Spec.Resources.Limits), Requests: s.shareResources(claim.Spec.Resources.Requests)},
			StorageClassName: claim.Spec.StorageClassName, VolumeName: claim.Spec.VolumeName,
		},
		Status: corev1.PersistentVolumeClaimStatus{
			Phase: claim.Status.Phase, Capacity: s.shareResources(claim.Status.Capacity), Conditions: claim.Status.Conditions,
		},
	}, nil
}

// ownAnnotations returns the annotations of annotations whose key starts with
// OwnAnnotationPrefix, nil when there is none.
func ownAnnotations(annotations map[string]string) map[string]string {
	var own map[string]string
	for k, v := range annotations {
		if strings.HasPrefix(k, OwnAnnotationPrefix) {
			if own == nil {
				own = map[string]string{}
			}
			own[k] = v
		}
	}
	return own
}

// trimStatuses keeps of each container status what tells whether it starts: its state, the
// last termination's (a crash loop's exit code), readiness and restarts; not its image or IDs.
func trimStatuses(statuses []corev1.ContainerStatus) []corev1.ContainerStatus {
	var out []corev1.ContainerStatus
	for _, c := range statuses {
		out = append(out, corev1.ContainerStatus{
			Name: c.Name, Ready: c.Ready, State: c.State, LastTerminationState: c.LastTerminationState,
			RestartCount: c.RestartCount, Started: c.Started,
		})
	}
	return out
}
