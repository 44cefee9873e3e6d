package images_test

import (
	"archive/tar"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/seed1b407122/database-operator/hack/images"
)

// TestRegistryServesPushedLayouts pushes an OCI layout to ServeRegistry's registry and pulls
// it back by the digest PushLayout returns; after Close nothing answers.
func TestRegistryServesPushedLayouts(t *testing.T) {
	img := programImage(t, "#!/bin/sh\necho hi\n")
	layout := filepath.Join(t.TempDir(), "layout")
	must(t, images.WriteLayout(layout, img, "quay.io/org/program:v1"))

	reg, err := images.ServeRegistry("127.0.0.1:0", nil)
	must(t, err)
	ref, err := reg.PushLayout(t.Context(), layout, "org/program:v1")
	must(t, err)
	digest, err := img.Digest()
	must(t, err)
	if want := "org/program@" + digest.String(); ref != want {
		t.Errorf("PushLayout = %q, want %q", ref, want)
	}
	for _, pullRef := range []string{reg.Addr + "/" + ref, reg.Addr + "/org/program:v1"} {
		got, err := images.Pull(t.Context(), pullRef, true)
		must(t, err)
		if d, _ := got.Digest(); d != digest {
			t.Errorf("%s: digest %s, want %s", pullRef, d, digest)
		}
	}
	if _, err := reg.PushLayout(t.Context(), filepath.Join(t.TempDir(), "missing"), "org/x"); err == nil {
		t.Error("pushing a missing layout succeeded")
	}
	must(t, reg.Close())
	if _, err := images.Pull(t.Context(), reg.Addr+"/"+ref, true); err == nil {
		t.Error("the registry still serves after Close")
	}
}

// TestCatalogImageCarriesTheServeCache builds the catalog image on an opm-like base with a
// serve cache: the cache lands where the Dockerfile's CMD says (--cache-dir=/tmp/cache), /tmp
// keeps the base's mode 1777, and the base's user and the Dockerfile's entrypoint hold.
func TestCatalogImageCarriesTheServeCache(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	must(t, err)
	dir := t.TempDir()
	opm := filepath.Join(dir, "opm")
	must(t, os.WriteFile(opm, []byte("#!/bin/sh\n"), 0o755))
	base, err := images.StaticImage([]images.File{{Source: opm, Path: "/bin/opm"}}, images.Config{User: "1001"}, time.Unix(0, 0))
	must(t, err)
	cache := filepath.Join(dir, "cache")
	must(t, os.MkdirAll(filepath.Join(cache, "pogreb.v1"), 0o755))
	must(t, os.WriteFile(filepath.Join(cache, "pogreb.v1", "digest"), []byte("abc"), 0o644))
	dockerfile := filepath.Join(root, "catalog.Dockerfile")
	img, err := images.CatalogImage(filepath.Join(root, "catalog"), dockerfile, base, cache, time.Unix(0, 0))
	must(t, err)
	files, modes, err := images.Files(img)
	must(t, err)
	if string(files["tmp/cache/pogreb.v1/digest"]) != "abc" {
		t.Errorf("no serve cache at /tmp/cache: files %v", images.SortedKeys(files))
	}
	owners := cacheOwners(t, img)
	if owners["tmp/cache/pogreb.v1/digest"] != 1001 || owners["tmp/cache/pogreb.v1/"] != 1001 || owners["configs/"+packageName+"/index.yaml"] != 0 {
		t.Errorf("owners %v: want the cache owned by the base's user 1001, the configs by root", owners)
	}
	if modes["tmp"] != 0o1777 {
		t.Errorf("/tmp mode %o, want 1777", modes["tmp"])
	}
	if _, ok := files["configs/"+packageName+"/index.yaml"]; !ok {
		t.Errorf("no /configs/%s/index.yaml", packageName)
	}
	cf, err := img.ConfigFile()
	must(t, err)
	if cf.Config.User != "1001" || strings.Join(cf.Config.Entrypoint, " ") != "/bin/opm" ||
		strings.Join(cf.Config.Cmd, " ") != "serve /configs --cache-dir=/tmp/cache" {
		t.Errorf("config user %q entrypoint %q cmd %q", cf.Config.User, cf.Config.Entrypoint, cf.Config.Cmd)
	}
	if _, err := images.CatalogImage(filepath.Join(root, "catalog"), dockerfile, nil, cache, time.Unix(0, 0)); err == nil {
		t.Error("a serve cache without a base was accepted")
	}
}

// cacheOwners returns the uid of every entry of img's last layer.
func cacheOwners(t *testing.T, img v1.Image) map[string]int {
	t.Helper()
	layers, err := img.Layers()
	must(t, err)
	rc, err := layers[len(layers)-1].Uncompressed()
	must(t, err)
	defer func() { _ = rc.Close() }()
	owners := map[string]int{}
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return owners
		}
		must(t, err)
		owners[hdr.Name] = hdr.Uid
	}
}
