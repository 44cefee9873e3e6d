package images

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// RefNameAnnotation tags an image inside an OCI layout.
const RefNameAnnotation = "org.opencontainers.image.ref.name"

// WriteLayout replaces dir with an OCI image layout holding img, tagged tag (the annotation
// org.opencontainers.image.ref.name, as "crane push DIR" and skopeo "oci:DIR:TAG" expect).
func WriteLayout(dir string, img v1.Image, tag string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	return p.AppendImage(img, layout.WithAnnotations(map[string]string{RefNameAnnotation: tag}))
}

// WriteTarball writes img as a docker-archive tarball tagged ref (for "ctr images import",
// "docker load" or "crane push FILE").
func WriteTarball(file string, img v1.Image, ref string) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	tmp := file + ".tmp"
	if err := tarball.WriteToFile(tmp, tag, img); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}

// ReadLayout returns the single image of an OCI layout written by WriteLayout.
func ReadLayout(dir string) (v1.Image, error) {
	ii, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, err
	}
	im, err := ii.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(im.Manifests) != 1 {
		return nil, fmt.Errorf("%s: %d manifests, want 1", dir, len(im.Manifests))
	}
	return ii.Image(im.Manifests[0].Digest)
}

// Push pushes img to ref. Registries on localhost/127.0.0.1 are spoken to over plain HTTP (as
// go-containerregistry does for loopback); insecure forces HTTP for any other host. Credentials
// come from the Docker config (docker login), as for crane; none: anonymous.
func Push(ctx context.Context, img v1.Image, ref string, insecure bool) (name.Reference, error) {
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	r, err := name.ParseReference(ref, opts...)
	if err != nil {
		return nil, err
	}
	if err := remote.Write(r, img, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return nil, fmt.Errorf("push %s: %w", r, err)
	}
	return r, nil
}

// Pull reads ref from a registry (plain HTTP on loopback, or when insecure).
func Pull(ctx context.Context, ref string, insecure bool) (v1.Image, error) {
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	r, err := name.ParseReference(ref, opts...)
	if err != nil {
		return nil, err
	}
	return remote.Image(r, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain))
}
