package validate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// committedBundle is the repository's generated bundle, the valid starting point of every case.
const committedBundle = "../../../bundle"

const csvFile = "manifests/database-operator.clusterserviceversion.yaml"

// copyBundle copies the committed bundle into a temporary directory.
func copyBundle(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(committedBundle, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(committedBundle, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatalf("copying bundle: %v", err)
	}
	return dst
}

// editYAML applies edit to the YAML file rel of bundle dir.
func editYAML(t *testing.T, dir, rel string, edit func(obj map[string]any)) {
	t.Helper()
	path := filepath.Join(dir, rel)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(b, &obj); err != nil {
		t.Fatal(err)
	}
	edit(obj)
	if b, err = yaml.Marshal(obj); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func set(value any, fields ...string) func(map[string]any) {
	return func(obj map[string]any) {
		if err := unstructured.SetNestedField(obj, value, fields...); err != nil {
			panic(err)
		}
	}
}

func remove(fields ...string) func(map[string]any) {
	return func(obj map[string]any) { unstructured.RemoveNestedField(obj, fields...) }
}

// committedCSVName is the name of the committed bundle's CSV (database-operator.vVERSION).
func committedCSVName(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(committedBundle, csvFile))
	if err != nil {
		t.Fatal(err)
	}
	var csv struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal(raw, &csv); err != nil || csv.Metadata.Name == "" {
		t.Fatalf("%s: no metadata.name (%v)", csvFile, err)
	}
	return csv.Metadata.Name
}

func TestCommittedBundleIsClean(t *testing.T) {
	r, err := Bundle(committedBundle)
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() {
		t.Fatalf("bundle/ has findings (run make bundle):\nerrors: %q\nwarnings: %q", r.Errors, r.Warnings)
	}
}

func TestValidatorCatchesBrokenBundles(t *testing.T) {
	cases := []struct {
		name    string
		breakIt func(t *testing.T, dir string)
		// wantErr / wantWarn are substrings of one reported error / warning ("" = none expected).
		wantErr, wantWarn string
	}{
		{
			name:     "no icon",
			breakIt:  func(t *testing.T, dir string) { editYAML(t, dir, csvFile, remove("spec", "icon")) },
			wantWarn: "csv.Spec.Icon not specified",
		},
		{
			name:    "no description",
			breakIt: func(t *testing.T, dir string) { editYAML(t, dir, csvFile, remove("spec", "description")) },
			wantErr: "csv.Spec.Description is empty",
		},
		{
			name: "tile description longer than OperatorHub shows",
			breakIt: func(t *testing.T, dir string) {
				editYAML(t, dir, csvFile, set(strings.Repeat("x", 136), "metadata", "annotations", "description"))
			},
			wantErr: "metadata.annotations.description has 136 characters, want 1 to 135 (the OperatorHub tile)",
		},
		{
			name: "category not in the standard set",
			breakIt: func(t *testing.T, dir string) {
				editYAML(t, dir, csvFile, set("Databases", "metadata", "annotations", "categories"))
			},
			wantErr: `csv.Metadata.Annotations["categories"] value "Databases" is not in the set of standard categories`,
		},
		{
			name: "capability level made up",
			breakIt: func(t *testing.T, dir string) {
				editYAML(t, dir, csvFile, set("Fully Automatic", "metadata", "annotations", "capabilities"))
			},
			wantErr: `csv.Metadata.Annotations.Capabilities "Fully Automatic" is not a valid capabilities level`,
		},
		{
			name: "CRD in the bundle but not owned by the CSV",
			breakIt: func(t *testing.T, dir string) {
				editYAML(t, dir, csvFile, func(obj map[string]any) {
					owned, _, _ := unstructured.NestedSlice(obj, "spec", "customresourcedefinitions", "owned")
					_ = unstructured.SetNestedSlice(obj, owned[1:], "spec", "customresourcedefinitions", "owned")
				})
			},
			wantErr: `CRD "database.seed1b407122.io/v1alpha1, Kind=DatabaseCluster" is present in bundle "` + committedCSVName(t) + `" but not defined in CSV`,
		},
		{
			name: "alm-examples not JSON",
			breakIt: func(t *testing.T, dir string) {
				editYAML(t, dir, csvFile, set(`[{"kind": "DatabaseCluster",`, "metadata", "annotations", "alm-examples"))
			},
			wantErr: "invalid example",
		},
		{
			name: "alm-examples of a kind the CSV does not provide",
			breakIt: func(t *testing.T, dir string) {
				editYAML(t, dir, csvFile, set(`[{"apiVersion": "database.seed1b407122.io/v1alpha1", "kind": "Database", "metadata": {"name": "x"}}]`,
					"metadata", "annotations", "alm-examples"))
			},
			wantErr:  "Kind=Database: example must have a provided API",
			wantWarn: "Kind=DatabaseCluster: provided API should have an example annotation",
		},
		{
			name:     "no minKubeVersion",
			breakIt:  func(t *testing.T, dir string) { editYAML(t, dir, csvFile, remove("spec", "minKubeVersion")) },
			wantWarn: "csv.Spec.minKubeVersion is not informed",
		},
		{
			name: "channel name off convention",
			breakIt: func(t *testing.T, dir string) {
				editYAML(t, dir, "metadata/annotations.yaml", set("beta", "annotations", "operators.operatorframework.io.bundle.channels.v1"))
			},
			wantWarn: `channel(s) ["beta"] are not following the recommended naming convention`,
		},
		{
			name: "object of an API removed before minKubeVersion",
			breakIt: func(t *testing.T, dir string) {
				pdb := "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata:\n  name: pdb\nspec:\n  maxUnavailable: 1\n"
				if err := os.WriteFile(filepath.Join(dir, "manifests", "pdb.yaml"), []byte(pdb), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			wantErr: "this bundle is using APIs which were deprecated and removed in v1.25",
		},
		{
			name: "disconnected claimed with a related image named by tag",
			breakIt: func(t *testing.T, dir string) {
				editYAML(t, dir, csvFile, func(obj map[string]any) {
					related, _, _ := unstructured.NestedSlice(obj, "spec", "relatedImages")
					related = append(related, map[string]any{"name": "tagged", "image": "docker.io/library/busybox:1.36"})
					_ = unstructured.SetNestedSlice(obj, related, "spec", "relatedImages")
				})
			},
			wantErr: `features.operators.openshift.io/disconnected is "true", but the image docker.io/library/busybox:1.36 is not named by digest`,
		},
		{
			name: "disconnected claimed with the manager's ECHO_IMAGE named by tag",
			breakIt: func(t *testing.T, dir string) {
				editYAML(t, dir, csvFile, func(obj map[string]any) {
					deployments, _, _ := unstructured.NestedSlice(obj, "spec", "install", "spec", "deployments")
					containers, _, _ := unstructured.NestedSlice(deployments[0].(map[string]any), "spec", "template", "spec", "containers")
					env, _, _ := unstructured.NestedSlice(containers[0].(map[string]any), "env")
					for _, e := range env {
						if e.(map[string]any)["name"] == "ECHO_IMAGE" {
							e.(map[string]any)["value"] = "registry.example/echo:1"
						}
					}
					_ = unstructured.SetNestedSlice(containers[0].(map[string]any), env, "env")
					_ = unstructured.SetNestedSlice(deployments[0].(map[string]any), containers, "spec", "template", "spec", "containers")
					_ = unstructured.SetNestedSlice(obj, deployments, "spec", "install", "spec", "deployments")
				})
			},
			wantErr: `features.operators.openshift.io/disconnected is "true", but the image registry.example/echo:1 is not named by digest`,
		},
		{
			name: "operator may create CRDs",
			breakIt: func(t *testing.T, dir string) {
				editYAML(t, dir, csvFile, func(obj map[string]any) {
					perms, _, _ := unstructured.NestedSlice(obj, "spec", "install", "spec", "clusterPermissions")
					p := perms[0].(map[string]any)
					p["rules"] = append(p["rules"].([]any), map[string]any{
						"apiGroups": []any{"apiextensions.k8s.io"}, "resources": []any{"customresourcedefinitions"}, "verbs": []any{"create"},
					})
					_ = unstructured.SetNestedSlice(obj, perms, "spec", "install", "spec", "clusterPermissions")
				})
			},
			wantWarn: "CSV contains permissions to create CRD",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyBundle(t)
			tc.breakIt(t, dir)
			r, err := Bundle(dir)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("errors: %q\nwarnings: %q", r.Errors, r.Warnings)
			if !contains(r.Errors, tc.wantErr) {
				t.Errorf("no error containing %q; errors: %q", tc.wantErr, r.Errors)
			}
			if !contains(r.Warnings, tc.wantWarn) {
				t.Errorf("no warning containing %q; warnings: %q", tc.wantWarn, r.Warnings)
			}
		})
	}
}

// contains reports whether one of lines contains sub ("" matches when lines is empty).
func contains(lines []string, sub string) bool {
	if sub == "" {
		return len(lines) == 0
	}
	for _, l := range lines {
		if strings.Contains(l, sub) {
			return true
		}
	}
	return false
}
