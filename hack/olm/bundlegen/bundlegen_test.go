package bundlegen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
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
rules: [{apiGroups: [example.com], resources: [things], verbs: [list]}]
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
	if f := c.Env[0].ValueFrom; f == nil || f.FieldRef.FieldPath != "metadata.annotations['olm.targetNamespaces']" {
		t.Errorf("WATCH_NAMESPACE does not follow the OperatorGroup: %+v", c.Env[0])
	}
	if len(s.Permissions) != 1 || s.Permissions[0].ServiceAccountName != "x-sa" || s.Permissions[0].Rules[0].Resources[0] != "leases" {
		t.Errorf("permissions %+v", s.Permissions)
	}
	if len(s.ClusterPermissions) != 1 || s.ClusterPermissions[0].ServiceAccountName != "x-sa" || s.ClusterPermissions[0].Rules[0].Verbs[0] != "list" {
		t.Errorf("clusterPermissions %+v", s.ClusterPermissions)
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
