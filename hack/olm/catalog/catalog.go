// Package catalog renders a file-based catalog (FBC) for one package from bundle directories:
// an olm.package, one olm.channel whose entries follow each CSV's replaces/skips/olm.skipRange,
// and every bundle as "opm render <dir>" renders it. Bundles rendered from directories carry
// their manifests inline (image "" + olm.bundle.object properties), so OLM installs them without
// pulling or unpacking a bundle image.
package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sort"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"sigs.k8s.io/yaml"
)

// entry is one olm.channel entry.
type entry struct {
	Name      string   `json:"name"`
	Replaces  string   `json:"replaces,omitempty"`
	Skips     []string `json:"skips,omitempty"`
	SkipRange string   `json:"skipRange,omitempty"`
}

type bundle struct {
	csv   *v1alpha1.ClusterServiceVersion
	blobs [][]byte // rendered FBC blobs, YAML
}

// Render returns the FBC of package pkg with one channel (also the default channel) holding the
// bundles in dirs, ordered by version. opm is the opm binary used to render each bundle.
func Render(opm, pkg, channel string, dirs []string) ([]byte, error) {
	var bundles []bundle
	for _, dir := range dirs {
		b, err := manifests.GetBundleFromDir(dir)
		if err != nil {
			return nil, fmt.Errorf("loading bundle %s: %w", dir, err)
		}
		if b.Package != pkg {
			return nil, fmt.Errorf("bundle %s is for package %q, not %q", dir, b.Package, pkg)
		}
		blobs, err := render(opm, dir)
		if err != nil {
			return nil, err
		}
		bundles = append(bundles, bundle{csv: b.CSV, blobs: blobs})
	}
	sort.Slice(bundles, func(i, j int) bool {
		return bundles[i].csv.Spec.Version.LT(bundles[j].csv.Spec.Version.Version)
	})

	var entries []entry
	for _, b := range bundles {
		entries = append(entries, entry{
			Name:      b.csv.Name,
			Replaces:  b.csv.Spec.Replaces,
			Skips:     b.csv.Spec.Skips,
			SkipRange: b.csv.Annotations[v1alpha1.SkipRangeAnnotationKey],
		})
	}
	docs := []any{
		map[string]any{"schema": "olm.package", "name": pkg, "defaultChannel": channel},
		map[string]any{"schema": "olm.channel", "package": pkg, "name": channel, "entries": entries},
	}
	var out bytes.Buffer
	for _, d := range docs {
		y, err := yaml.Marshal(d)
		if err != nil {
			return nil, fmt.Errorf("rendering YAML: %w", err)
		}
		out.WriteString("---\n")
		out.Write(y)
	}
	for _, b := range bundles {
		for _, y := range b.blobs {
			out.WriteString("---\n")
			out.Write(y)
		}
	}
	return out.Bytes(), nil
}

// render runs "opm render DIR -o json" and returns its blobs as YAML documents.
func render(opm, dir string) ([][]byte, error) {
	cmd := exec.Command(opm, "render", dir, "-o", "json")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("opm render %s: %w: %s", dir, err, stderr.String())
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var blobs [][]byte
	for {
		var blob json.RawMessage
		if err := dec.Decode(&blob); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("reading opm render output of %s: %w", dir, err)
		}
		y, err := yaml.JSONToYAML(blob)
		if err != nil {
			return nil, fmt.Errorf("converting opm render output of %s: %w", dir, err)
		}
		blobs = append(blobs, y)
	}
	if len(blobs) == 0 {
		return nil, fmt.Errorf("opm render %s: no output", dir)
	}
	return blobs, nil
}
