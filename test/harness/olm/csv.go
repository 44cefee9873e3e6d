package olm

import (
	"fmt"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/json"
)

// almExamplesAnnotation is the CSV annotation that holds the examples of its owned kinds, a JSON
// array of objects: what OperatorHub and the console offer a user to start from.
const almExamplesAnnotation = "alm-examples"

// ReadCSV reads the ClusterServiceVersion of the bundle directory dir (registry+v1 layout: the
// one CSV among the YAML files of manifests/), e.g. a released bundle kept in the tree.
func ReadCSV(dir string) (*unstructured.Unstructured, error) {
	csv, err := readCSV(filepath.Join(dir, "manifests"))
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", dir, err)
	}
	return csv, nil
}

// Example returns the object of kind and name among the alm-examples of csv, as written there
// (the caller puts it in its namespace): what a user of that version applied, with exactly the
// fields its API had. Each call returns an object of its own.
func Example(csv *unstructured.Unstructured, kind, name string) (*unstructured.Unstructured, error) {
	// Apimachinery's json, as the API client's decoder: whole numbers become int64, which the
	// unstructured accessors (NestedInt64) expect.
	var examples []any
	if err := json.Unmarshal([]byte(csv.GetAnnotations()[almExamplesAnnotation]), &examples); err != nil {
		return nil, fmt.Errorf("parsing the %s of %s: %w", almExamplesAnnotation, csv.GetName(), err)
	}
	for _, e := range examples {
		object, _ := e.(map[string]any)
		u := &unstructured.Unstructured{Object: object}
		if object != nil && u.GetKind() == kind && u.GetName() == name {
			return u, nil
		}
	}
	return nil, fmt.Errorf("the %s of %s hold no %s %s", almExamplesAnnotation, csv.GetName(), kind, name)
}
