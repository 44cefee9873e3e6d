package olm

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WriteVerbs are the RBAC verbs that change objects; "*" includes them all.
var WriteVerbs = []string{"create", "update", "patch", "delete", "deletecollection", rbacv1.VerbAll}

// RoleGrant is one role bound to a ServiceAccount: where it applies ("" for a
// ClusterRoleBinding, i.e. every namespace), the role's kind and name, and its rules.
type RoleGrant struct {
	Namespace string
	Kind      string
	Name      string
	Rules     []rbacv1.PolicyRule
}

// String is "ClusterRole NAME (cluster-wide)" or "Role NAME in NAMESPACE".
func (g RoleGrant) String() string {
	if g.Namespace == "" {
		return g.Kind + " " + g.Name + " (cluster-wide)"
	}
	return g.Kind + " " + g.Name + " in " + g.Namespace
}

// ServiceAccountGrants returns every role bound to the ServiceAccount namespace/name, directly
// or through the groups every ServiceAccount token carries (system:serviceaccounts,
// system:serviceaccounts:NAMESPACE, system:authenticated): the ClusterRoles of
// ClusterRoleBindings first, then the roles of RoleBindings, sorted by namespace, kind and name.
// A binding to a role that does not exist is skipped, as the authorizer skips it.
func ServiceAccountGrants(ctx context.Context, c client.Client, namespace, name string) ([]RoleGrant, error) {
	bindings, err := listBindings(ctx, c)
	if err != nil {
		return nil, err
	}
	var grants []RoleGrant
	for _, b := range bindings {
		if !bindsServiceAccount(b.subjects, namespace, name) {
			continue
		}
		g, ok, err := roleGrant(ctx, c, b.namespace, b.roleRef)
		if err != nil {
			return nil, err
		}
		if ok {
			grants = append(grants, g)
		}
	}
	sort.SliceStable(grants, func(i, j int) bool {
		a, b := grants[i], grants[j]
		return a.Namespace < b.Namespace || a.Namespace == b.Namespace && (a.Kind < b.Kind || a.Kind == b.Kind && a.Name < b.Name)
	})
	return grants, nil
}

// binding is what ServiceAccountGrants reads of a ClusterRoleBinding (namespace "") or a
// RoleBinding.
type binding struct {
	namespace string
	subjects  []rbacv1.Subject
	roleRef   rbacv1.RoleRef
}

// listBindings lists the ClusterRoleBindings, then the RoleBindings.
func listBindings(ctx context.Context, c client.Client) ([]binding, error) {
	crbs := &rbacv1.ClusterRoleBindingList{}
	if err := c.List(ctx, crbs); err != nil {
		return nil, fmt.Errorf("listing ClusterRoleBindings: %w", err)
	}
	rbs := &rbacv1.RoleBindingList{}
	if err := c.List(ctx, rbs); err != nil {
		return nil, fmt.Errorf("listing RoleBindings: %w", err)
	}
	bindings := make([]binding, 0, len(crbs.Items)+len(rbs.Items))
	for _, b := range crbs.Items {
		bindings = append(bindings, binding{subjects: b.Subjects, roleRef: b.RoleRef})
	}
	for _, b := range rbs.Items {
		bindings = append(bindings, binding{namespace: b.Namespace, subjects: b.Subjects, roleRef: b.RoleRef})
	}
	return bindings, nil
}

// roleGrant reads the role ref points to; a RoleBinding's Role lives in its namespace.
func roleGrant(ctx context.Context, c client.Client, namespace string, ref rbacv1.RoleRef) (RoleGrant, bool, error) {
	g := RoleGrant{Namespace: namespace, Kind: ref.Kind, Name: ref.Name}
	var err error
	if ref.Kind == "Role" {
		role := &rbacv1.Role{}
		err = c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, role)
		g.Rules = role.Rules
	} else {
		role := &rbacv1.ClusterRole{}
		err = c.Get(ctx, client.ObjectKey{Name: ref.Name}, role)
		g.Rules = role.Rules
	}
	if client.IgnoreNotFound(err) != nil {
		return g, false, fmt.Errorf("reading %s: %w", g, err)
	}
	return g, err == nil, nil
}

// bindsServiceAccount reports whether subjects name the ServiceAccount or a group its token
// carries.
func bindsServiceAccount(subjects []rbacv1.Subject, namespace, name string) bool {
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.ServiceAccountKind:
			if s.Name == name && s.Namespace == namespace {
				return true
			}
		case rbacv1.UserKind:
			if s.Name == "system:serviceaccount:"+namespace+":"+name {
				return true
			}
		case rbacv1.GroupKind:
			if s.Name == "system:serviceaccounts" || s.Name == "system:serviceaccounts:"+namespace || s.Name == "system:authenticated" {
				return true
			}
		}
	}
	return false
}

// NamespacedWrites lists what rules allow to change in namespaced resources, one
// "verb group/resource" per verb and resource, sorted. namespaced says whether a resource of a
// group is namespaced; wildcards count as namespaced (they include every namespaced resource),
// non-resource URLs do not.
func NamespacedWrites(rules []rbacv1.PolicyRule, namespaced func(group, resource string) (bool, error)) ([]string, error) {
	var out []string
	for _, r := range rules {
		var verbs []string
		for _, v := range r.Verbs {
			if slices.Contains(WriteVerbs, v) {
				verbs = append(verbs, v)
			}
		}
		if len(verbs) == 0 {
			continue
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				ns := true
				if g != rbacv1.APIGroupAll && res != rbacv1.ResourceAll {
					var err error
					if ns, err = namespaced(g, res); err != nil {
						return nil, err
					}
				}
				if !ns {
					continue
				}
				for _, v := range verbs {
					out = append(out, v+" "+strings.TrimPrefix(g+"/"+res, "/"))
				}
			}
		}
	}
	sort.Strings(out)
	return slices.Compact(out), nil
}

// NamespacedByMapper answers NamespacedWrites' question from the API server's discovery
// (a subresource such as "databaseclusters/status" has the scope of its resource).
func NamespacedByMapper(mapper meta.RESTMapper) func(group, resource string) (bool, error) {
	return func(group, resource string) (bool, error) {
		base, _, _ := strings.Cut(resource, "/")
		gvk, err := mapper.KindFor(schema.GroupVersionResource{Group: group, Resource: base})
		if err != nil {
			return false, fmt.Errorf("resource %s of group %q: %w", base, group, err)
		}
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return false, fmt.Errorf("mapping %s: %w", gvk, err)
		}
		return m.Scope.Name() == meta.RESTScopeNameNamespace, nil
	}
}

// DescribeGrants renders grants one per line, with the rules' verbs and resources.
func DescribeGrants(grants []RoleGrant) string {
	var b strings.Builder
	for _, g := range grants {
		fmt.Fprintf(&b, "%s:", g)
		for _, r := range g.Rules {
			what := strings.Join(r.NonResourceURLs, ",")
			if what == "" {
				var res []string
				for _, grp := range r.APIGroups {
					for _, x := range r.Resources {
						res = append(res, strings.TrimPrefix(grp+"/"+x, "/"))
					}
				}
				what = strings.Join(res, ",")
			}
			fmt.Fprintf(&b, " [%s: %s]", what, strings.Join(r.Verbs, ","))
		}
		b.WriteString("\n")
	}
	return b.String()
}
