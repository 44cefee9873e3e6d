package bundlegen

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// input is a small "kustomize build" output: everything the generator handles, no ECHO_IMAGE.
const input = `
apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: x.v0.0.0
  namespace: placeholder
  annotations:
    createdAt: "2026-01-01T00:00:00Z"
spec:
  displayName: X
---
apiVersion: v1
kind: Namespace
metadata: {name: x-system}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.example.com}
spec:
  group: example.com
  names: {kind: Thing, plural: things}
  scope: Namespaced
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: x-sa, namespace: x-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: x-leader, namespace: x-system}
rules: [{apiGroups: [coordination.k8s.io], resources: [leases], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: x-leader, namespace: x-system}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: x-leader}
subjects: [{kind: ServiceAccount, name: x-sa, namespace: x-system}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: x-manager}
rules:
- {apiGroups: [example.com], resources: [things, things/status], verbs: [list]}
- {apiGroups: [authentication.k8s.io], resources: [tokenreviews], verbs: [create]}
- {apiGroups: [""], resources: [pods, nodes], verbs: [get]}
- {nonResourceURLs: [/metrics], verbs: [get]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: x-manager}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: x-manager}
subjects: [{kind: ServiceAccount, name: x-sa, namespace: x-system}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: x-thing-viewer}
rules: [{apiGroups: [example.com], resources: [things], verbs: [get]}]
---
apiVersion: v1
kind: Service
metadata: {name: x-metrics, namespace: x-system}
spec: {ports: [{port: 8443}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: x-manager, namespace: x-system, labels: {app: x}}
spec:
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec:
      serviceAccountName: x-sa
      containers:
      - name: manager
        image: x:latest
        env:
        - {name: WATCH_NAMESPACE, value: ""}
        - {name: RELATED_IMAGE_DB_SERVER, value: "db:1"}
        - {name: RELATED_IMAGE_SELF, value: "x:latest"}
---
apiVersion: example.com/v1
kind: Thing
metadata: {name: thing-sample}
spec: {size: 1}
`

func generate(t *testing.T, in string, o Options) (string, *v1alpha1.ClusterServiceVersion) {
	t.Helper()
	o.Package, o.OutputDir = "x", t.TempDir()
	o.Channels = []string{"stable"}
	if err := Generate(strings.NewReader(in), o); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(o.OutputDir, "manifests", "x.clusterserviceversion.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var csv v1alpha1.ClusterServiceVersion
	if err := yaml.UnmarshalStrict(raw, &csv); err != nil {
		t.Fatal(err)
	}
	return o.OutputDir, &csv
}

func TestGenerate(t *testing.T) {
	dir, csv := generate(t, input, Options{Version: "1.2.3", PreviousVersion: "1.2.0", OperatorImage: "x:1.2.3"})

	if csv.Name != "x.v1.2.3" || csv.Spec.Version.String() != "1.2.3" || csv.Namespace != "" {
		t.Errorf("name %q version %q namespace %q", csv.Name, csv.Spec.Version, csv.Namespace)
	}
	if csv.Spec.Replaces != "x.v1.2.0" || csv.Annotations["olm.skipRange"] != "<1.2.3" {
		t.Errorf("replaces %q skipRange %q", csv.Spec.Replaces, csv.Annotations["olm.skipRange"])
	}
	if csv.Annotations["createdAt"] != "2026-01-01T00:00:00Z" {
		t.Errorf("createdAt %q, want the base's", csv.Annotations["createdAt"])
	}
	s := csv.Spec.InstallStrategy.StrategySpec
	if len(s.DeploymentSpecs) != 1 || s.DeploymentSpecs[0].Name != "x-manager" {
		t.Fatalf("deployments %+v", s.DeploymentSpecs)
	}
	c := s.DeploymentSpecs[0].Spec.Template.Spec.Containers[0]
	if c.Image != "x:1.2.3" {
		t.Errorf("image %q", c.Image)
	}
	// A RELATED_IMAGE_* that named the manager's image follows it (the storage agent's); others stay.
	if c.Env[1].Value != "db:1" || c.Env[2].Value != "x:1.2.3" {
		t.Errorf("RELATED_IMAGE_DB_SERVER %q, RELATED_IMAGE_SELF %q; want db:1 and the operator image x:1.2.3", c.Env[1].Value, c.Env[2].Value)
	}
	if f := c.Env[0].ValueFrom; f == nil || f.FieldRef.FieldPath != "metadata.annotations['olm.targetNamespaces']" {
		t.Errorf("WATCH_NAMESPACE does not follow the OperatorGroup: %+v", c.Env[0])
	}
	// The Role's rules, then the bound ClusterRole's rules on namespaced resources: OLM scopes
	// permissions to the target namespaces. Only cluster-scoped resources and non-resource URLs
	// stay in clusterPermissions.
	wantPermissions := []v1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: "x-sa", Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get"}},
		{APIGroups: []string{"example.com"}, Resources: []string{"things", "things/status"}, Verbs: []string{"list"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}},
	}}}
	if !reflect.DeepEqual(s.Permissions, wantPermissions) {
		t.Errorf("permissions\n%+v\nwant\n%+v", s.Permissions, wantPermissions)
	}
	wantClusterPermissions := []v1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: "x-sa", Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get"}},
		{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}},
	}}}
	if !reflect.DeepEqual(s.ClusterPermissions, wantClusterPermissions) {
		t.Errorf("clusterPermissions\n%+v\nwant\n%+v", s.ClusterPermissions, wantClusterPermissions)
	}
	want := []v1alpha1.RelatedImage{{Name: "x-manager", Image: "x:1.2.3"}, {Name: "db-server", Image: "db:1"}}
	if len(csv.Spec.RelatedImages) != 2 || csv.Spec.RelatedImages[0] != want[0] || csv.Spec.RelatedImages[1] != want[1] {
		t.Errorf("relatedImages %+v, want %+v", csv.Spec.RelatedImages, want)
	}
	if !strings.Contains(csv.Annotations["alm-examples"], `"name": "thing-sample"`) {
		t.Errorf("alm-examples %s", csv.Annotations["alm-examples"])
	}

	var files []string
	entries, _ := os.ReadDir(filepath.Join(dir, "manifests"))
	for _, e := range entries {
		files = append(files, e.Name())
	}
	// The CRD, the unbound ClusterRole and the Service are files; the Namespace, the
	// ServiceAccount, the bound roles and the bindings are not.
	wantFiles := "example.com_things.yaml x-metrics_v1_service.yaml x-thing-viewer_rbac.authorization.k8s.io_v1_clusterrole.yaml x.clusterserviceversion.yaml"
	if strings.Join(files, " ") != wantFiles {
		t.Errorf("manifests/ holds %q, want %q", files, wantFiles)
	}
	if svc, _ := os.ReadFile(filepath.Join(dir, "manifests", "x-metrics_v1_service.yaml")); strings.Contains(string(svc), "namespace") {
		t.Errorf("bundle objects must not carry a namespace:\n%s", svc)
	}
}

func TestGenerateWithoutPreviousVersion(t *testing.T) {
	_, csv := generate(t, input, Options{Version: "1.0.0", CreatedAt: "2027-01-01T00:00:00Z"})
	if csv.Spec.Replaces != "" || csv.Annotations["olm.skipRange"] != "" {
		t.Errorf("replaces %q skipRange %q, want none", csv.Spec.Replaces, csv.Annotations["olm.skipRange"])
	}
	if csv.Annotations["createdAt"] != "2027-01-01T00:00:00Z" {
		t.Errorf("createdAt %q", csv.Annotations["createdAt"])
	}
	if csv.Spec.RelatedImages[0].Image != "x:latest" {
		t.Errorf("operator image %q, want the Deployment's", csv.Spec.RelatedImages[0].Image)
	}
}

func TestGenerateErrors(t *testing.T) {
	for name, tc := range map[string]struct{ in, version, previous, want string }{
		"previous not lower": {input, "1.0.0", "1.0.0", "previous version 1.0.0 is not lower than 1.0.0"},
		"bad version":        {input, "v1", "", `version "v1"`},
		"no CSV base":        {"apiVersion: v1\nkind: Service\nmetadata: {name: s}\n", "1.0.0", "", "no ClusterServiceVersion base"},
		"resource of unknown scope": {strings.Replace(input, "resources: [pods, nodes]", "resources: [pods, gizmos]", 1), "1.0.0", "",
			`resource "gizmos" of API group "", whose scope the bundle generator does not know`},
		"CRD without a scope": {strings.Replace(input, "  scope: Namespaced\n", "", 1), "1.0.0", "",
			`CustomResourceDefinition things.example.com: spec.scope "", want Namespaced or Cluster`},
		"unsupported kind": {input + "---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: w}\n",
			"1.0.0", "", "ValidatingWebhookConfiguration w: kind not supported in an OLM bundle"},
	} {
		t.Run(name, func(t *testing.T) {
			err := Generate(strings.NewReader(tc.in), Options{Package: "x", Version: tc.version, PreviousVersion: tc.previous, OutputDir: t.TempDir()})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestSplitByScope(t *testing.T) {
	sc, err := newScopes(nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		rules, namespaced, cluster []rbacv1.PolicyRule
	}{
		"wildcard resource stays cluster-wide": {
			rules:   []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"*"}, Verbs: []string{"get"}}},
			cluster: []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"*"}, Verbs: []string{"get"}}},
		},
		"wildcard group stays cluster-wide": {
			rules:   []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"pods"}, Verbs: []string{"get"}}},
			cluster: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"pods"}, Verbs: []string{"get"}}},
		},
		"groups that disagree are split per group": {
			rules: []rbacv1.PolicyRule{{APIGroups: []string{"", "storage.k8s.io"}, Resources: []string{"persistentvolumeclaims", "storageclasses"},
				Verbs: []string{"get"}, ResourceNames: []string{"a"}}},
			namespaced: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"get"}, ResourceNames: []string{"a"}}},
			cluster: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"storageclasses"}, Verbs: []string{"get"}, ResourceNames: []string{"a"}},
				{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"persistentvolumeclaims", "storageclasses"}, Verbs: []string{"get"}, ResourceNames: []string{"a"}},
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			if name == "groups that disagree are split per group" {
				// persistentvolumeclaims of storage.k8s.io and storageclasses of the core group
				// do not exist: scope them for this case only.
				sc["storage.k8s.io/persistentvolumeclaims"], sc["/storageclasses"] = scopeCluster, scopeCluster
				defer delete(sc, "storage.k8s.io/persistentvolumeclaims")
				defer delete(sc, "/storageclasses")
			}
			namespaced, cluster, err := sc.splitByScope(tc.rules)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(namespaced, tc.namespaced) || !reflect.DeepEqual(cluster, tc.cluster) {
				t.Errorf("namespaced %+v\ncluster %+v\nwant %+v\n%+v", namespaced, cluster, tc.namespaced, tc.cluster)
			}
		})
	}
}
