package olm

import (
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

var _ = Describe("RBAC grants", Label("unit"), func() {
	// namespaced knows a few resources, as the API server's discovery would.
	namespaced := func(group, resource string) (bool, error) {
		switch group + "/" + resource {
		case "apps/statefulsets", "/pods", "/events", "example.com/things", "example.com/things/status":
			return true, nil
		case "authentication.k8s.io/tokenreviews", "/nodes":
			return false, nil
		}
		return false, errors.New("unknown resource " + group + "/" + resource)
	}
	rule := func(groups, resources, verbs []string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{APIGroups: groups, Resources: resources, Verbs: verbs}
	}

	DescribeTable("NamespacedWrites",
		func(rules []rbacv1.PolicyRule, want []string) {
			Expect(NamespacedWrites(rules, namespaced)).To(Equal(want))
		},
		Entry("read verbs only", []rbacv1.PolicyRule{rule([]string{"apps"}, []string{"statefulsets"}, []string{"get", "list", "watch"})}, nil),
		Entry("writes on cluster-scoped resources", []rbacv1.PolicyRule{
			rule([]string{"authentication.k8s.io"}, []string{"tokenreviews"}, []string{"create"}),
			rule([]string{""}, []string{"nodes"}, []string{"delete", "patch"}),
		}, nil),
		Entry("non-resource URLs", []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"*"}}}, nil),
		Entry("every write verb on namespaced resources, subresources included", []rbacv1.PolicyRule{
			rule([]string{"apps"}, []string{"statefulsets"}, []string{"get", "create", "update"}),
			rule([]string{""}, []string{"pods", "nodes"}, []string{"patch", "delete", "deletecollection"}),
			rule([]string{"example.com"}, []string{"things/status"}, []string{"*"}),
		}, []string{"* example.com/things/status", "create apps/statefulsets", "delete pods", "deletecollection pods", "patch pods", "update apps/statefulsets"}),
		Entry("wildcards count as namespaced", []rbacv1.PolicyRule{
			rule([]string{"*"}, []string{"secrets"}, []string{"create"}),
			rule([]string{"apps"}, []string{"*"}, []string{"delete"}),
		}, []string{"create */secrets", "delete apps/*"}),
	)

	It("fails on a resource of unknown scope", func() {
		_, err := NamespacedWrites([]rbacv1.PolicyRule{rule([]string{""}, []string{"gizmos"}, []string{"create"})}, namespaced)
		Expect(err).To(MatchError("unknown resource /gizmos"))
	})

	It("finds the roles bound to a ServiceAccount, directly or through its groups", func(ctx SpecContext) {
		sa := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "op", Namespace: "ops"}
		other := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "op", Namespace: "elsewhere"}
		objs := []client.Object{
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "metrics-auth"},
				Rules: []rbacv1.PolicyRule{rule([]string{"authentication.k8s.io"}, []string{"tokenreviews"}, []string{"create"})}},
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "metrics-auth"}, Subjects: []rbacv1.Subject{sa},
				RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "metrics-auth"}},
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "everyone"}},
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "everyone"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, Name: "system:serviceaccounts:ops"}},
				RoleRef:  rbacv1.RoleRef{Kind: "ClusterRole", Name: "everyone"}},
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "not-ours"}, Subjects: []rbacv1.Subject{other},
				RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "metrics-auth"}},
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "dangling"}, Subjects: []rbacv1.Subject{sa},
				RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "gone"}},
			&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "manager"},
				Rules: []rbacv1.PolicyRule{rule([]string{"apps"}, []string{"statefulsets"}, []string{"create"})}},
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "manager"}, Subjects: []rbacv1.Subject{sa},
				RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "manager"}},
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "view"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "system:serviceaccount:ops:op"}},
				RoleRef:  rbacv1.RoleRef{Kind: "ClusterRole", Name: "everyone"}},
		}
		scheme := runtime.NewScheme()
		Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
		c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()

		grants, err := ServiceAccountGrants(ctx, c, "ops", "op")
		Expect(err).NotTo(HaveOccurred())
		var names []string
		for _, g := range grants {
			names = append(names, g.String())
		}
		Expect(names).To(Equal([]string{
			"ClusterRole everyone (cluster-wide)", "ClusterRole metrics-auth (cluster-wide)",
			"ClusterRole everyone in team", "Role manager in team",
		}))
		Expect(grants[3].Rules).To(Equal([]rbacv1.PolicyRule{rule([]string{"apps"}, []string{"statefulsets"}, []string{"create"})}))
		Expect(DescribeGrants(grants[1:2])).To(Equal("ClusterRole metrics-auth (cluster-wide): [authentication.k8s.io/tokenreviews: create]\n"))
	})
})
