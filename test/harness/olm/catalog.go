package olm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Bundle annotations (bundle/metadata/annotations.yaml) this package reads.
const (
	packageAnnotation        = "operators.operatorframework.io.bundle.package.v1"
	channelsAnnotation       = "operators.operatorframework.io.bundle.channels.v1"
	defaultChannelAnnotation = "operators.operatorframework.io.bundle.channel.default.v1"
)

// Bundle is what a bundle directory says about itself.
type Bundle struct {
	// Package is the OLM package name.
	Package string
	// CSVName is the name of the bundle's ClusterServiceVersion, e.g. database-operator.v0.2.0.
	CSVName string
	// Channels the bundle belongs to, and the package's default channel.
	Channels       []string
	DefaultChannel string
	// InstallModes are the CSV's install modes, supported or not, by type.
	InstallModes map[string]bool
}

// ReadBundle reads a bundle directory (registry+v1 layout: metadata/annotations.yaml and a
// CSV in manifests/).
func ReadBundle(dir string) (*Bundle, error) {
	data, err := os.ReadFile(filepath.Join(dir, "metadata", "annotations.yaml"))
	if err != nil {
		return nil, fmt.Errorf("reading the bundle's annotations: %w", err)
	}
	var meta struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(data, &meta); err != nil {
		return nil, fmt.Errorf("parsing %s/metadata/annotations.yaml: %w", dir, err)
	}
	b := &Bundle{Package: meta.Annotations[packageAnnotation], DefaultChannel: meta.Annotations[defaultChannelAnnotation]}
	for _, ch := range strings.Split(meta.Annotations[channelsAnnotation], ",") {
		if ch = strings.TrimSpace(ch); ch != "" {
			b.Channels = append(b.Channels, ch)
		}
	}
	if b.DefaultChannel == "" && len(b.Channels) == 1 {
		b.DefaultChannel = b.Channels[0]
	}
	if b.Package == "" || b.DefaultChannel == "" || !slices.Contains(b.Channels, b.DefaultChannel) {
		return nil, fmt.Errorf("bundle %s: annotations need a package, channels and a default channel among them (got package %q, channels %v, default %q)",
			dir, b.Package, b.Channels, b.DefaultChannel)
	}
	csv, err := ReadCSV(dir)
	if err != nil {
		return nil, err
	}
	b.CSVName = csv.GetName()
	modes, _, _ := unstructured.NestedSlice(csv.Object, "spec", "installModes")
	b.InstallModes = map[string]bool{}
	for _, m := range modes {
		mode, _ := m.(map[string]any)
		typ, _ := mode["type"].(string)
		supported, _ := mode["supported"].(bool)
		b.InstallModes[typ] = supported
	}
	return b, nil
}

// readCSV returns the one ClusterServiceVersion among the YAML files of dir.
func readCSV(dir string) (*unstructured.Unstructured, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the manifests: %w", err)
	}
	var found *unstructured.Unstructured
	for _, e := range entries {
		if e.IsDir() || (!strings.HasSuffix(e.Name(), ".yaml") && !strings.HasSuffix(e.Name(), ".yml")) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", e.Name(), err)
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &obj.Object); err != nil {
			return nil, fmt.Errorf("parsing %s: %w", e.Name(), err)
		}
		if obj.GetKind() != KindClusterServiceVersion {
			continue
		}
		if found != nil {
			return nil, fmt.Errorf("two ClusterServiceVersions in %s: %s and %s", dir, found.GetName(), obj.GetName())
		}
		found = obj
	}
	if found == nil || found.GetName() == "" {
		return nil, fmt.Errorf("no named ClusterServiceVersion in %s", dir)
	}
	return found, nil
}

// RenderBundleCatalog writes a file-based catalog with this one bundle into
// outDir/<package>/catalog.json and validates it with "opm validate": an olm.package whose
// default channel is the bundle's, one olm.channel per channel of the bundle holding only
// this CSV (no replaces: nothing older is in the catalog), and the bundle as "opm render DIR"
// renders it. A bundle rendered from a directory has image "" and its manifests inline as
// olm.bundle.object properties, so OLM installs it from the catalog's gRPC answer and never
// pulls or unpacks a bundle image: RenderBundleCatalog refuses anything else. It returns the
// bundle and the catalog file's content.
func RenderBundleCatalog(ctx context.Context, opm, bundleDir, outDir string) (*Bundle, []byte, error) {
	b, err := ReadBundle(bundleDir)
	if err != nil {
		return nil, nil, err
	}
	blob, err := renderBundle(ctx, opm, bundleDir, nil)
	if err != nil {
		return nil, nil, err
	}
	if err := checkInline(blob, b); err != nil {
		return nil, nil, fmt.Errorf("opm render %s: %w", bundleDir, err)
	}
	fbc, err := catalogFor(b, blob)
	if err != nil {
		return nil, nil, err
	}
	return b, fbc, writeCatalog(ctx, opm, b, fbc, outDir)
}

// writeCatalog writes fbc, the catalog of bundle b, into outDir/<package>/catalog.json and
// validates it with "opm validate".
func writeCatalog(ctx context.Context, opm string, b *Bundle, fbc []byte, outDir string) error {
	dir := filepath.Join(outDir, b.Package)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	if err := os.WriteFile(filepath.Join(dir, catalogFile), fbc, 0o644); err != nil {
		return fmt.Errorf("writing the catalog: %w", err)
	}
	if out, err := exec.CommandContext(ctx, opm, "validate", outDir).CombinedOutput(); err != nil {
		return fmt.Errorf("opm validate %s: %w: %s", outDir, err, bytes.TrimSpace(out))
	}
	return nil
}

// renderBundle runs "opm render REF -o json" (REF a bundle directory or image; env added to
// opm's environment) and returns its one olm.bundle blob.
func renderBundle(ctx context.Context, opm, dir string, env []string, flags ...string) (json.RawMessage, error) {
	cmd := exec.CommandContext(ctx, opm, append(append([]string{"render", dir}, flags...), "-o", "json")...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("opm render %s: %w: %s", dir, err, bytes.TrimSpace(stderr.Bytes()))
	}
	var blobs []json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var blob json.RawMessage
		if err := dec.Decode(&blob); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("reading the output of opm render %s: %w", dir, err)
		}
		blobs = append(blobs, blob)
	}
	if len(blobs) != 1 {
		return nil, fmt.Errorf("opm render %s: want one olm.bundle, got %d documents", dir, len(blobs))
	}
	return blobs[0], nil
}

// renderedBundle is the part of an olm.bundle blob checkInline reads.
type renderedBundle struct {
	Schema     string `json:"schema"`
	Name       string `json:"name"`
	Package    string `json:"package"`
	Image      string `json:"image"`
	Properties []struct {
		Type string `json:"type"`
	} `json:"properties"`
}

// checkInline checks that the rendered blob is the bundle b with its manifests inline.
func checkInline(blob json.RawMessage, b *Bundle) error {
	var r renderedBundle
	if err := json.Unmarshal(blob, &r); err != nil {
		return fmt.Errorf("parsing the rendered bundle: %w", err)
	}
	objects := 0
	for _, p := range r.Properties {
		if p.Type == "olm.bundle.object" {
			objects++
		}
	}
	switch {
	case r.Schema != "olm.bundle" || r.Name != b.CSVName || r.Package != b.Package:
		return fmt.Errorf("rendered %s %q of package %q, want olm.bundle %q of package %q", r.Schema, r.Name, r.Package, b.CSVName, b.Package)
	case r.Image != "":
		return fmt.Errorf("the bundle has image %q: OLM would unpack it instead of reading it inline", r.Image)
	case objects == 0:
		return errors.New("the bundle has no olm.bundle.object properties: its manifests are not inline")
	}
	return nil
}

// FBC documents of the catalog (alpha/declcfg's Package and Channel, the fields used here).
type (
	fbcPackage struct {
		Schema         string `json:"schema"`
		Name           string `json:"name"`
		DefaultChannel string `json:"defaultChannel"`
	}
	fbcChannel struct {
		Schema  string     `json:"schema"`
		Package string     `json:"package"`
		Name    string     `json:"name"`
		Entries []fbcEntry `json:"entries"`
	}
	fbcEntry struct {
		Name string `json:"name"`
	}
)

// catalogFor returns the catalog file (a JSON stream) for bundle b rendered as blob.
func catalogFor(b *Bundle, blob json.RawMessage) ([]byte, error) {
	docs := []any{fbcPackage{Schema: "olm.package", Name: b.Package, DefaultChannel: b.DefaultChannel}}
	for _, ch := range b.Channels {
		docs = append(docs, fbcChannel{Schema: "olm.channel", Package: b.Package, Name: ch, Entries: []fbcEntry{{Name: b.CSVName}}})
	}
	var out bytes.Buffer
	for _, d := range docs {
		data, err := json.Marshal(d)
		if err != nil {
			return nil, fmt.Errorf("encoding the catalog: %w", err)
		}
		out.Write(data)
		out.WriteByte('\n')
	}
	if err := json.Compact(&out, blob); err != nil {
		return nil, fmt.Errorf("encoding the catalog: %w", err)
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}
