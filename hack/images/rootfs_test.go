package images_test

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/seed1b407122/database-operator/hack/images"
)

// TestRootfsImage builds an image of a directory tree the way "image-tool rootfs" does for the
// PostgreSQL image (Debian packages unpacked with dpkg-deb -x, plus a static entrypoint): the
// tree's permission bits and symbolic links are kept, everything is root's, distroless' accounts
// are added only where the tree has none, and the same input gives the same digest.
func TestRootfsImage(t *testing.T) {
	dir := t.TempDir()
	tree := filepath.Join(dir, "rootfs")
	must(t, os.MkdirAll(filepath.Join(tree, "usr/lib/tool"), 0o755))
	must(t, os.MkdirAll(filepath.Join(tree, "bin"), 0o755))
	must(t, os.WriteFile(filepath.Join(tree, "bin/dash"), []byte("#!dash\n"), 0o755))
	must(t, os.Symlink("dash", filepath.Join(tree, "bin/sh")))
	must(t, os.WriteFile(filepath.Join(tree, "usr/lib/tool/data"), []byte("data"), 0o640))
	entrypoint := filepath.Join(dir, "entrypoint")
	must(t, os.WriteFile(entrypoint, []byte("#!entrypoint\n"), 0o644))
	created := time.Unix(1700000000, 0).UTC()
	files := []images.File{{Source: entrypoint, Path: "/usr/local/bin/entrypoint"}}
	cfg := images.Config{User: "65532:65532", Entrypoint: []string{"/usr/local/bin/entrypoint"}, Cmd: []string{"postgres"}}
	img, err := images.RootfsImage(tree, files, cfg, created)
	must(t, err)

	cf, err := img.ConfigFile()
	must(t, err)
	if !reflect.DeepEqual(cf.Config.Entrypoint, cfg.Entrypoint) || !reflect.DeepEqual(cf.Config.Cmd, cfg.Cmd) || cf.Config.User != "65532:65532" {
		t.Errorf("config %+v", cf.Config)
	}
	layers, err := img.Layers()
	must(t, err)
	if len(layers) != 1 {
		t.Fatalf("%d layers, want 1", len(layers))
	}
	rc, err := layers[0].Uncompressed()
	must(t, err)
	defer func() { _ = rc.Close() }()
	modes, links := map[string]int64{}, map[string]string{}
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		must(t, err)
		if hdr.Uid != 0 || hdr.Gid != 0 {
			t.Errorf("%s owned by %d:%d, want root", hdr.Name, hdr.Uid, hdr.Gid)
		}
		modes[hdr.Name] = hdr.Mode
		if hdr.Typeflag == tar.TypeSymlink {
			links[hdr.Name] = hdr.Linkname
		}
	}
	wantModes := map[string]int64{
		"bin/": 0o755, "bin/dash": 0o755, "bin/sh": 0o777,
		"etc/": 0o755, "etc/group": 0o644, "etc/passwd": 0o644, "tmp/": 0o1777,
		"usr/": 0o755, "usr/lib/": 0o755, "usr/lib/tool/": 0o755, "usr/lib/tool/data": 0o640,
		"usr/local/": 0o755, "usr/local/bin/": 0o755, "usr/local/bin/entrypoint": 0o755,
	}
	if !reflect.DeepEqual(modes, wantModes) {
		t.Errorf("entries %v, want %v", modes, wantModes)
	}
	if !reflect.DeepEqual(links, map[string]string{"bin/sh": "dash"}) {
		t.Errorf("symbolic links %v, want bin/sh -> dash", links)
	}
	got, _, err := images.Files(img)
	must(t, err)
	checkAccounts(t, got)

	again, err := images.RootfsImage(tree, files, cfg, created)
	must(t, err)
	d1, err := img.Digest()
	must(t, err)
	d2, err := again.Digest()
	must(t, err)
	if d1 != d2 {
		t.Errorf("rebuilt digest %s, first %s", d2, d1)
	}

	// The tree's own accounts win; a file over one of the tree's is refused; so is a tree
	// without an entrypoint.
	must(t, os.MkdirAll(filepath.Join(tree, "etc"), 0o755))
	must(t, os.WriteFile(filepath.Join(tree, "etc/passwd"), []byte("postgres:x:999:999::/:/bin/sh\n"), 0o644))
	img, err = images.RootfsImage(tree, files, cfg, created)
	must(t, err)
	got, _, err = images.Files(img)
	must(t, err)
	if string(got["etc/passwd"]) != "postgres:x:999:999::/:/bin/sh\n" {
		t.Errorf("/etc/passwd %q, want the tree's", got["etc/passwd"])
	}
	if _, err := images.RootfsImage(tree, []images.File{{Source: entrypoint, Path: "/bin/dash"}}, cfg, created); err == nil {
		t.Error("a file over one of the tree's was accepted")
	}
	if _, err := images.RootfsImage(tree, files, images.Config{}, created); err == nil {
		t.Error("an image without entrypoint or command was accepted")
	}
}
