// Package helm tests the Helm chart charts/database-operator with the Helm Go library: it renders
// the chart with the default and the HA values (ci/ha-values.yaml), lints it, checks that the
// CRDs and the manager's ClusterRole rules match config/, and installs the rendered objects on
// the local control plane (install_test.go).
package helm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint/support"
	helmrelease "helm.sh/helm/v3/pkg/release"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

const (
	repoRoot  = "../.."
	chartDir  = repoRoot + "/charts/database-operator"
	haValues  = chartDir + "/ci/ha-values.yaml"
	kubeVer   = "v1.37.1"
	defaultNS = "database-operator-system"
)

// rendering is a rendered release: its objects in Helm's install order (CRDs first) and notes.
type rendering struct {
	objects []*unstructured.Unstructured
	notes   string
}

// render renders the chart as "helm install --dry-run=client --include-crds" would.
func render(t *testing.T, release, namespace string, values map[string]any) rendering {
	t.Helper()
	rel, err := renderRelease(release, namespace, values)
	if err != nil {
		t.Fatalf("rendering the chart: %v", err)
	}
	objs, err := decode(rel.Manifest)
	if err != nil {
		t.Fatalf("decoding the rendered manifest: %v", err)
	}
	if len(rel.Hooks) != 0 {
		t.Fatalf("the chart has %d hooks; it should have none", len(rel.Hooks))
	}
	return rendering{objects: objs, notes: rel.Info.Notes}
}

func renderRelease(release, namespace string, values map[string]any) (*helmrelease.Release, error) {
	ch, err := loader.Load(chartDir)
	if err != nil {
		return nil, fmt.Errorf("loading the chart: %w", err)
	}
	kv, err := chartutil.ParseKubeVersion(kubeVer)
	if err != nil {
		return nil, err
	}
	install := action.NewInstall(&action.Configuration{Log: func(string, ...any) {}})
	install.ReleaseName = release
	install.Namespace = namespace
	install.DryRun = true
	install.ClientOnly = true
	install.IncludeCRDs = true
	install.Replace = true
	install.KubeVersion = kv
	return install.Run(ch, values)
}

// decode splits a multi-document manifest into objects, dropping empty documents.
func decode(manifest string) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifest), 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return objs, nil
		} else if err != nil {
			return nil, err
		}
		if len(m) == 0 {
			continue
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
}

func readValues(t *testing.T, path string) map[string]any {
	t.Helper()
	v, err := chartutil.ReadValuesFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return v.AsMap()
}

// keys lists the objects as "Kind namespace/name" (cluster-scoped: "Kind name").
func keys(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, key(o))
	}
	return out
}

func key(o *unstructured.Unstructured) string {
	if o.GetNamespace() == "" {
		return o.GetKind() + " " + o.GetName()
	}
	return o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
}

// expectedObjects is the object list of a release named "database-operator" in defaultNS.
func expectedObjects(pdb, serviceMonitor bool) []string {
	ns := defaultNS + "/"
	want := []string{
		"CustomResourceDefinition databasebackups.database.seed1b407122.io",
		"CustomResourceDefinition databaseclusters.database.seed1b407122.io",
		"CustomResourceDefinition scheduleddatabasebackups.database.seed1b407122.io",
		"CustomResourceDefinition echoes.echo.seed1b407122.io",
		"CustomResourceDefinition scheduledechoes.echo.seed1b407122.io",
		"CustomResourceDefinition voteconfigs.voting.seed1b407122.io",
		"ServiceAccount " + ns + "database-operator",
		"ClusterRole database-operator-manager",
		"ClusterRole database-operator-metrics-auth",
		"ClusterRole database-operator-metrics-reader",
		"ClusterRoleBinding database-operator-manager",
		"ClusterRoleBinding database-operator-metrics-auth",
		"Role " + ns + "database-operator-leader-election",
		"RoleBinding " + ns + "database-operator-leader-election",
		"Service " + ns + "database-operator-metrics",
		"Deployment " + ns + "database-operator",
	}
	if pdb {
		want = append(want, "PodDisruptionBudget "+ns+"database-operator")
	}
	if serviceMonitor {
		want = append(want, "ServiceMonitor "+ns+"database-operator")
	}
	return want
}

func assertObjects(t *testing.T, r rendering, want []string) {
	t.Helper()
	got := keys(r.objects)
	t.Logf("rendered %d objects:\n  %s", len(got), strings.Join(got, "\n  "))
	g, w := slices.Clone(got), slices.Clone(want)
	sort.Strings(g)
	sort.Strings(w)
	if !slices.Equal(g, w) {
		t.Errorf("rendered objects differ:\n got: %q\nwant: %q", g, w)
	}
	if n := len(r.objects); n < 4 || !allCRDs(r.objects[:4]) {
		t.Errorf("the CRDs should come first (Helm installs crds/ before the templates)")
	}
}

func allCRDs(objs []*unstructured.Unstructured) bool {
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" {
			return false
		}
	}
	return true
}

func find(t *testing.T, objs []*unstructured.Unstructured, kind string, into any) bool {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind {
			if into != nil {
				if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, into, true); err != nil {
					t.Fatalf("converting %s: %v", key(o), err)
				}
			}
			return true
		}
	}
	return false
}

func deployment(t *testing.T, r rendering) *appsv1.Deployment {
	t.Helper()
	var d appsv1.Deployment
	if !find(t, r.objects, "Deployment", &d) {
		t.Fatal("no Deployment rendered")
	}
	return &d
}

func managerContainer(t *testing.T, d *appsv1.Deployment) corev1.Container {
	t.Helper()
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == "manager" {
			return c
		}
	}
	t.Fatal("the Deployment has no container named manager")
	return corev1.Container{}
}

func assertArgs(t *testing.T, args []string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(args, w) {
			t.Errorf("manager args %q lack %q", args, w)
		}
	}
}

// assertRestricted checks the pod against the "restricted" Pod Security Standard (the install
// test also has the API server enforce it).
func assertRestricted(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	psc := d.Spec.Template.Spec.SecurityContext
	if psc == nil || !ptr.Deref(psc.RunAsNonRoot, false) {
		t.Errorf("pod securityContext.runAsNonRoot should be true: %+v", psc)
	}
	if psc == nil || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod securityContext.seccompProfile should be RuntimeDefault: %+v", psc)
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if problem := restrictedProblem(c.SecurityContext); problem != "" {
			t.Errorf("container %s: %s", c.Name, problem)
		}
	}
}

// restrictedProblem is what keeps a container's security context from the restricted
// profile (plus a read-only root filesystem), or "".
func restrictedProblem(sc *corev1.SecurityContext) string {
	switch {
	case sc == nil:
		return "no securityContext"
	case ptr.Deref(sc.AllowPrivilegeEscalation, true):
		return "allowPrivilegeEscalation should be false"
	case sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0:
		return fmt.Sprintf("capabilities should drop ALL and add none: %+v", sc.Capabilities)
	case ptr.Deref(sc.Privileged, false):
		return "privileged"
	case !ptr.Deref(sc.ReadOnlyRootFilesystem, false):
		return "readOnlyRootFilesystem should be true"
	}
	return ""
}

// kustomizeEchoImage is the ECHO_IMAGE of config/manager/manager.yaml (make deploy, and so the
// bundle): the Echo image built from hack/echo, by digest (make echo-image-pin).
func kustomizeEchoImage(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "config", "manager", "manager.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var d appsv1.Deployment
		if err := yaml.Unmarshal([]byte(doc), &d); err != nil || d.Kind != "Deployment" {
			continue
		}
		img := envOf(d.Spec.Template.Spec.Containers[0])["ECHO_IMAGE"]
		if !strings.HasPrefix(img, "quay.io/seed1b407122/database-operator-echo@sha256:") {
			t.Fatalf("config/manager/manager.yaml's ECHO_IMAGE = %q, want the project's Echo image by digest", img)
		}
		return img
	}
	t.Fatal("config/manager/manager.yaml has no Deployment")
	return ""
}

func envOf(c corev1.Container) map[string]string {
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	return env
}

func TestRenderDefaults(t *testing.T) {
	r := render(t, "database-operator", defaultNS, nil)
	assertObjects(t, r, expectedObjects(true, false))

	d := deployment(t, r)
	if got := *d.Spec.Replicas; got != 2 {
		t.Errorf("replicas = %d, want 2", got)
	}
	c := managerContainer(t, d)
	if c.Image != "database-operator:0.4.0" {
		t.Errorf("image = %q, want database-operator:0.4.0 (appVersion)", c.Image)
	}
	assertArgs(t, c.Args,
		"--leader-elect=true",
		"--leader-election-id=database-operator.seed1b407122.io",
		"--leader-election-namespace="+defaultNS,
		"--leader-election-lease-duration=15s",
		"--leader-election-renew-deadline=10s",
		"--leader-election-retry-period=2s",
		"--leader-election-release-on-cancel=true",
		"--metrics-bind-address=:8443",
		"--metrics-secure=true",
		"--health-probe-bind-address=:8081",
	)
	assertDefaultContainer(t, c)
	assertRestricted(t, d)
	aff := d.Spec.Template.Spec.Affinity
	if aff == nil || aff.PodAntiAffinity == nil || len(aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 ||
		aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.TopologyKey != corev1.LabelHostname {
		t.Errorf("default affinity should be preferred anti-affinity across hostnames: %+v", aff)
	}
	if d.Spec.Template.Spec.ServiceAccountName != "database-operator" {
		t.Errorf("serviceAccountName = %q", d.Spec.Template.Spec.ServiceAccountName)
	}
	t.Logf("NOTES.txt:\n%s", r.notes)
	if !strings.Contains(r.notes, "leader election on Lease "+defaultNS+"/database-operator.seed1b407122.io") {
		t.Errorf("NOTES.txt should name the Lease:\n%s", r.notes)
	}
}

// assertDefaultContainer checks the env, probes and resources of the manager with the default
// values.
func assertDefaultContainer(t *testing.T, c corev1.Container) {
	t.Helper()
	env := envOf(c)
	if v, ok := env["WATCH_NAMESPACE"]; !ok || v != "" {
		t.Errorf("WATCH_NAMESPACE = %q (set: %v), want empty (all namespaces)", v, ok)
	}
	if want := kustomizeEchoImage(t); env["ECHO_IMAGE"] != want {
		t.Errorf("ECHO_IMAGE = %q, want the Echo image of config/manager/manager.yaml, %q", env["ECHO_IMAGE"], want)
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("liveness probe should GET /healthz: %+v", c.LivenessProbe)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("readiness probe should GET /readyz: %+v", c.ReadinessProbe)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources should have requests and limits: %+v", c.Resources)
	}
}

func TestRenderHA(t *testing.T) {
	r := render(t, "database-operator", defaultNS, readValues(t, haValues))
	assertObjects(t, r, expectedObjects(true, true))

	d := deployment(t, r)
	if got := *d.Spec.Replicas; got != 3 {
		t.Errorf("replicas = %d, want 3", got)
	}
	assertArgs(t, managerContainer(t, d).Args,
		"--leader-elect=true",
		"--leader-election-lease-duration=30s",
		"--leader-election-renew-deadline=20s",
		"--leader-election-retry-period=5s",
		"--leader-election-release-on-cancel=true",
	)
	assertRestricted(t, d)
	if got := d.Spec.Template.Spec.PriorityClassName; got != "system-cluster-critical" {
		t.Errorf("priorityClassName = %q", got)
	}
	var sm unstructured.Unstructured
	if !find(t, r.objects, "ServiceMonitor", nil) {
		t.Fatal("no ServiceMonitor")
	}
	for _, o := range r.objects {
		if o.GetKind() == "ServiceMonitor" {
			sm = *o
		}
	}
	if sm.GetLabels()["release"] != "prometheus" {
		t.Errorf("ServiceMonitor labels lack release=prometheus: %v", sm.GetLabels())
	}
	eps, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	if len(eps) != 1 || eps[0].(map[string]any)["port"] != "https" || eps[0].(map[string]any)["interval"] != "30s" {
		t.Errorf("ServiceMonitor endpoints = %v", eps)
	}
}

func TestRenderVariants(t *testing.T) {
	t.Run("single replica: no PodDisruptionBudget", func(t *testing.T) {
		r := render(t, "database-operator", defaultNS, map[string]any{"replicaCount": 1})
		assertObjects(t, r, expectedObjects(false, false))
	})
	t.Run("serviceMonitor only when enabled", func(t *testing.T) {
		on := render(t, "database-operator", defaultNS, map[string]any{
			"metrics": map[string]any{"serviceMonitor": map[string]any{"enabled": true}}})
		assertObjects(t, on, expectedObjects(true, true))
	})
	t.Run("no metrics service, no leader election with one replica", func(t *testing.T) {
		r := render(t, "database-operator", defaultNS, map[string]any{
			"replicaCount":   1,
			"leaderElection": map[string]any{"enabled": false},
			"metrics":        map[string]any{"service": map[string]any{"enabled": false}},
		})
		want := slices.DeleteFunc(expectedObjects(false, false), func(s string) bool { return strings.HasPrefix(s, "Service ") })
		assertObjects(t, r, want)
		args := managerContainer(t, deployment(t, r)).Args
		assertArgs(t, args, "--leader-elect=false")
		for _, a := range args {
			if strings.HasPrefix(a, "--leader-election-") {
				t.Errorf("leader election is off, yet %q is set", a)
			}
		}
	})
	t.Run("watchNamespaces, echoImage, extraArgs, placement", testCustomValues)
	t.Run("several replicas without leader election are refused", func(t *testing.T) {
		_, err := renderRelease("x", "x", map[string]any{"replicaCount": 2, "leaderElection": map[string]any{"enabled": false}})
		if err == nil || !strings.Contains(err.Error(), "leaderElection.enabled") {
			t.Errorf("want a refusal naming leaderElection.enabled, got %v", err)
		}
	})
}

// testCustomValues renders a release "ops" with every placement and manager knob set.
func testCustomValues(t *testing.T) {
	r := render(t, "ops", "operators", map[string]any{
		"watchNamespaces":   []any{"team-a", "team-b"},
		"echoImage":         "registry.example/busybox:1",
		"extraArgs":         []any{"--zap-log-level=debug"},
		"controllers":       []any{"databasecluster", "voteconfig"},
		"image":             map[string]any{"repository": "registry.example/dbo", "tag": "1.2.3", "pullPolicy": "Always"},
		"nodeSelector":      map[string]any{"kubernetes.io/os": "linux"},
		"tolerations":       []any{map[string]any{"key": "dedicated", "operator": "Exists"}},
		"affinity":          map[string]any{"nodeAffinity": map[string]any{}},
		"priorityClassName": "high",
	})
	d := deployment(t, r)
	if d.Name != "ops-database-operator" || d.Namespace != "operators" {
		t.Errorf("Deployment is %s/%s", d.Namespace, d.Name)
	}
	c := managerContainer(t, d)
	assertArgs(t, c.Args, "--zap-log-level=debug", "--controllers=databasecluster,voteconfig", "--leader-election-namespace=operators")
	if c.Image != "registry.example/dbo:1.2.3" || c.ImagePullPolicy != corev1.PullAlways {
		t.Errorf("image %q pull %q", c.Image, c.ImagePullPolicy)
	}
	env := envOf(c)
	if env["WATCH_NAMESPACE"] != "team-a,team-b" || env["ECHO_IMAGE"] != "registry.example/busybox:1" {
		t.Errorf("env = %v", env)
	}
	spec := d.Spec.Template.Spec
	if spec.NodeSelector["kubernetes.io/os"] != "linux" || len(spec.Tolerations) != 1 || spec.PriorityClassName != "high" {
		t.Errorf("placement not applied: %+v %+v %q", spec.NodeSelector, spec.Tolerations, spec.PriorityClassName)
	}
	if spec.Affinity == nil || spec.Affinity.PodAntiAffinity != nil || spec.Affinity.NodeAffinity == nil {
		t.Errorf("affinity should replace the default anti-affinity: %+v", spec.Affinity)
	}
}

// rbacObjects are the RBAC objects of a rendering; Roles and RoleBindings keyed by
// "namespace/name".
type rbacObjects struct {
	clusterRoles map[string]rbacv1.ClusterRole
	bindings     []rbacv1.ClusterRoleBinding
	roles        map[string]rbacv1.Role
	roleBindings map[string]rbacv1.RoleBinding
}

func rbacOf(t *testing.T, r rendering) rbacObjects {
	t.Helper()
	out := rbacObjects{clusterRoles: map[string]rbacv1.ClusterRole{}, roles: map[string]rbacv1.Role{},
		roleBindings: map[string]rbacv1.RoleBinding{}}
	for _, o := range r.objects {
		switch o.GetKind() {
		case "ClusterRole":
			var cr rbacv1.ClusterRole
			mustConvert(t, o, &cr)
			out.clusterRoles[cr.Name] = cr
		case "ClusterRoleBinding":
			var b rbacv1.ClusterRoleBinding
			mustConvert(t, o, &b)
			out.bindings = append(out.bindings, b)
		case "Role":
			var role rbacv1.Role
			mustConvert(t, o, &role)
			out.roles[role.Namespace+"/"+role.Name] = role
		case "RoleBinding":
			var b rbacv1.RoleBinding
			mustConvert(t, o, &b)
			out.roleBindings[b.Namespace+"/"+b.Name] = b
		}
	}
	return out
}

// leaderElectionRules are the rules of the leader election Role in the release namespace.
var leaderElectionRules = []rbacv1.PolicyRule{
	rule([]string{"coordination.k8s.io"}, []string{"leases"}, []string{"get", "list", "watch", "create", "update", "patch", "delete"}),
	rule([]string{"", "events.k8s.io"}, []string{"events"}, []string{"create", "patch"}),
}

// metricsClusterRoles are the chart's ClusterRoles besides the manager's: metrics authn/authz
// (cluster-scoped reviews) and /metrics for scrapers.
func metricsClusterRoles(fullname string) map[string][]rbacv1.PolicyRule {
	return map[string][]rbacv1.PolicyRule{
		fullname + "-metrics-auth": {
			rule([]string{"authentication.k8s.io"}, []string{"tokenreviews"}, []string{"create"}),
			rule([]string{"authorization.k8s.io"}, []string{"subjectaccessreviews"}, []string{"create"}),
		},
		fullname + "-metrics-reader": {{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}
}

// clusterRoleRules are the rules of every ClusterRole, by name.
func (rb rbacObjects) clusterRoleRules() map[string][]rbacv1.PolicyRule {
	out := map[string][]rbacv1.PolicyRule{}
	for name, cr := range rb.clusterRoles {
		out[name] = cr.Rules
	}
	return out
}

// generatedRules are the rules controller-gen wrote to config/rbac/role.yaml.
func generatedRules(t *testing.T) []rbacv1.PolicyRule {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "config/rbac/role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var generated rbacv1.ClusterRole
	if err := yaml.Unmarshal(data, &generated); err != nil {
		t.Fatalf("parsing config/rbac/role.yaml: %v", err)
	}
	if len(generated.Rules) == 0 {
		t.Fatal("config/rbac/role.yaml has no rules")
	}
	return generated.Rules
}

// clusterScopedResources are the cluster-scoped resources the manager's rules name. TestInstall's
// namespaced mode checks this list against the API server's discovery (rulesInScope), so a
// new cluster-scoped resource in the markers fails there, not only in a manager's log.
var clusterScopedResources = []string{"nodes", "persistentvolumes", "storageclasses", "volumesnapshotclasses", "volumesnapshotcontents"}

// splitByScope splits rules into those on namespaced resources and those on the cluster-scoped
// ones, as the chart's namespaced mode does.
func splitByScope(rules []rbacv1.PolicyRule) (namespaced, clusterScoped []rbacv1.PolicyRule) {
	for _, r := range rules {
		var n, c []string
		for _, res := range r.Resources {
			if slices.Contains(clusterScopedResources, res) {
				c = append(c, res)
			} else {
				n = append(n, res)
			}
		}
		if len(n) > 0 {
			nr := *r.DeepCopy()
			nr.Resources = n
			namespaced = append(namespaced, nr)
		}
		if len(c) > 0 {
			cr := *r.DeepCopy()
			cr.Resources = c
			clusterScoped = append(clusterScoped, cr)
		}
	}
	return namespaced, clusterScoped
}

func rule(groups, resources, verbs []string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: groups, Resources: resources, Verbs: verbs}
}

// TestManagerRBAC checks that the chart's manager ClusterRole has exactly the rules of
// config/rbac/role.yaml (generated from the code's markers), that the other roles are the
// least the manager needs (leader election and events in the release namespace, metrics
// authn/authz, /metrics for scrapers), and that every binding names the ServiceAccount.
func TestManagerRBAC(t *testing.T) {
	rb := rbacOf(t, render(t, "database-operator", defaultNS, nil))
	want := metricsClusterRoles("database-operator")
	want["database-operator-manager"] = generatedRules(t)
	if got := rb.clusterRoleRules(); !reflect.DeepEqual(got, want) {
		t.Errorf("ClusterRoles differ (manager: run \"make helm-crds\")\n got: %v\nwant: %v", got, want)
	}
	sa := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "database-operator", Namespace: defaultNS}
	for _, b := range rb.bindings {
		if !slices.Equal(b.Subjects, []rbacv1.Subject{sa}) || b.RoleRef.Kind != "ClusterRole" || b.RoleRef.Name != b.Name {
			t.Errorf("ClusterRoleBinding %s binds %+v to %+v", b.Name, b.RoleRef, b.Subjects)
		}
	}
	if len(rb.bindings) != 2 {
		t.Errorf("%d ClusterRoleBindings, want 2 (manager, metrics-auth)", len(rb.bindings))
	}
	leKey := defaultNS + "/database-operator-leader-election"
	if got := slices.Sorted(maps.Keys(rb.roles)); !slices.Equal(got, []string{leKey}) {
		t.Errorf("Roles %v, want only %s", got, leKey)
	}
	if got := rb.roles[leKey].Rules; !reflect.DeepEqual(got, leaderElectionRules) {
		t.Errorf("leader election Role %s rules %v, want %v", leKey, got, leaderElectionRules)
	}
	if b := rb.roleBindings[leKey]; b.RoleRef.Name != "database-operator-leader-election" || !slices.Equal(b.Subjects, []rbacv1.Subject{sa}) {
		t.Errorf("leader election RoleBinding = %+v", b)
	}
}

// TestManagerRBACNamespaced checks the namespaced mode: when watchNamespaces lists namespaces,
// the manager's rules (config/rbac/role.yaml) come as a Role and RoleBinding in each of them
// (listed twice, one of each), and no ClusterRole grants the manager anything on namespaced
// resources: the only ClusterRoles left are the metrics ones (TokenReview and
// SubjectAccessReview are cluster-scoped; /metrics is a non-resource URL).
func TestManagerRBACNamespaced(t *testing.T) {
	r := render(t, "ops", "operators", map[string]any{"watchNamespaces": []any{"team-a", "team-b", "team-a"}})
	rb := rbacOf(t, r)
	namespaced, clusterScoped := splitByScope(generatedRules(t))
	wantCluster := metricsClusterRoles("ops-database-operator")
	wantCluster["ops-database-operator-manager-cluster"] = clusterScoped
	if got := rb.clusterRoleRules(); !reflect.DeepEqual(got, wantCluster) {
		t.Errorf("ClusterRoles\n got: %v\nwant: %v", got, wantCluster)
	}
	for _, r := range clusterScoped {
		// Read-only, except the Retain copies of VolumeSnapshotContents a cross-namespace
		// restore creates and deletes (no list or watch: only its own copies, by name).
		copies := slices.Equal(r.Resources, []string{"volumesnapshotcontents"}) && slices.Equal(r.Verbs, []string{"create", "delete", "get"})
		if !copies && !slices.Equal(r.Verbs, []string{"get"}) && !slices.Equal(r.Verbs, []string{"get", "list"}) {
			t.Errorf("cluster-scoped rule %v: want read-only (get, list)", r)
		}
	}
	sa := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "ops-database-operator", Namespace: "operators"}
	var bindings []string
	for _, b := range rb.bindings {
		bindings = append(bindings, b.RoleRef.Kind+" "+b.RoleRef.Name)
	}
	if want := []string{"ClusterRole ops-database-operator-manager-cluster", "ClusterRole ops-database-operator-metrics-auth"}; !slices.Equal(slices.Sorted(slices.Values(bindings)), want) {
		t.Errorf("ClusterRoleBindings bind %v, want %v", bindings, want)
	}
	wantRoles := map[string][]rbacv1.PolicyRule{
		"operators/ops-database-operator-leader-election": leaderElectionRules,
		"team-a/ops-database-operator-manager":            namespaced,
		"team-b/ops-database-operator-manager":            namespaced,
	}
	gotRoles := map[string][]rbacv1.PolicyRule{}
	for k, role := range rb.roles {
		gotRoles[k] = role.Rules
	}
	if !reflect.DeepEqual(gotRoles, wantRoles) {
		t.Errorf("Roles\n got: %v\nwant: %v", gotRoles, wantRoles)
	}
	if got, want := slices.Sorted(maps.Keys(rb.roleBindings)), slices.Sorted(maps.Keys(wantRoles)); !slices.Equal(got, want) {
		t.Errorf("RoleBindings %v, want %v", got, want)
	}
	for k, b := range rb.roleBindings {
		_, name, _ := strings.Cut(k, "/")
		if b.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}) || !slices.Equal(b.Subjects, []rbacv1.Subject{sa}) {
			t.Errorf("RoleBinding %s binds %+v to %+v", k, b.RoleRef, b.Subjects)
		}
	}
	if env := envOf(managerContainer(t, deployment(t, r))); env["WATCH_NAMESPACE"] != "team-a,team-b,team-a" {
		t.Errorf("WATCH_NAMESPACE = %q", env["WATCH_NAMESPACE"])
	}
	if _, err := renderRelease("x", "x", map[string]any{"watchNamespaces": []any{"team-a", ""}}); err == nil ||
		!strings.Contains(err.Error(), "watchNamespaces: empty namespace name") {
		t.Errorf("an empty namespace in watchNamespaces: want a refusal, got %v", err)
	}
}

func mustConvert(t *testing.T, o *unstructured.Unstructured, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, into, true); err != nil {
		t.Fatalf("converting %s: %v", key(o), err)
	}
}

// TestChartInSyncWithConfig fails when "make manifests" changed the CRDs or the manager's
// rules but "make helm-crds" was not run.
func TestChartInSyncWithConfig(t *testing.T) {
	pairs := map[string]string{
		filepath.Join(repoRoot, "config/rbac/role.yaml"): filepath.Join(chartDir, "files/manager-role.yaml"),
	}
	sources, err := filepath.Glob(filepath.Join(repoRoot, "config/crd/bases/*.yaml"))
	if err != nil || len(sources) == 0 {
		t.Fatalf("no CRDs in config/crd/bases (%v)", err)
	}
	for _, src := range sources {
		pairs[src] = filepath.Join(chartDir, "crds", filepath.Base(src))
	}
	copies, _ := filepath.Glob(filepath.Join(chartDir, "crds/*"))
	if len(copies) != len(sources) {
		t.Errorf("charts/database-operator/crds has %d files, config/crd/bases %d; run \"make helm-crds\"", len(copies), len(sources))
	}
	for src, dst := range pairs {
		a, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(dst)
		if err != nil {
			t.Errorf("%v; run \"make helm-crds\"", err)
			continue
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs from %s; run \"make helm-crds\"", dst, src)
		}
	}
}

// TestLint runs "helm lint --strict" with the default and the HA values: no message at all,
// not even INFO.
func TestLint(t *testing.T) {
	for name, vals := range map[string]map[string]any{
		"default": {},
		"HA":      readValues(t, haValues),
	} {
		t.Run(name, func(t *testing.T) {
			lint := action.NewLint()
			lint.Strict = true
			lint.Namespace = defaultNS
			kv, _ := chartutil.ParseKubeVersion(kubeVer)
			lint.KubeVersion = kv
			res := lint.Run([]string{chartDir}, vals)
			for _, m := range res.Messages {
				t.Logf("lint: %s", m)
			}
			if res.TotalChartsLinted != 1 {
				t.Errorf("linted %d charts", res.TotalChartsLinted)
			}
			for _, err := range res.Errors {
				t.Errorf("lint error: %v", err)
			}
			for _, m := range res.Messages {
				if m.Severity > support.UnknownSev {
					t.Errorf("lint message: %s", m)
				}
			}
		})
	}
}
