package olm_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	"sigs.k8s.io/yaml"
)

// samplesDir holds the samples users apply (kubectl apply -f config/samples/...); the bundle's
// alm-examples are generated from them (config/manifests includes config/samples).
const samplesDir = "config/samples"

// TestALMExamplesAreTheSamples: the CSV's alm-examples, what OperatorHub and the console offer
// as examples, are exactly the samples: every sample file is in the samples' kustomization (or
// "make bundle" would leave it out), and the examples equal the files, object for object.
func TestALMExamplesAreTheSamples(t *testing.T) {
	samples := readSamples(t)
	b, err := manifests.GetBundleFromDir(filepath.Join(repoRoot, "bundle"))
	if err != nil {
		t.Fatal(err)
	}
	var examples []map[string]any
	if err := json.Unmarshal([]byte(b.CSV.Annotations["alm-examples"]), &examples); err != nil {
		t.Fatalf("alm-examples: %v", err)
	}
	got := map[string]map[string]any{}
	for _, e := range examples {
		got[objectKey(e)] = e
	}
	if len(got) != len(examples) {
		t.Errorf("alm-examples hold %d examples, %d of them distinct", len(examples), len(got))
	}
	for key, want := range samples {
		switch e, ok := got[key]; {
		case !ok:
			t.Errorf("sample %s is not in alm-examples (run make bundle)", key)
		case !reflect.DeepEqual(e, want):
			t.Errorf("alm-examples' %s differs from its sample file (run make bundle)", key)
		}
	}
	for key := range got {
		if _, ok := samples[key]; !ok {
			t.Errorf("alm-examples' %s is no sample of %s", key, samplesDir)
		}
	}
}

// readSamples returns the objects of the sample files, keyed by objectKey, and fails for a
// sample file the samples' kustomization does not list.
func readSamples(t *testing.T) map[string]map[string]any {
	t.Helper()
	dir := filepath.Join(repoRoot, samplesDir)
	raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(raw, &k); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	samples := map[string]map[string]any{}
	for _, f := range files {
		name := filepath.Base(f)
		if name == "kustomization.yaml" {
			continue
		}
		if !slices.Contains(k.Resources, name) {
			t.Errorf("%s/%s is not in its kustomization.yaml: it would not be in alm-examples", samplesDir, name)
		}
		for _, obj := range readObjects(t, f) {
			samples[objectKey(obj)] = obj
		}
	}
	if len(samples) == 0 {
		t.Fatalf("no sample in %s", dir)
	}
	return samples
}

// readObjects returns the YAML documents of file as objects.
func readObjects(t *testing.T, file string) []map[string]any {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var objs []map[string]any
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(obj) > 0 {
			objs = append(objs, obj)
		}
	}
	return objs
}

// objectKey names an object by its apiVersion, kind and name.
func objectKey(obj map[string]any) string {
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	return obj["apiVersion"].(string) + " " + obj["kind"].(string) + " " + name
}
