package images_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/seed1b407122/database-operator/hack/images"
)

// TestStaticImage builds an image of a static binary the way "image-tool static" does for the
// real-node tier (etcd at /usr/local/bin/etcd) and checks its config, its entries and that the
// same input gives the same digest; a dynamically linked binary is refused.
func TestStaticImage(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "hello")
	must(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\nfunc main() {}\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module hello\n"), 0o644))
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	created := time.Unix(1700000000, 0).UTC()
	files := []images.File{{Source: bin, Path: "/usr/local/bin/etcd"}}
	img, err := images.StaticImage(files, images.Config{User: "65532:65532"}, created)
	must(t, err)

	cf, err := img.ConfigFile()
	must(t, err)
	c := cf.Config
	if c.User != "65532:65532" || c.WorkingDir != "/" {
		t.Errorf("User %q WorkingDir %q, want 65532:65532 and /", c.User, c.WorkingDir)
	}
	if !reflect.DeepEqual(c.Entrypoint, []string{"/usr/local/bin/etcd"}) || len(c.Cmd) != 0 {
		t.Errorf("Entrypoint %q Cmd %q, want the first file and no Cmd", c.Entrypoint, c.Cmd)
	}
	if len(c.Env) != 1 || !strings.HasPrefix(c.Env[0], "PATH=") {
		t.Errorf("Env %q, want a PATH", c.Env)
	}
	if !cf.Created.Equal(created) || cf.OS != "linux" || cf.Architecture != "amd64" {
		t.Errorf("created %s platform %s/%s", cf.Created, cf.OS, cf.Architecture)
	}
	got, modes, err := images.Files(img)
	must(t, err)
	want, err := os.ReadFile(bin)
	must(t, err)
	if !bytes.Equal(got["usr/local/bin/etcd"], want) {
		t.Error("/usr/local/bin/etcd differs from the binary")
	}
	wantModes := map[string]int64{
		"etc": 0o755, "etc/group": 0o644, "etc/passwd": 0o644,
		"tmp": 0o1777, "usr": 0o755, "usr/local": 0o755, "usr/local/bin": 0o755, "usr/local/bin/etcd": 0o755,
	}
	if !reflect.DeepEqual(modes, wantModes) {
		t.Errorf("entries %v, want %v", modes, wantModes)
	}
	checkAccounts(t, got)

	again, err := images.StaticImage(files, images.Config{User: "65532:65532"}, created)
	must(t, err)
	d1, err := img.Digest()
	must(t, err)
	d2, err := again.Digest()
	must(t, err)
	if d1 != d2 {
		t.Errorf("rebuilt digest %s, first %s", d2, d1)
	}

	// A binary with a dynamic loader cannot run on an empty base.
	if sh, err := exec.LookPath("sh"); err == nil {
		_, err := images.StaticImage([]images.File{{Source: sh, Path: "/sh"}}, images.Config{}, created)
		if err == nil || !strings.Contains(err.Error(), "not a static executable") {
			t.Errorf("StaticImage(%s) = %v, want a 'not a static executable' error", sh, err)
		}
	}
	if _, err := images.StaticImage([]images.File{{Source: bin, Path: "relative"}}, images.Config{}, created); err == nil {
		t.Error("a relative image path was accepted")
	}
}
