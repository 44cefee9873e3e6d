// OLM v1 (operator-controller's ClusterExtension) installs registry+v1 bundles only within limits:
// the bundle must support the AllNamespaces install mode, declare no dependency (olm.gvk.required,
// olm.package.required, olm.constraint), own no webhooks or API services, and not use the
// OperatorConditions API. These tests hold every bundle of the committed catalog to those limits,
// so the README's ClusterCatalog + ClusterExtension install (not run here: the operator-controller
// module is not served by the module proxy) stays possible.
package olm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/seed1b407122/database-operator/hack/olm/validate"
)

// catalogBundles loads the committed catalog's bundles with their objects.
func catalogBundles(t *testing.T) []declcfg.Bundle {
	t.Helper()
	cfg, err := declcfg.LoadFS(context.Background(), os.DirFS(filepath.Join(repoRoot, "catalog")))
	if err != nil {
		t.Fatalf("loading catalog/: %v", err)
	}
	if len(cfg.Bundles) == 0 {
		t.Fatal("catalog/ holds no bundle")
	}
	return cfg.Bundles
}

// bundleCSV decodes the ClusterServiceVersion of a catalog bundle.
func bundleCSV(t *testing.T, b declcfg.Bundle) *v1alpha1.ClusterServiceVersion {
	t.Helper()
	if b.CsvJSON == "" {
		t.Fatalf("bundle %s carries no ClusterServiceVersion", b.Name)
	}
	csv := &v1alpha1.ClusterServiceVersion{}
	if err := json.Unmarshal([]byte(b.CsvJSON), csv); err != nil {
		t.Fatalf("bundle %s: decoding its CSV: %v", b.Name, err)
	}
	return csv
}

func TestCatalogBundlesFitOLMv1(t *testing.T) {
	for _, b := range catalogBundles(t) {
		t.Run(b.Name, func(t *testing.T) {
			for _, problem := range olmV1Problems(b, bundleCSV(t, b)) {
				t.Error(problem)
			}
		})
	}
}

// olmV1Problems lists what keeps OLM v1 from installing the bundle.
func olmV1Problems(b declcfg.Bundle, csv *v1alpha1.ClusterServiceVersion) []string {
	var problems []string
	for _, p := range b.Properties {
		if slices.Contains([]string{property.TypeGVKRequired, property.TypePackageRequired, property.TypeConstraint}, p.Type) {
			problems = append(problems, "declares a dependency ("+p.Type+"): OLM v1 resolves none")
		}
	}
	allNamespaces := false
	for _, m := range csv.Spec.InstallModes {
		allNamespaces = allNamespaces || (m.Type == v1alpha1.InstallModeTypeAllNamespaces && m.Supported)
	}
	if !allNamespaces {
		problems = append(problems, "does not support the AllNamespaces install mode, which OLM v1 installs")
	}
	if len(csv.Spec.WebhookDefinitions) > 0 {
		problems = append(problems, "owns webhooks: OLM v1 installs them only behind a feature gate")
	}
	if len(csv.Spec.APIServiceDefinitions.Owned) > 0 {
		problems = append(problems, "owns API services: OLM v1 does not install them")
	}
	if usesOperatorConditions(csv) {
		problems = append(problems, "uses the OperatorConditions API, which OLM v1 does not serve")
	}
	return problems
}

// usesOperatorConditions reports whether the CSV's operator reads its OperatorCondition: a rule on
// operatorconditions, or the OPERATOR_CONDITION_NAME variable OLM v0 injects for it.
func usesOperatorConditions(csv *v1alpha1.ClusterServiceVersion) bool {
	spec := csv.Spec.InstallStrategy.StrategySpec
	for _, perms := range [][]v1alpha1.StrategyDeploymentPermissions{spec.Permissions, spec.ClusterPermissions} {
		for _, p := range perms {
			for _, rule := range p.Rules {
				if slices.Contains(rule.Resources, "operatorconditions") || slices.Contains(rule.Resources, "*") {
					return true
				}
			}
		}
	}
	for _, d := range spec.DeploymentSpecs {
		for _, c := range d.Spec.Template.Spec.Containers {
			for _, env := range c.Env {
				if env.Name == "OPERATOR_CONDITION_NAME" {
					return true
				}
			}
		}
	}
	return false
}

// The check must be able to fail: each limit, broken on its own, is reported.
func TestOLMv1ProblemsFindEachBreach(t *testing.T) {
	good := func() (declcfg.Bundle, *v1alpha1.ClusterServiceVersion) {
		csv := &v1alpha1.ClusterServiceVersion{}
		csv.Spec.InstallModes = []v1alpha1.InstallMode{{Type: v1alpha1.InstallModeTypeAllNamespaces, Supported: true}}
		return declcfg.Bundle{Name: "b"}, csv
	}
	if b, csv := good(); len(olmV1Problems(b, csv)) != 0 {
		t.Fatalf("a fitting bundle was refused: %v", olmV1Problems(b, csv))
	}
	breaches := map[string]func(*declcfg.Bundle, *v1alpha1.ClusterServiceVersion){
		"declares a dependency (olm.gvk.required): OLM v1 resolves none": func(b *declcfg.Bundle, _ *v1alpha1.ClusterServiceVersion) {
			b.Properties = append(b.Properties, property.Property{Type: property.TypeGVKRequired})
		},
		"declares a dependency (olm.package.required): OLM v1 resolves none": func(b *declcfg.Bundle, _ *v1alpha1.ClusterServiceVersion) {
			b.Properties = append(b.Properties, property.Property{Type: property.TypePackageRequired})
		},
		"does not support the AllNamespaces install mode, which OLM v1 installs": func(_ *declcfg.Bundle, csv *v1alpha1.ClusterServiceVersion) {
			csv.Spec.InstallModes[0].Supported = false
		},
		"owns webhooks: OLM v1 installs them only behind a feature gate": func(_ *declcfg.Bundle, csv *v1alpha1.ClusterServiceVersion) {
			csv.Spec.WebhookDefinitions = []v1alpha1.WebhookDescription{{GenerateName: "w"}}
		},
		"uses the OperatorConditions API, which OLM v1 does not serve": func(_ *declcfg.Bundle, csv *v1alpha1.ClusterServiceVersion) {
			csv.Spec.InstallStrategy.StrategySpec.Permissions = []v1alpha1.StrategyDeploymentPermissions{{}}
			csv.Spec.InstallStrategy.StrategySpec.Permissions[0].Rules = append(csv.Spec.InstallStrategy.StrategySpec.Permissions[0].Rules,
				rbacRule("operators.coreos.com", "operatorconditions"))
		},
	}
	for want, breach := range breaches {
		b, csv := good()
		breach(&b, csv)
		if got := olmV1Problems(b, csv); !slices.Equal(got, []string{want}) {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

func rbacRule(group, resource string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{resource}, Verbs: []string{"get"}}
}

// Every bundle the catalog serves, not only bundle/, passes the operatorframework validator suite
// with no error and no warning: written out of the catalog into a bundle directory of its own.
// (The project's own checks, ProjectValidator, hold for the bundle being made; a released bundle
// cannot change.)
func TestCatalogBundlesPassTheValidators(t *testing.T) {
	for _, b := range catalogBundles(t) {
		t.Run(b.Name, func(t *testing.T) {
			dir := t.TempDir()
			writeBundleDir(t, dir, b)
			report, err := validate.BundleWith(dir, validate.Suite)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range report.Errors {
				t.Errorf("error: %s", e)
			}
			for _, w := range report.Warnings {
				t.Errorf("warning: %s", w)
			}
		})
	}
}

// writeBundleDir writes a catalog bundle as a registry+v1 bundle directory: each object under
// manifests/, and metadata/annotations.yaml naming its package and the catalog's channels (the
// default one first), so that the validators' channel checks see what the catalog publishes.
func writeBundleDir(t *testing.T, dir string, b declcfg.Bundle) {
	t.Helper()
	for _, d := range []string{"manifests", "metadata"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i, obj := range b.Objects {
		out, err := yaml.JSONToYAML([]byte(obj))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "manifests", fmt.Sprintf("object-%02d.yaml", i)), out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	annotations := fmt.Sprintf(`annotations:
  operators.operatorframework.io.bundle.mediatype.v1: registry+v1
  operators.operatorframework.io.bundle.manifests.v1: manifests/
  operators.operatorframework.io.bundle.metadata.v1: metadata/
  operators.operatorframework.io.bundle.package.v1: %s
  operators.operatorframework.io.bundle.channels.v1: %s
  operators.operatorframework.io.bundle.channel.default.v1: %s
`, b.Package, channel+","+deprecatedChannel, channel)
	if err := os.WriteFile(filepath.Join(dir, "metadata", "annotations.yaml"), []byte(annotations), 0o644); err != nil {
		t.Fatal(err)
	}
}

// resourceOf is the group and resource of each kind a registry+v1 bundle may install.
var resourceOf = map[string][2]string{
	"CustomResourceDefinition": {"apiextensions.k8s.io", "customresourcedefinitions"},
	"ClusterRole":              {"rbac.authorization.k8s.io", "clusterroles"},
	"ClusterRoleBinding":       {"rbac.authorization.k8s.io", "clusterrolebindings"},
	"Role":                     {"rbac.authorization.k8s.io", "roles"},
	"RoleBinding":              {"rbac.authorization.k8s.io", "rolebindings"},
	"Deployment":               {"apps", "deployments"},
	"ServiceAccount":           {"", "serviceaccounts"},
	"Service":                  {"", "services"},
}

// installedKinds are the kinds OLM v1 creates for a bundle: its objects but the CSV, and what it
// makes of the CSV (the Deployment, its ServiceAccount, and the RBAC of its permissions).
func installedKinds(t *testing.T, b declcfg.Bundle, csv *v1alpha1.ClusterServiceVersion) []string {
	t.Helper()
	kinds := []string{"Deployment", "ServiceAccount"}
	if len(csv.Spec.InstallStrategy.StrategySpec.Permissions) > 0 {
		kinds = append(kinds, "Role", "RoleBinding")
	}
	if len(csv.Spec.InstallStrategy.StrategySpec.ClusterPermissions) > 0 {
		kinds = append(kinds, "ClusterRole", "ClusterRoleBinding")
	}
	for _, obj := range b.Objects {
		var meta struct{ Kind string }
		if err := json.Unmarshal([]byte(obj), &meta); err != nil {
			t.Fatal(err)
		}
		if meta.Kind != "ClusterServiceVersion" && !slices.Contains(kinds, meta.Kind) {
			kinds = append(kinds, meta.Kind)
		}
	}
	return kinds
}

// olmV1Install is config/olmv1/install.yaml, the OLM v1 install the README documents.
type olmV1Install struct {
	namespace, serviceAccount string
	installer                 rbacv1.ClusterRole
	binding                   rbacv1.ClusterRoleBinding
	extension                 struct {
		Spec struct {
			Namespace      string `json:"namespace"`
			ServiceAccount struct {
				Name string `json:"name"`
			} `json:"serviceAccount"`
			Source struct {
				Catalog struct {
					PackageName string   `json:"packageName"`
					Channels    []string `json:"channels"`
				} `json:"catalog"`
			} `json:"source"`
		} `json:"spec"`
	}
}

func readOLMv1Install(t *testing.T) olmV1Install {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "config", "olmv1", "install.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var in olmV1Install
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		var head struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			t.Fatal(err)
		}
		var target any
		switch head.Kind {
		case "Namespace":
			in.namespace = head.Metadata.Name
		case "ServiceAccount":
			in.serviceAccount = head.Metadata.Name
		case "ClusterRole":
			target = &in.installer
		case "ClusterRoleBinding":
			target = &in.binding
		case "ClusterExtension":
			target = &in.extension
		}
		if target != nil {
			if err := yaml.Unmarshal([]byte(doc), target); err != nil {
				t.Fatal(err)
			}
		}
	}
	return in
}

// grants reports whether role lets its holder do every verb on group/resource, any name.
func grants(role rbacv1.ClusterRole, group, resource string, verbs ...string) bool {
	for _, verb := range verbs {
		found := false
		for _, rule := range role.Rules {
			found = found || (len(rule.ResourceNames) == 0 && slices.Contains(rule.APIGroups, group) &&
				slices.Contains(rule.Resources, resource) && slices.Contains(rule.Verbs, verb))
		}
		if !found {
			return false
		}
	}
	return true
}

func TestOLMv1InstallCoversTheCatalog(t *testing.T) {
	in := readOLMv1Install(t)
	ext := in.extension.Spec
	if ext.Namespace != in.namespace || ext.ServiceAccount.Name != in.serviceAccount {
		t.Errorf("the ClusterExtension installs into %q as %q; the file makes namespace %q and ServiceAccount %q",
			ext.Namespace, ext.ServiceAccount.Name, in.namespace, in.serviceAccount)
	}
	if ext.Source.Catalog.PackageName != pkg || !slices.Equal(ext.Source.Catalog.Channels, []string{channel}) {
		t.Errorf("the ClusterExtension asks for package %q channels %q, want %q [%q]", ext.Source.Catalog.PackageName, ext.Source.Catalog.Channels, pkg, channel)
	}
	if in.binding.RoleRef.Name != in.installer.Name || len(in.binding.Subjects) != 1 ||
		in.binding.Subjects[0].Name != in.serviceAccount || in.binding.Subjects[0].Namespace != in.namespace {
		t.Errorf("the ClusterRoleBinding does not bind ClusterRole %s to ServiceAccount %s/%s: %+v", in.installer.Name, in.namespace, in.serviceAccount, in.binding)
	}
	manage := []string{"create", "get", "list", "watch", "update", "patch", "delete"}
	for _, b := range catalogBundles(t) {
		for _, kind := range installedKinds(t, b, bundleCSV(t, b)) {
			gr, known := resourceOf[kind]
			if !known {
				t.Errorf("bundle %s installs a %s, which the installer role does not know: add it to resourceOf and to config/olmv1/install.yaml", b.Name, kind)
				continue
			}
			if !grants(in.installer, gr[0], gr[1], manage...) {
				t.Errorf("bundle %s installs %s (%s/%s); the installer ClusterRole cannot %v them", b.Name, kind, gr[0], gr[1], manage)
			}
		}
	}
	for _, resource := range []string{"roles", "clusterroles"} {
		if !grants(in.installer, "rbac.authorization.k8s.io", resource, "bind", "escalate") {
			t.Errorf("the installer cannot bind and escalate %s: it could only grant permissions it holds itself", resource)
		}
	}
}

// Every top-level spec and status field of every CRD the bundle being made owns has a descriptor
// with x-descriptors, so the console's forms and details pages show it.
func TestOwnedCRDFieldsHaveDescriptors(t *testing.T) {
	b, err := manifests.GetBundleFromDir(filepath.Join(repoRoot, "bundle"))
	if err != nil {
		t.Fatal(err)
	}
	for _, owned := range b.CSV.Spec.CustomResourceDefinitions.Owned {
		var schema map[string]apiextensionsv1.JSONSchemaProps
		for _, crd := range b.V1CRDs {
			if crd.Spec.Names.Kind == owned.Kind {
				for _, v := range crd.Spec.Versions {
					if v.Name == owned.Version {
						schema = v.Schema.OpenAPIV3Schema.Properties
					}
				}
			}
		}
		if schema == nil {
			t.Errorf("%s %s: no schema in the bundle", owned.Kind, owned.Version)
			continue
		}
		described := map[string]bool{}
		for _, d := range owned.SpecDescriptors {
			described["spec."+topField(d.Path)] = described["spec."+topField(d.Path)] || len(d.XDescriptors) > 0
		}
		for _, d := range owned.StatusDescriptors {
			described["status."+topField(d.Path)] = described["status."+topField(d.Path)] || len(d.XDescriptors) > 0
		}
		for _, part := range []string{"spec", "status"} {
			for field := range schema[part].Properties {
				if !described[part+"."+field] {
					t.Errorf("%s: %s.%s has no descriptor with x-descriptors", owned.Kind, part, field)
				}
			}
		}
	}
}

// topField is the first field of a descriptor path ("retention.keepLast" → "retention").
func topField(path string) string {
	field, _, _ := strings.Cut(path, ".")
	field, _, _ = strings.Cut(field, "[")
	return field
}
