package bundlegen

import (
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Least privilege by install mode. controller-gen writes every +kubebuilder:rbac marker into one
// ClusterRole (config/rbac/role.yaml), which kustomize and the Helm chart bind cluster-wide. OLM
// instead scopes what the CSV lists under permissions to the OperatorGroup's target namespaces
// (a Role and RoleBinding in each; ClusterRoles only for an AllNamespaces group), and grants what
// it lists under clusterPermissions everywhere. So the generator splits the ClusterRoles bound
// to the operator by the scope of each resource: rules on namespaced resources go to
// permissions, rules on cluster-scoped resources and non-resource URLs stay in
// clusterPermissions. The markers stay the one source for kustomize, the chart and the CSV.

// Scope of a resource.
type scope int

const (
	scopeUnknown scope = iota
	scopeNamespaced
	scopeCluster
)

// builtinScopes are the scopes of the Kubernetes resources (and a few widely installed CRDs)
// that RBAC rules name, keyed by "group/resource"; the bundle's own CRDs add theirs from
// spec.scope. A rule naming a resource found nowhere is an error: its scope must be decided
// here, not guessed.
var builtinScopes = func() map[string]scope {
	m := map[string]scope{}
	add := func(s scope, group string, resources ...string) {
		for _, r := range resources {
			m[group+"/"+r] = s
		}
	}
	add(scopeNamespaced, "", "bindings", "configmaps", "endpoints", "events", "limitranges",
		"persistentvolumeclaims", "pods", "podtemplates", "replicationcontrollers", "resourcequotas",
		"secrets", "serviceaccounts", "services")
	add(scopeCluster, "", "componentstatuses", "namespaces", "nodes", "persistentvolumes")
	add(scopeNamespaced, "apps", "controllerrevisions", "daemonsets", "deployments", "replicasets", "statefulsets")
	add(scopeNamespaced, "autoscaling", "horizontalpodautoscalers")
	add(scopeNamespaced, "batch", "cronjobs", "jobs")
	add(scopeNamespaced, "coordination.k8s.io", "leases")
	add(scopeNamespaced, "discovery.k8s.io", "endpointslices")
	add(scopeNamespaced, "events.k8s.io", "events")
	add(scopeNamespaced, "networking.k8s.io", "ingresses", "networkpolicies")
	add(scopeCluster, "networking.k8s.io", "ingressclasses", "ipaddresses", "servicecidrs")
	add(scopeNamespaced, "policy", "poddisruptionbudgets")
	add(scopeNamespaced, "rbac.authorization.k8s.io", "rolebindings", "roles")
	add(scopeCluster, "rbac.authorization.k8s.io", "clusterrolebindings", "clusterroles")
	add(scopeNamespaced, "authorization.k8s.io", "localsubjectaccessreviews")
	add(scopeCluster, "authorization.k8s.io", "selfsubjectaccessreviews", "selfsubjectrulesreviews", "subjectaccessreviews")
	add(scopeCluster, "authentication.k8s.io", "selfsubjectreviews", "tokenreviews")
	add(scopeCluster, "admissionregistration.k8s.io", "mutatingwebhookconfigurations", "validatingwebhookconfigurations",
		"mutatingadmissionpolicies", "mutatingadmissionpolicybindings", "validatingadmissionpolicies", "validatingadmissionpolicybindings")
	add(scopeCluster, "apiextensions.k8s.io", "customresourcedefinitions")
	add(scopeCluster, "apiregistration.k8s.io", "apiservices")
	add(scopeCluster, "certificates.k8s.io", "certificatesigningrequests", "clustertrustbundles")
	add(scopeCluster, "flowcontrol.apiserver.k8s.io", "flowschemas", "prioritylevelconfigurations")
	add(scopeCluster, "node.k8s.io", "runtimeclasses")
	add(scopeCluster, "scheduling.k8s.io", "priorityclasses")
	add(scopeNamespaced, "storage.k8s.io", "csistoragecapacities")
	add(scopeCluster, "storage.k8s.io", "csidrivers", "csinodes", "storageclasses", "volumeattachments", "volumeattributesclasses")
	add(scopeNamespaced, "snapshot.storage.k8s.io", "volumesnapshots")
	add(scopeCluster, "snapshot.storage.k8s.io", "volumesnapshotclasses", "volumesnapshotcontents")
	add(scopeNamespaced, "monitoring.coreos.com", "podmonitors", "prometheusrules", "servicemonitors")
	return m
}()

// scopes are the resource scopes the generator knows: the built-in ones and those of the
// bundle's CRDs.
type scopes map[string]scope

// newScopes returns the built-in scopes plus those of crds (spec.scope, "Namespaced" or
// "Cluster").
func newScopes(crds []*unstructured.Unstructured) (scopes, error) {
	s := scopes{}
	for k, v := range builtinScopes {
		s[k] = v
	}
	for _, u := range crds {
		group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
		plural, _, _ := unstructured.NestedString(u.Object, "spec", "names", "plural")
		sc, _, _ := unstructured.NestedString(u.Object, "spec", "scope")
		switch sc {
		case "Namespaced":
			s[group+"/"+plural] = scopeNamespaced
		case "Cluster":
			s[group+"/"+plural] = scopeCluster
		default:
			return nil, fmt.Errorf("CustomResourceDefinition %s: spec.scope %q, want Namespaced or Cluster", u.GetName(), sc)
		}
	}
	return s, nil
}

// of returns the scope of resource (a subresource such as "pods/log" has its resource's) in
// group. A wildcard matches cluster-scoped resources too, so it counts as cluster-scoped.
func (s scopes) of(group, resource string) (scope, error) {
	if group == rbacv1.APIGroupAll || resource == rbacv1.ResourceAll {
		return scopeCluster, nil
	}
	base, _, _ := strings.Cut(resource, "/")
	if sc := s[group+"/"+base]; sc != scopeUnknown {
		return sc, nil
	}
	return scopeUnknown, fmt.Errorf("an RBAC rule names resource %q of API group %q, whose scope the bundle generator does not know: "+
		"add it to builtinScopes in hack/olm/bundlegen/scope.go", resource, group)
}

// splitByScope splits cluster-wide rules into the rules on namespaced resources and the rules
// that must stay cluster-wide (cluster-scoped resources, wildcards, non-resource URLs). A rule
// naming both kinds of resources becomes one rule of each, with the same verbs, groups and
// resourceNames; when its API groups disagree on a resource's scope it is split per group.
func (s scopes) splitByScope(rules []rbacv1.PolicyRule) (namespaced, cluster []rbacv1.PolicyRule, err error) {
	for _, r := range rules {
		if len(r.NonResourceURLs) > 0 {
			cluster = append(cluster, r)
			continue
		}
		parts, err := s.partition(r)
		if err != nil {
			return nil, nil, err
		}
		for _, p := range parts {
			if len(p.namespaced) > 0 {
				namespaced = append(namespaced, withResources(r, p.groups, p.namespaced))
			}
			if len(p.cluster) > 0 {
				cluster = append(cluster, withResources(r, p.groups, p.cluster))
			}
		}
	}
	return namespaced, cluster, nil
}

// partition is a rule's resources split by scope for some of its API groups.
type partition struct {
	groups              []string
	namespaced, cluster []string
}

// partition splits r's resources by scope: one partition for all its groups when they agree,
// else one per group.
func (s scopes) partition(r rbacv1.PolicyRule) ([]partition, error) {
	var parts []partition
	for _, g := range r.APIGroups {
		p := partition{groups: []string{g}}
		for _, res := range r.Resources {
			sc, err := s.of(g, res)
			if err != nil {
				return nil, err
			}
			if sc == scopeNamespaced {
				p.namespaced = append(p.namespaced, res)
			} else {
				p.cluster = append(p.cluster, res)
			}
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return nil, nil
	}
	for _, p := range parts[1:] {
		if !slices.Equal(p.namespaced, parts[0].namespaced) {
			return parts, nil
		}
	}
	return []partition{{groups: r.APIGroups, namespaced: parts[0].namespaced, cluster: parts[0].cluster}}, nil
}

// withResources is a copy of r for groups and resources.
func withResources(r rbacv1.PolicyRule, groups, resources []string) rbacv1.PolicyRule {
	r.APIGroups = slices.Clone(groups)
	r.Resources = slices.Clone(resources)
	r.Verbs = slices.Clone(r.Verbs)
	r.ResourceNames = slices.Clone(r.ResourceNames)
	return r
}
