package olm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ImageMirror says where images named with a public registry host are pulled from on this
// machine: a plain-HTTP registry holding them under the same repository paths (the real node's
// registry, "image-tool registry"). The zero value pulls images as they are named.
type ImageMirror struct {
	// Public is the registry host images name (quay.io); Pull the host:port serving them.
	Public, Pull string
}

// ParseImageMirror parses PUBLIC_HOST=HOST:PORT; "" is the zero ImageMirror.
func ParseImageMirror(s string) (ImageMirror, error) {
	if s == "" {
		return ImageMirror{}, nil
	}
	public, pull, ok := strings.Cut(s, "=")
	if !ok || public == "" || pull == "" {
		return ImageMirror{}, fmt.Errorf("mirror %q: want PUBLIC_HOST=HOST:PORT", s)
	}
	return ImageMirror{Public: public, Pull: pull}, nil
}

// pullRef returns the reference to pull image by and the opm flags that pull needs.
func (m ImageMirror) pullRef(image string) (string, []string) {
	if m.Pull != "" && strings.HasPrefix(image, m.Public+"/") {
		return m.Pull + strings.TrimPrefix(image, m.Public), []string{"--use-http"}
	}
	return image, nil
}

// UnpackBundleImage reads the bundle of image, named by digest, as ReadBundle reads a directory:
// "opm alpha bundle unpack" pulls it (through m) and validates it into a temporary directory.
func UnpackBundleImage(ctx context.Context, opm, image string, m ImageMirror) (*Bundle, error) {
	if !strings.Contains(image, "@sha256:") {
		return nil, fmt.Errorf("bundle image %q: name it by digest (REPOSITORY@sha256:...), as OLM pulls it", image)
	}
	work, err := os.MkdirTemp("", "bundle-image-")
	if err != nil {
		return nil, fmt.Errorf("creating a work directory: %w", err)
	}
	defer func() { _ = os.RemoveAll(work) }()
	ref, flags := m.pullRef(image)
	dir := filepath.Join(work, "bundle")
	cmd := exec.CommandContext(ctx, opm, append([]string{"alpha", "bundle", "unpack", ref, "--out", dir}, flags...)...)
	cmd.Dir = work // opm keeps its pull cache in ./cache
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("opm alpha bundle unpack %s: %w: %s", ref, err, bytes.TrimSpace(out))
	}
	b, err := ReadBundle(dir)
	if err != nil {
		return nil, fmt.Errorf("bundle image %s: %w", image, err)
	}
	return b, nil
}

// RenderBundleImageCatalog writes, like RenderBundleCatalog, a validated one-bundle catalog
// into outDir/<package>/catalog.json, for bundle b of image (UnpackBundleImage): the bundle as
// "opm render IMAGE" renders it, naming image, so that OLM pulls and unpacks the image in a Job,
// as for "operator-sdk run bundle IMAGE". It returns the catalog file's content.
func RenderBundleImageCatalog(ctx context.Context, opm, image string, m ImageMirror, b *Bundle, outDir string) ([]byte, error) {
	ref, flags := m.pullRef(image)
	home, err := policyHome()
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(home) }()
	blob, err := renderBundle(ctx, opm, ref, []string{"HOME=" + home}, flags...)
	if err != nil {
		return nil, err
	}
	if ref != image { // pulled through the mirror: name the images as users pull them again
		blob = bytes.ReplaceAll(blob, []byte(`"`+m.Pull+"/"), []byte(`"`+m.Public+"/"))
	}
	if err := checkImage(blob, b, image); err != nil {
		return nil, fmt.Errorf("opm render %s: %w", ref, err)
	}
	fbc, err := catalogFor(b, blob)
	if err != nil {
		return nil, err
	}
	return fbc, writeCatalog(ctx, opm, b, fbc, outDir)
}

// policyHome returns a HOME whose containers policy accepts any image (podman's default
// policy): "opm render IMAGE" pulls with containers/image, which refuses to run without one.
func policyHome() (string, error) {
	home, err := os.MkdirTemp("", "opm-home-")
	if err != nil {
		return "", fmt.Errorf("creating a HOME for opm: %w", err)
	}
	dir := filepath.Join(home, ".config", "containers")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating %s: %w", dir, err)
	}
	policy := []byte(`{"default": [{"type": "insecureAcceptAnything"}]}` + "\n")
	if err := os.WriteFile(filepath.Join(dir, "policy.json"), policy, 0o644); err != nil {
		return "", fmt.Errorf("writing the containers policy: %w", err)
	}
	return home, nil
}

// checkImage checks that the rendered blob is bundle b, named by image.
func checkImage(blob json.RawMessage, b *Bundle, image string) error {
	var r renderedBundle
	if err := json.Unmarshal(blob, &r); err != nil {
		return fmt.Errorf("parsing the rendered bundle: %w", err)
	}
	if r.Schema != "olm.bundle" || r.Name != b.CSVName || r.Package != b.Package || r.Image != image {
		return fmt.Errorf("rendered %s %q of package %q with image %q, want olm.bundle %q of package %q with image %q",
			r.Schema, r.Name, r.Package, r.Image, b.CSVName, b.Package, image)
	}
	return nil
}
