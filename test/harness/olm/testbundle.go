package olm

import (
	"os"
	"path/filepath"
)

// MinimalCSV is a ClusterServiceVersion with nothing but its name and install modes
// (OwnNamespace only): enough for the unit tests of bundle handling here and in run-bundle.
const MinimalCSV = `apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: pkg.v1.0.0
spec:
  installModes:
  - {type: OwnNamespace, supported: true}
  - {type: AllNamespaces, supported: false}
`

// WriteMinimalBundle writes a bundle directory of two files: metadata/annotations.yaml and
// manifests/csv.yaml.
func WriteMinimalBundle(dir, annotations, csv string) error {
	files := map[string]string{
		filepath.Join(dir, "metadata", "annotations.yaml"): annotations,
		filepath.Join(dir, "manifests", "csv.yaml"):        csv,
	}
	for path, data := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			return err
		}
	}
	return nil
}
