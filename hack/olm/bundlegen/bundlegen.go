// Package bundlegen writes an OLM registry+v1 bundle (manifests/, metadata/, tests/scorecard/)
// from the output of "kustomize build config/manifests", the way "operator-sdk generate bundle"
// does: the CSV base is completed with the manager Deployment, its RBAC, the samples
// (alm-examples) and relatedImages; CRDs and the other objects OLM supports become files.
//
// The output depends only on the input and the Options (no clock, no map order), so running the
// generator twice gives the same bytes.
package bundlegen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/lib/version"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Builder names the tool in the CSV's operators.operatorframework.io/builder annotation and in
// the bundle's metrics annotations.
const Builder = "database-operator-bundle-gen.v1"

// Options say which bundle to write.
type Options struct {
	// Package is the OLM package name, e.g. "database-operator".
	Package string
	// Version is the bundle's semantic version without a leading "v", e.g. "0.2.0".
	Version string
	// PreviousVersion, when set, adds "replaces: <package>.v<PreviousVersion>" and
	// "olm.skipRange: <Version" to the CSV.
	PreviousVersion string
	// Channels and DefaultChannel go into metadata/annotations.yaml.
	Channels       []string
	DefaultChannel string
	// OperatorImage, when set, replaces the image of the manager container.
	OperatorImage string
	// CreatedAt, when set, replaces the CSV base's createdAt annotation.
	CreatedAt string
	// OutputDir is the bundle directory (it receives manifests/, metadata/, tests/scorecard/).
	OutputDir string
	// Dockerfile, when set, is where bundle.Dockerfile is written; its COPY sources are
	// OutputDir relative to the Dockerfile's directory (the build context).
	Dockerfile string
}

// Kinds that the generator treats specially.
const (
	kindClusterServiceVersion    = "ClusterServiceVersion"
	kindCustomResourceDefinition = "CustomResourceDefinition"
	kindDeployment               = "Deployment"
	kindConfiguration            = "Configuration" // the scorecard configuration
	kindNamespace                = "Namespace"
	kindServiceAccount           = "ServiceAccount"
	kindRole                     = "Role"
	kindClusterRole              = "ClusterRole"
	kindRoleBinding              = "RoleBinding"
	kindClusterRoleBinding       = "ClusterRoleBinding"
)

// supportedKinds are the kinds, besides CSVs and CRDs, that OLM installs from a bundle.
var supportedKinds = map[string]bool{
	kindClusterRole: true, kindClusterRoleBinding: true, "ConfigMap": true, "ConsoleCLIDownload": true,
	"ConsoleLink": true, "ConsoleQuickStart": true, "ConsoleYAMLSample": true, "NetworkPolicy": true,
	"PodDisruptionBudget": true, "PriorityClass": true, "PrometheusRule": true, kindRole: true,
	kindRoleBinding: true, "Secret": true, "Service": true, kindServiceAccount: true,
	"ServiceMonitor": true, "VerticalPodAutoscaler": true,
}

// Generate reads kustomize output from in and writes the bundle described by o.
func Generate(in io.Reader, o Options) error {
	if o.Package == "" || o.Version == "" || o.OutputDir == "" {
		return errors.New("package, version and output directory are required")
	}
	objs, err := decode(in)
	if err != nil {
		return err
	}
	files, err := build(objs, o)
	if err != nil {
		return err
	}
	// Start from empty generated directories so that files of removed objects disappear.
	for _, d := range []string{"manifests", "metadata", filepath.Join("tests", "scorecard")} {
		if err := os.RemoveAll(filepath.Join(o.OutputDir, d)); err != nil {
			return fmt.Errorf("cleaning %s: %w", d, err)
		}
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := writeFile(filepath.Join(o.OutputDir, name), files[name]); err != nil {
			return err
		}
	}
	if o.Dockerfile == "" {
		return nil
	}
	df, err := dockerfile(o)
	if err != nil {
		return err
	}
	return writeFile(o.Dockerfile, df)
}

// writeFile writes b to path, creating its directory.
func writeFile(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("creating directory of %s: %w", path, err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// decode splits a multi-document YAML stream into objects.
func decode(in io.Reader) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(in, 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, fmt.Errorf("decoding manifests: %w", err)
		}
		if len(m) == 0 {
			continue
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
}

// build returns the bundle's files, keyed by path relative to the bundle directory.
func build(objs []*unstructured.Unstructured, o Options) (map[string][]byte, error) {
	ver, err := semver.Parse(o.Version)
	if err != nil {
		return nil, fmt.Errorf("version %q: %w", o.Version, err)
	}
	in, err := sortInputs(objs)
	if err != nil {
		return nil, err
	}
	ann, err := csvMetadata(in.csv, o, ver)
	if err != nil {
		return nil, err
	}
	examples, err := almExamples(in.samples)
	if err != nil {
		return nil, err
	}
	ann["alm-examples"] = examples

	sc, err := newScopes(in.crds)
	if err != nil {
		return nil, err
	}
	strategy, bundled, err := installStrategy(in.deployments, in.rest, o.OperatorImage, sc)
	if err != nil {
		return nil, err
	}
	in.csv.Spec.InstallStrategy = v1alpha1.NamedInstallStrategy{
		StrategyName: v1alpha1.InstallStrategyNameDeployment,
		StrategySpec: strategy,
	}
	in.csv.Spec.RelatedImages = relatedImages(in.deployments)
	if len(in.csv.Spec.RelatedImages) > 0 {
		ann["containerImage"] = in.csv.Spec.RelatedImages[0].Image
	}
	in.csv.SetAnnotations(ann)

	return bundleFiles(in, bundled, o)
}

// inputs are the objects of the kustomize output, sorted by the role they play in the bundle.
type inputs struct {
	// csv is the ClusterServiceVersion base.
	csv *v1alpha1.ClusterServiceVersion
	// deployments become the CSV's install strategy.
	deployments []appsv1.Deployment
	// crds become files of their own.
	crds []*unstructured.Unstructured
	// samples are custom resources of the bundle's own CRDs; they become alm-examples.
	samples []*unstructured.Unstructured
	// rest are the other objects: RBAC folded into the CSV, or separate bundle files.
	rest []*unstructured.Unstructured
	// scorecard is the scorecard Configuration, if any.
	scorecard *unstructured.Unstructured
}

// sortInputs classifies objs: the CSV base, Deployments, CRDs, the scorecard configuration,
// the samples (custom resources of the bundle's own CRDs) and the remaining objects. Namespaces
// are dropped. It fails unless there is exactly one CSV base and at least one Deployment.
func sortInputs(objs []*unstructured.Unstructured) (inputs, error) {
	var in inputs
	var others []*unstructured.Unstructured
	crdKinds := map[string]bool{} // "group/Kind" of every CRD in the input
	for _, u := range objs {
		switch u.GetKind() {
		case kindClusterServiceVersion:
			if in.csv != nil {
				return in, errors.New("more than one ClusterServiceVersion base")
			}
			in.csv = &v1alpha1.ClusterServiceVersion{}
			if err := fromUnstructured(u, in.csv); err != nil {
				return in, err
			}
		case kindCustomResourceDefinition:
			in.crds = append(in.crds, u)
			group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
			crdKinds[group+"/"+kind] = true
		case kindDeployment:
			var d appsv1.Deployment
			if err := fromUnstructured(u, &d); err != nil {
				return in, err
			}
			in.deployments = append(in.deployments, d)
		case kindConfiguration:
			in.scorecard = u
		case kindNamespace:
			// OLM installs into the namespace of the OperatorGroup.
		default:
			others = append(others, u)
		}
	}
	if in.csv == nil {
		return in, errors.New("no ClusterServiceVersion base in the input")
	}
	if len(in.deployments) == 0 {
		return in, errors.New("no Deployment in the input")
	}
	in.samples, in.rest = splitSamples(others, crdKinds)
	return in, nil
}

// splitSamples separates the custom resources of the bundle's own CRDs (crdKinds holds their
// "group/Kind") from the other objects, keeping the input order in both.
func splitSamples(objs []*unstructured.Unstructured, crdKinds map[string]bool) (samples, rest []*unstructured.Unstructured) {
	for _, u := range objs {
		if crdKinds[u.GroupVersionKind().Group+"/"+u.GetKind()] {
			samples = append(samples, u)
		} else {
			rest = append(rest, u)
		}
	}
	return samples, rest
}

// csvMetadata sets the CSV's name, version and upgrade edge, and returns its annotations with
// the createdAt, builder and project layout annotations set; the caller stores them back.
func csvMetadata(csv *v1alpha1.ClusterServiceVersion, o Options, ver semver.Version) (map[string]string, error) {
	csv.Name = fmt.Sprintf("%s.v%s", o.Package, ver)
	csv.Namespace = ""
	csv.Spec.Version = version.OperatorVersion{Version: ver}
	ann := csv.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	if err := upgradeEdge(csv, ann, o, ver); err != nil {
		return nil, err
	}
	if o.CreatedAt != "" {
		ann["createdAt"] = o.CreatedAt
	}
	ann["operators.operatorframework.io/builder"] = Builder
	ann["operators.operatorframework.io/project_layout"] = "go.kubebuilder.io/v4"
	return ann, nil
}

// upgradeEdge sets the CSV's replaces field and the olm.skipRange annotation in ann from
// o.PreviousVersion, or clears both when there is no previous version.
func upgradeEdge(csv *v1alpha1.ClusterServiceVersion, ann map[string]string, o Options, ver semver.Version) error {
	csv.Spec.Replaces = ""
	delete(ann, v1alpha1.SkipRangeAnnotationKey)
	if o.PreviousVersion == "" {
		return nil
	}
	prev, err := semver.Parse(o.PreviousVersion)
	if err != nil {
		return fmt.Errorf("previous version %q: %w", o.PreviousVersion, err)
	}
	if !prev.LT(ver) {
		return fmt.Errorf("previous version %s is not lower than %s", prev, ver)
	}
	csv.Spec.Replaces = fmt.Sprintf("%s.v%s", o.Package, prev)
	ann[v1alpha1.SkipRangeAnnotationKey] = "<" + ver.String()
	return nil
}

// bundleFiles renders the completed CSV, the CRDs, the bundled objects, the scorecard
// configuration and metadata/annotations.yaml, keyed by path relative to the bundle directory.
func bundleFiles(in inputs, bundled []*unstructured.Unstructured, o Options) (map[string][]byte, error) {
	files := map[string][]byte{}
	var err error
	if files[filepath.Join("manifests", o.Package+".clusterserviceversion.yaml")], err = marshal(in.csv, true); err != nil {
		return nil, err
	}
	for _, u := range in.crds {
		group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
		plural, _, _ := unstructured.NestedString(u.Object, "spec", "names", "plural")
		if files[filepath.Join("manifests", group+"_"+plural+".yaml")], err = marshal(u.Object, false); err != nil {
			return nil, err
		}
	}
	for _, u := range bundled {
		if files[filepath.Join("manifests", bundledFileName(u))], err = bundledObject(u); err != nil {
			return nil, err
		}
	}
	if in.scorecard != nil {
		if files[filepath.Join("tests", "scorecard", "config.yaml")], err = marshal(in.scorecard.Object, false); err != nil {
			return nil, err
		}
	}
	if files[filepath.Join("metadata", "annotations.yaml")], err = annotationsYAML(o); err != nil {
		return nil, err
	}
	return files, nil
}

// bundledFileName names the manifests/ file of a bundled object after its name, group, version
// and kind, in lower case.
func bundledFileName(u *unstructured.Unstructured) string {
	gvk := u.GroupVersionKind()
	gv := strings.ReplaceAll(strings.Trim(gvk.Group+"_"+gvk.Version, "_"), "/", "_")
	return strings.ToLower(fmt.Sprintf("%s_%s_%s.yaml", u.GetName(), gv, gvk.Kind))
}

// bundledObject checks that OLM supports u's kind, clears its namespace and renders it.
func bundledObject(u *unstructured.Unstructured) ([]byte, error) {
	if !supportedKinds[u.GetKind()] {
		return nil, fmt.Errorf("%s %s: kind not supported in an OLM bundle", u.GetKind(), u.GetName())
	}
	u.SetNamespace("") // OLM installs namespaced objects into the operator's namespace.
	return marshal(u.Object, false)
}

// installStrategy turns the Deployments and the RBAC bound to their ServiceAccounts into the CSV's
// deployment install strategy: Roles go to permissions; of the ClusterRoles, the rules on
// namespaced resources go to permissions too and only the rest to clusterPermissions (see
// scope.go). It returns the objects that stay separate bundle files: everything except those
// ServiceAccounts, the Roles and ClusterRoles bound to them, and those bindings.
func installStrategy(deployments []appsv1.Deployment, objs []*unstructured.Unstructured, image string, sc scopes) (v1alpha1.StrategyDetailsDeployment, []*unstructured.Unstructured, error) {
	var s v1alpha1.StrategyDetailsDeployment
	var serviceAccounts map[string]bool
	s.DeploymentSpecs, serviceAccounts = deploymentSpecs(deployments, image)
	roles, err := rolesByKey(objs)
	if err != nil {
		return s, nil, err
	}
	perms, err := permissionsFromBindings(objs, roles, serviceAccounts)
	if err != nil {
		return s, nil, err
	}
	// Cluster-wide grants of namespaced resources become namespaced: OLM scopes them to the
	// OperatorGroup's target namespaces (and makes them ClusterRoles for AllNamespaces).
	var cluster permissionSet
	for _, p := range perms.cluster.list() {
		namespaced, clusterWide, err := sc.splitByScope(p.Rules)
		if err != nil {
			return s, nil, err
		}
		if len(namespaced) > 0 {
			perms.namespaced.add(p.ServiceAccountName, namespaced)
		}
		if len(clusterWide) > 0 {
			cluster.add(p.ServiceAccountName, clusterWide)
		}
	}
	s.Permissions = perms.namespaced.list()
	s.ClusterPermissions = cluster.list()
	return s, remainingObjects(objs, perms.used, serviceAccounts), nil
}

// deploymentSpecs returns the install strategy's deployment specs and the names of the
// ServiceAccounts the Deployments run as ("default" when unset). It updates the Deployments in
// place: image, when set, replaces the first container's image of the first Deployment (and the
// value of its RELATED_IMAGE_* variables that named the same image: the storage agent runs from
// the operator's own image), and WATCH_NAMESPACE follows the OperatorGroup's target namespaces.
func deploymentSpecs(deployments []appsv1.Deployment, image string) ([]v1alpha1.StrategyDeploymentSpec, map[string]bool) {
	var specs []v1alpha1.StrategyDeploymentSpec
	serviceAccounts := map[string]bool{}
	for i := range deployments {
		d := &deployments[i]
		sa := d.Spec.Template.Spec.ServiceAccountName
		if sa == "" {
			sa = "default"
		}
		serviceAccounts[sa] = true
		for j := range d.Spec.Template.Spec.Containers {
			c := &d.Spec.Template.Spec.Containers[j]
			if i == 0 && j == 0 && image != "" {
				replaceImage(c, image)
			}
			olmTargetNamespaces(c)
		}
		specs = append(specs, v1alpha1.StrategyDeploymentSpec{
			Name: d.Name, Spec: d.Spec, Label: d.Labels,
		})
	}
	return specs, serviceAccounts
}

// rolesByKey returns the rules of every Role and ClusterRole in objs, keyed by "Kind/name".
func rolesByKey(objs []*unstructured.Unstructured) (map[string][]rbacv1.PolicyRule, error) {
	roles := map[string][]rbacv1.PolicyRule{}
	for _, u := range objs {
		if k := u.GetKind(); k == kindRole || k == kindClusterRole {
			var r rbacv1.ClusterRole // Role and ClusterRole share the rules field.
			if err := fromUnstructured(u, &r); err != nil {
				return nil, err
			}
			roles[k+"/"+u.GetName()] = r.Rules
		}
	}
	return roles, nil
}

// permissionSet collects the rules granted to each ServiceAccount, in the order the accounts
// are first seen.
type permissionSet struct {
	bySA  map[string]*v1alpha1.StrategyDeploymentPermissions
	order []string
}

// add appends rules to the permissions of the ServiceAccount sa.
func (ps *permissionSet) add(sa string, rules []rbacv1.PolicyRule) {
	if ps.bySA == nil {
		ps.bySA = map[string]*v1alpha1.StrategyDeploymentPermissions{}
	}
	p, ok := ps.bySA[sa]
	if !ok {
		p = &v1alpha1.StrategyDeploymentPermissions{ServiceAccountName: sa}
		ps.bySA[sa] = p
		ps.order = append(ps.order, sa)
	}
	p.Rules = append(p.Rules, rules...)
}

// list returns the permissions in the order their ServiceAccounts were first seen, or nil.
func (ps *permissionSet) list() []v1alpha1.StrategyDeploymentPermissions {
	var out []v1alpha1.StrategyDeploymentPermissions
	for _, sa := range ps.order {
		out = append(out, *ps.bySA[sa])
	}
	return out
}

// boundPermissions are the permissions that RoleBindings and ClusterRoleBindings grant to the
// Deployments' ServiceAccounts.
type boundPermissions struct {
	// namespaced come from RoleBindings, cluster from ClusterRoleBindings.
	namespaced, cluster permissionSet
	// used holds the "Kind/name" of the roles and bindings folded into the CSV.
	used map[string]bool
}

// permissionsFromBindings folds the RoleBindings and ClusterRoleBindings of objs that bind a
// known role (roles, keyed by "Kind/name") to one of serviceAccounts into permissions.
func permissionsFromBindings(objs []*unstructured.Unstructured, roles map[string][]rbacv1.PolicyRule, serviceAccounts map[string]bool) (boundPermissions, error) {
	bp := boundPermissions{used: map[string]bool{}}
	for _, u := range objs {
		kind := u.GetKind()
		if kind != kindRoleBinding && kind != kindClusterRoleBinding {
			continue
		}
		var b rbacv1.RoleBinding // RoleBinding and ClusterRoleBinding share subjects and roleRef.
		if err := fromUnstructured(u, &b); err != nil {
			return bp, err
		}
		roleKey := b.RoleRef.Kind + "/" + b.RoleRef.Name
		rules, ok := roles[roleKey]
		if !ok {
			continue
		}
		target := &bp.namespaced
		if kind == kindClusterRoleBinding {
			target = &bp.cluster
		}
		for _, sub := range b.Subjects {
			if sub.Kind != rbacv1.ServiceAccountKind || !serviceAccounts[sub.Name] {
				continue
			}
			target.add(sub.Name, rules)
			bp.used[roleKey] = true
			bp.used[kind+"/"+u.GetName()] = true
		}
	}
	return bp, nil
}

// remainingObjects returns the objects of objs that stay separate bundle files: all but those
// in used ("Kind/name") and the ServiceAccounts in serviceAccounts.
func remainingObjects(objs []*unstructured.Unstructured, used, serviceAccounts map[string]bool) []*unstructured.Unstructured {
	var rest []*unstructured.Unstructured
	for _, u := range objs {
		if used[u.GetKind()+"/"+u.GetName()] || (u.GetKind() == kindServiceAccount && serviceAccounts[u.GetName()]) {
			continue
		}
		rest = append(rest, u)
	}
	return rest
}

// replaceImage gives c the image, and every RELATED_IMAGE_* variable of c that named c's old
// image too.
func replaceImage(c *corev1.Container, image string) {
	for i := range c.Env {
		if strings.HasPrefix(c.Env[i].Name, "RELATED_IMAGE_") && c.Env[i].Value == c.Image {
			c.Env[i].Value = image
		}
	}
	c.Image = image
}

// olmTargetNamespaces makes WATCH_NAMESPACE follow the OperatorGroup's target namespaces, which
// OLM puts into the olm.targetNamespaces annotation of the operator's pods ("" = all namespaces).
func olmTargetNamespaces(c *corev1.Container) {
	for i := range c.Env {
		if c.Env[i].Name == "WATCH_NAMESPACE" {
			c.Env[i].Value = ""
			c.Env[i].ValueFrom = &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
				FieldPath: "metadata.annotations['olm.targetNamespaces']",
			}}
		}
	}
}

// relatedImages lists the first container's image (the operator) and every image named by an
// env var RELATED_IMAGE_* or ECHO_IMAGE, in Deployment order, without duplicates.
func relatedImages(deployments []appsv1.Deployment) []v1alpha1.RelatedImage {
	var out []v1alpha1.RelatedImage
	seen := map[string]bool{}
	add := func(name, image string) {
		if image == "" || seen[image] {
			return
		}
		seen[image] = true
		out = append(out, v1alpha1.RelatedImage{Name: name, Image: image})
	}
	for i, d := range deployments {
		for j, c := range d.Spec.Template.Spec.Containers {
			if i == 0 && j == 0 {
				add(d.Name, c.Image)
			}
			for _, e := range c.Env {
				switch {
				case strings.HasPrefix(e.Name, "RELATED_IMAGE_"):
					add(strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(e.Name, "RELATED_IMAGE_"), "_", "-")), e.Value)
				case e.Name == "ECHO_IMAGE":
					add("echo", e.Value)
				}
			}
		}
	}
	return out
}

// almExamples renders the samples as the JSON array of the alm-examples annotation.
func almExamples(samples []*unstructured.Unstructured) (string, error) {
	list := make([]map[string]any, 0, len(samples))
	for _, u := range samples {
		list = append(list, u.Object)
	}
	b, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return "", fmt.Errorf("rendering alm-examples: %w", err)
	}
	return string(b), nil
}

// annotationsYAML renders metadata/annotations.yaml.
func annotationsYAML(o Options) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("annotations:\n")
	for _, kv := range bundleAnnotations(o) {
		v, err := yaml.Marshal(kv[1])
		if err != nil {
			return nil, fmt.Errorf("rendering annotation %s: %w", kv[0], err)
		}
		fmt.Fprintf(&b, "  %s: %s", kv[0], v)
	}
	return b.Bytes(), nil
}

// bundleAnnotations are the bundle's metadata annotations, which are also the bundle image's
// labels, in a fixed order.
func bundleAnnotations(o Options) [][2]string {
	def := o.DefaultChannel
	if def == "" && len(o.Channels) > 0 {
		def = o.Channels[0]
	}
	return [][2]string{
		{"operators.operatorframework.io.bundle.mediatype.v1", "registry+v1"},
		{"operators.operatorframework.io.bundle.manifests.v1", "manifests/"},
		{"operators.operatorframework.io.bundle.metadata.v1", "metadata/"},
		{"operators.operatorframework.io.bundle.package.v1", o.Package},
		{"operators.operatorframework.io.bundle.channels.v1", strings.Join(o.Channels, ",")},
		{"operators.operatorframework.io.bundle.channel.default.v1", def},
		{"operators.operatorframework.io.metrics.builder", Builder},
		{"operators.operatorframework.io.metrics.mediatype.v1", "metrics+v1"},
		{"operators.operatorframework.io.metrics.project_layout", "go.kubebuilder.io/v4"},
		{"operators.operatorframework.io.test.mediatype.v1", "scorecard+v1"},
		{"operators.operatorframework.io.test.config.v1", "tests/scorecard/"},
	}
}

// dockerfile renders bundle.Dockerfile: the same labels as annotations.yaml, and COPY lines
// relative to the Dockerfile's directory.
func dockerfile(o Options) ([]byte, error) {
	rel, err := filepath.Rel(filepath.Dir(o.Dockerfile), o.OutputDir)
	if err != nil {
		return nil, fmt.Errorf("bundle directory relative to the Dockerfile: %w", err)
	}
	rel = filepath.ToSlash(rel)
	var b bytes.Buffer
	b.WriteString("# Generated by \"make bundle\" (hack/olm/cmd/bundle-gen). DO NOT EDIT.\n")
	b.WriteString("# Build from the repository root: docker build -f bundle.Dockerfile -t $BUNDLE_IMG .\n")
	b.WriteString("FROM scratch\n\n")
	for _, kv := range bundleAnnotations(o) {
		fmt.Fprintf(&b, "LABEL %s=%s\n", kv[0], kv[1])
	}
	fmt.Fprintf(&b, "\nCOPY %s/manifests /manifests/\n", rel)
	fmt.Fprintf(&b, "COPY %s/metadata /metadata/\n", rel)
	fmt.Fprintf(&b, "COPY %s/tests/scorecard /tests/scorecard/\n", rel)
	return b.Bytes(), nil
}

// fromUnstructured converts u into the typed object out.
func fromUnstructured(u *unstructured.Unstructured, out any) error {
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		return fmt.Errorf("reading %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return nil
}

// marshal renders obj as YAML without the empty fields that typed Go objects carry
// (creationTimestamp: null) and, for the CSV, without its status.
func marshal(obj any, dropStatus bool) ([]byte, error) {
	j, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encoding: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	if dropStatus {
		delete(m, "status")
	}
	prune(m)
	out, err := yaml.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("rendering YAML: %w", err)
	}
	return out, nil
}

// prune removes "creationTimestamp: null" everywhere in v.
func prune(v any) {
	switch t := v.(type) {
	case map[string]any:
		if ts, ok := t["creationTimestamp"]; ok && ts == nil {
			delete(t, "creationTimestamp")
		}
		for _, x := range t {
			prune(x)
		}
	case []any:
		for _, x := range t {
			prune(x)
		}
	}
}
