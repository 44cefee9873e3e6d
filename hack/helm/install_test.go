package helm

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed1b407122/database-operator/test/harness/controlplane"
)

const fieldOwner = "helm-test"

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestInstall applies every object the chart renders (default values, and the HA values as a
// second release) to a local control plane with server-side apply, CRDs first, in namespaces
// that enforce the "restricted" Pod Security Standard, and waits until every replica of each
// Deployment is available on kwok's simulated nodes.
func TestInstall(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("KUBEBUILDER_ASSETS is unset: no local control plane binaries; run through \"make helm-test\" (or set it to the directory of \"make test-env\")")
	}
	ctx := t.Context()
	began := time.Now()
	cluster, err := controlplane.Start(ctx, controlplane.Options{Nodes: 3, Log: testLog{t}})
	if err != nil {
		t.Fatalf("starting the local control plane: %v", err)
	}
	t.Cleanup(func() {
		if err := cluster.Stop(); err != nil {
			t.Errorf("stopping the local control plane: %v", err)
		}
	})
	t.Logf("local control plane up in %s", time.Since(began).Round(time.Millisecond))
	c := cluster.Client()

	var releaseObjects []*unstructured.Unstructured
	releases := []struct {
		name, namespace string
		values          map[string]any
		replicas        int32
	}{
		{"database-operator", defaultNS, nil, 2},
		{"ha", "database-operator-ha", readValues(t, haValues), 3},
		// Namespaced mode: the manager's rules as a Role in the one watched namespace.
		{"scoped", scopedNS, map[string]any{"watchNamespaces": []any{scopedWatch}}, 2},
	}
	var scopedObjects []*unstructured.Unstructured
	for _, rel := range releases {
		t.Run(rel.name, func(t *testing.T) {
			r := render(t, rel.name, rel.namespace, rel.values)
			t.Logf("release %s in %s renders:\n  %s", rel.name, rel.namespace, strings.Join(keys(r.objects), "\n  "))
			began := time.Now()
			createNamespace(ctx, t, c, rel.namespace)
			if rel.name == "scoped" {
				// The Roles of the namespaced mode go into the watched namespace: it must exist.
				if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: scopedWatch}}); err != nil {
					t.Fatal(err)
				}
				scopedObjects = r.objects
			}
			apply(ctx, t, c, r.objects)
			d := deploymentOf(t, r.objects)
			if *d.Spec.Replicas != rel.replicas {
				t.Fatalf("the Deployment has %d replicas, want %d", *d.Spec.Replicas, rel.replicas)
			}
			waitAvailable(ctx, t, c, d)
			t.Logf("release %s: %d objects applied, %d/%d replicas available in %s", rel.name, len(r.objects),
				rel.replicas, rel.replicas, time.Since(began).Round(time.Millisecond))
			logPlacement(ctx, t, c, d)
			checkNotesExample(ctx, t, c, r.notes)
			if rel.name == "database-operator" {
				releaseObjects = r.objects
			}
		})
	}
	// kwok's pods run no container: run the manager itself as the chart's ServiceAccount.
	t.Run("manager as the chart's ServiceAccount", func(t *testing.T) {
		if releaseObjects == nil {
			t.Skip("the default release was not installed")
		}
		runManager(ctx, t, cluster, deploymentOf(t, releaseObjects))
	})
	// Namespaced mode: the manager works in its watched namespace with Roles only, and the API
	// server refuses its writes anywhere else.
	t.Run("manager as the chart's ServiceAccount, namespaced mode", func(t *testing.T) {
		if scopedObjects == nil {
			t.Skip("the namespaced release was not installed")
		}
		d := deploymentOf(t, scopedObjects)
		runManager(ctx, t, cluster, d)
		sa := d.Spec.Template.Spec.ServiceAccountName
		expectCanCreateStatefulSets(ctx, t, c, scopedNS, sa, scopedWatch, true)
		for _, ns := range []string{"samples", "default", scopedNS} {
			expectCanCreateStatefulSets(ctx, t, c, scopedNS, sa, ns, false)
		}
		expectRulesGranted(ctx, t, c, scopedNS, sa, scopedWatch)
	})
}

// expectRulesGranted asks the API server, for every verb on every resource of the manager's
// rules (config/rbac/role.yaml), whether the namespaced release's ServiceAccount may do it:
// in watchNS for a namespaced resource, cluster-wide for a cluster-scoped one, each resource's
// scope taken from discovery. A manager that reads a cluster-scoped resource only now and then
// (a lost member's node) would otherwise show its missing grant only as a "forbidden" in a log
// some runs. It also checks the test's own list of cluster-scoped resources against discovery.
func expectRulesGranted(ctx context.Context, t *testing.T, c client.Client, saNamespace, sa, watchNS string) {
	t.Helper()
	for _, r := range generatedRules(t) {
		for _, group := range r.APIGroups {
			for _, res := range r.Resources {
				name, sub, _ := strings.Cut(res, "/")
				what := strings.TrimSuffix(res+"."+group, ".")
				namespaced, served := isNamespaced(t, c, group, name)
				if !served {
					t.Logf("%s: not served by this cluster, not checked", what)
					continue
				}
				if namespaced == slices.Contains(clusterScopedResources, name) {
					t.Errorf("%s: namespaced=%v by discovery, but the test's clusterScopedResources says otherwise", what, namespaced)
				}
				ns := ""
				if namespaced {
					ns = watchNS
				}
				for _, verb := range r.Verbs {
					attrs := authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: group, Resource: name, Subresource: sub}
					if !accessAllowed(ctx, t, c, saNamespace, sa, attrs) {
						t.Errorf("%s %s in %q: refused to %s/%s; the chart's namespaced mode misses a rule", verb, what, ns, saNamespace, sa)
					}
				}
			}
		}
	}
}

// isNamespaced reports, from discovery, whether group/resource is namespaced, and whether the
// cluster serves it at all.
func isNamespaced(t *testing.T, c client.Client, group, resource string) (namespaced, served bool) {
	t.Helper()
	gvk, err := c.RESTMapper().KindFor(schema.GroupVersionResource{Group: group, Resource: resource})
	if meta.IsNoMatchError(err) {
		return false, false
	}
	if err != nil {
		t.Fatalf("%s.%s: %v", resource, group, err)
	}
	m, err := c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		t.Fatalf("%s.%s: %v", resource, group, err)
	}
	return m.Scope.Name() == meta.RESTScopeNameNamespace, true
}

// accessAllowed asks the API server (SubjectAccessReview) whether the ServiceAccount
// saNamespace/sa may do attrs.
func accessAllowed(ctx context.Context, t *testing.T, c client.Client, saNamespace, sa string, attrs authorizationv1.ResourceAttributes) bool {
	t.Helper()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:               "system:serviceaccount:" + saNamespace + ":" + sa,
		Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + saNamespace, "system:authenticated"},
		ResourceAttributes: &attrs,
	}}
	if err := c.Create(ctx, sar); err != nil {
		t.Fatal(err)
	}
	return sar.Status.Allowed
}

// The namespaced release: its namespace and the one namespace it watches.
const (
	scopedNS    = "database-operator-scoped"
	scopedWatch = "samples-scoped"
)

// expectCanCreateStatefulSets asks the API server (SubjectAccessReview) whether the
// ServiceAccount saNamespace/sa may create StatefulSets in namespace, and expects want.
func expectCanCreateStatefulSets(ctx context.Context, t *testing.T, c client.Client, saNamespace, sa, namespace string, want bool) {
	t.Helper()
	attrs := authorizationv1.ResourceAttributes{Namespace: namespace, Verb: "create", Group: "apps", Resource: "statefulsets"}
	if got := accessAllowed(ctx, t, c, saNamespace, sa, attrs); got != want {
		t.Errorf("create statefulsets in %s by %s/%s: allowed=%v, want %v", namespace, saNamespace, sa, got, want)
	} else {
		t.Logf("create statefulsets in %s by %s/%s: allowed=%v", namespace, saNamespace, sa, want)
	}
}

// createNamespace creates the release namespace with the restricted Pod Security Standard
// enforced, so the API server rejects the manager's pods unless the chart's security
// contexts meet it.
func createNamespace(ctx context.Context, t *testing.T, c client.Client, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted",
		"pod-security.kubernetes.io/warn":    "restricted",
	}}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
}

// apply applies the objects with server-side apply: the CRDs first (waiting until they are
// Established), then the rest in Helm's install order. A ServiceMonitor is skipped when the
// cluster has no ServiceMonitor CRD (no Prometheus Operator).
func apply(ctx context.Context, t *testing.T, c client.Client, objs []*unstructured.Unstructured) {
	t.Helper()
	var crds, rest []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, o)
		} else {
			rest = append(rest, o)
		}
	}
	for _, o := range crds {
		applyOne(ctx, t, c, o)
	}
	for _, o := range crds {
		waitEstablished(ctx, t, c, o.GetName())
	}
	for _, o := range rest {
		gvk := o.GroupVersionKind()
		if _, err := c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); meta.IsNoMatchError(err) {
			t.Logf("skipping %s: the cluster has no %s CRD (install the Prometheus Operator to use metrics.serviceMonitor)", key(o), gvk.GroupVersion().WithKind(gvk.Kind))
			continue
		}
		if o.GetKind() == "Deployment" {
			dryRunPod(ctx, t, c, o)
		}
		applyOne(ctx, t, c, o)
	}
}

func applyOne(ctx context.Context, t *testing.T, c client.Client, o *unstructured.Unstructured) {
	t.Helper()
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(o.DeepCopy()), client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
		t.Fatalf("applying %s: %v", key(o), err)
	}
	t.Logf("applied %s", key(o))
}

// dryRunPod creates a pod of the Deployment's template with dryRun=All, so that admission
// (Pod Security, priority class) reports a rejection directly rather than as a ReplicaSet
// event.
func dryRunPod(ctx context.Context, t *testing.T, c client.Client, o *unstructured.Unstructured) {
	t.Helper()
	var d appsv1.Deployment
	mustConvert(t, o, &d)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: d.Name + "-dry-run-", Namespace: d.Namespace, Labels: d.Spec.Template.Labels},
		Spec:       d.Spec.Template.Spec,
	}
	if err := c.Create(ctx, pod, client.DryRunAll); err != nil {
		t.Fatalf("the API server refuses the manager's pod: %v", err)
	}
}

func waitEstablished(ctx context.Context, t *testing.T, c client.Client, name string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		crd := &unstructured.Unstructured{}
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		for _, cond := range conds {
			m, _ := cond.(map[string]any)
			if m["type"] == "Established" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("CRD %s not Established: %v", name, err)
	}
}

func deploymentOf(t *testing.T, objs []*unstructured.Unstructured) *appsv1.Deployment {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			var d appsv1.Deployment
			mustConvert(t, o, &d)
			return &d
		}
	}
	t.Fatal("no Deployment rendered")
	return nil
}

// waitAvailable waits until the Deployment's status shows every replica available and
// up to date; on timeout it reports the Deployment's conditions and the pods.
func waitAvailable(ctx context.Context, t *testing.T, c client.Client, want *appsv1.Deployment) {
	t.Helper()
	var d appsv1.Deployment
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(want), &d); err != nil {
			return false, err
		}
		s := d.Status
		return s.ObservedGeneration == d.Generation && s.AvailableReplicas == *want.Spec.Replicas &&
			s.UpdatedReplicas == *want.Spec.Replicas && s.ReadyReplicas == *want.Spec.Replicas, nil
	})
	if err != nil {
		t.Errorf("Deployment %s/%s: %d/%d available: %v\nstatus: %+v", d.Namespace, d.Name,
			d.Status.AvailableReplicas, *want.Spec.Replicas, err, d.Status)
		logPlacement(ctx, t, c, want)
		t.FailNow()
	}
}

// logPlacement prints the manager pods: node, phase, readiness.
func logPlacement(ctx context.Context, t *testing.T, c client.Client, d *appsv1.Deployment) {
	t.Helper()
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(d.Namespace), client.MatchingLabels(d.Spec.Selector.MatchLabels)); err != nil {
		t.Logf("listing pods: %v", err)
		return
	}
	nodes := map[string]bool{}
	for _, p := range pods.Items {
		ready := false
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodReady {
				ready = cond.Status == corev1.ConditionTrue
			}
		}
		nodes[p.Spec.NodeName] = true
		t.Logf("pod %s: node %q, phase %s, ready %v", p.Name, p.Spec.NodeName, p.Status.Phase, ready)
	}
	t.Logf("%d pods on %d distinct nodes", len(pods.Items), len(nodes))
}

// checkNotesExample has the API server validate (dry run) the DatabaseCluster that NOTES.txt
// tells users to create.
func checkNotesExample(ctx context.Context, t *testing.T, c client.Client, notes string) {
	t.Helper()
	_, after, ok := strings.Cut(notes, "<<YAML\n")
	example, _, ok2 := strings.Cut(after, "\n  YAML")
	if !ok || !ok2 {
		t.Fatalf("NOTES.txt has no <<YAML example:\n%s", notes)
	}
	objs, err := decode(example)
	if err != nil || len(objs) != 1 {
		t.Fatalf("NOTES.txt example: %d objects, %v", len(objs), err)
	}
	objs[0].SetNamespace("default")
	if err := c.Create(ctx, objs[0], client.DryRunAll); err != nil {
		t.Errorf("the API server refuses the NOTES.txt example: %v", err)
	}
}
