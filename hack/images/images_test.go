package images_test

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/seed1b407122/database-operator/hack/images"
)

// The operator image's config, as the Dockerfile's final stage sets it (kept literal here, so a
// Dockerfile parsing mistake fails the test instead of being mirrored by it).
var wantOperatorLabels = map[string]string{
	"org.opencontainers.image.title":       "database-operator",
	"org.opencontainers.image.description": "Runs stateful DatabaseClusters on Kubernetes",
	"org.opencontainers.image.source":      "https://github.com/seed1b407122/database-operator",
	"org.opencontainers.image.licenses":    "Apache-2.0",
}

const packageName = "database-operator"

type env struct {
	root, version, arch, registry string
	created                       time.Time
	manager                       string
	opImg, bundleImg, catalogImg  v1.Image
	opRef, bundleRef, catalogRef  string
}

// TestImages builds the three images, pushes them to an in-process registry on 127.0.0.1 and
// reads them back: configs, labels, files, reproducibility, and "opm render" of the bundle and
// catalog images (when OPM is set).
func TestImages(t *testing.T) {
	e := setup(t)
	t.Run("operator", func(t *testing.T) { testOperator(t, e) })
	t.Run("bundle", func(t *testing.T) { testBundle(t, e) })
	t.Run("catalog", func(t *testing.T) { testCatalog(t, e) })
	t.Run("reproducible", func(t *testing.T) { testReproducible(t, e) })
	t.Run("opm-render-bundle", func(t *testing.T) { testOpmRenderBundle(t, e) })
	t.Run("opm-render-catalog", func(t *testing.T) { testOpmRenderCatalog(t, e) })
}

func setup(t *testing.T) *env {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	must(t, err)
	e := &env{root: root, version: getenv("VERSION", "0.2.0"), arch: getenv("ARCH", runtime.GOARCH)}
	e.created, err = images.Created()
	must(t, err)
	e.manager = managerBinary(t, e)

	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	e.registry = strings.TrimPrefix(srv.URL, "http://")
	if !strings.HasPrefix(e.registry, "127.0.0.1:") {
		t.Fatalf("registry listens on %s, want 127.0.0.1", e.registry)
	}

	start := time.Now()
	e.opImg, err = images.OperatorImage(e.manager, filepath.Join(root, "Dockerfile"), e.arch, e.created)
	must(t, err)
	e.bundleImg, err = images.BundleImage(filepath.Join(root, "bundle"), e.created)
	must(t, err)
	e.catalogImg, err = images.CatalogImage(filepath.Join(root, "catalog"), filepath.Join(root, "catalog.Dockerfile"), nil, "", e.created)
	must(t, err)
	t.Logf("built 3 images in %s", time.Since(start).Round(time.Millisecond))

	start = time.Now()
	e.opRef = e.registry + "/database-operator:" + e.version
	e.bundleRef = e.registry + "/database-operator-bundle:" + e.version
	e.catalogRef = e.registry + "/database-operator-catalog:" + e.version
	for ref, img := range map[string]v1.Image{e.opRef: e.opImg, e.bundleRef: e.bundleImg, e.catalogRef: e.catalogImg} {
		_, err := images.Push(t.Context(), img, ref, false)
		must(t, err)
	}
	t.Logf("pushed 3 images to %s in %s", e.registry, time.Since(start).Round(time.Millisecond))
	return e
}

// managerBinary returns MANAGER_BIN, or builds the manager like the Dockerfile does.
func managerBinary(t *testing.T, e *env) string {
	if bin := os.Getenv("MANAGER_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "manager")
	start := time.Now()
	cmd := exec.CommandContext(t.Context(), "go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, ".")
	cmd.Dir = e.root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+e.arch)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go build the manager: %v\n%s", err, out)
	}
	t.Logf("built the static manager (MANAGER_BIN unset) in %s", time.Since(start).Round(time.Millisecond))
	return bin
}

// pull reads ref back from the registry and returns its config and files.
func pull(t *testing.T, ref string) (v1.Image, *v1.ConfigFile, map[string][]byte, map[string]int64) {
	t.Helper()
	img, err := images.Pull(t.Context(), ref, false)
	must(t, err)
	mt, err := img.MediaType()
	must(t, err)
	if mt != types.OCIManifestSchema1 {
		t.Errorf("%s: manifest media type %s, want %s", ref, mt, types.OCIManifestSchema1)
	}
	cf, err := img.ConfigFile()
	must(t, err)
	files, modes, err := images.Files(img)
	must(t, err)
	return img, cf, files, modes
}

func testOperator(t *testing.T, e *env) {
	_, cf, files, modes := pull(t, e.opRef)
	c := cf.Config
	if c.User != "65532:65532" {
		t.Errorf("User = %q, want 65532:65532", c.User)
	}
	if !reflect.DeepEqual(c.Entrypoint, []string{"/manager"}) || len(c.Cmd) != 0 {
		t.Errorf("Entrypoint = %q, Cmd = %q, want [/manager] and none", c.Entrypoint, c.Cmd)
	}
	if c.WorkingDir != "/" {
		t.Errorf("WorkingDir = %q, want /", c.WorkingDir)
	}
	if !reflect.DeepEqual(c.Labels, wantOperatorLabels) {
		t.Errorf("Labels = %v, want %v", c.Labels, wantOperatorLabels)
	}
	if cf.OS != "linux" || cf.Architecture != e.arch {
		t.Errorf("platform %s/%s, want linux/%s", cf.OS, cf.Architecture, e.arch)
	}
	want, err := os.ReadFile(e.manager)
	must(t, err)
	if !bytes.Equal(files["manager"], want) {
		t.Errorf("/manager differs from %s (%d bytes, want %d)", e.manager, len(files["manager"]), len(want))
	}
	if modes["manager"] != 0o755 || modes["tmp"] != 0o1777 {
		t.Errorf("modes /manager %o /tmp %o, want 755 and 1777", modes["manager"], modes["tmp"])
	}
	// No base: no shell; only the binary, /tmp and distroless' accounts.
	if got := images.SortedKeys(modes); !reflect.DeepEqual(got, []string{"etc", "etc/group", "etc/passwd", "manager", "tmp"}) {
		t.Errorf("image entries %q, want [etc etc/group etc/passwd manager tmp]", got)
	}
	checkAccounts(t, files)
	checkStatic(t, files["manager"])
}

// checkAccounts fails unless the image's /etc/passwd makes 65532 the user nonroot with primary
// group 65532, which /etc/group names: containerd takes the gid of a numeric USER from there.
func checkAccounts(t *testing.T, files map[string][]byte) {
	t.Helper()
	if !strings.Contains(string(files["etc/passwd"]), "\nnonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd has no nonroot 65532:65532:\n%s", files["etc/passwd"])
	}
	if !strings.Contains(string(files["etc/group"]), "\nnonroot:x:65532:") {
		t.Errorf("/etc/group has no nonroot 65532:\n%s", files["etc/group"])
	}
}

// checkStatic fails unless bin is a static ELF executable: it runs on an empty base.
func checkStatic(t *testing.T, bin []byte) {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(bin))
	must(t, err)
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("/manager has a %s program header: not static (CGO_ENABLED=0?)", p.Type)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("/manager needs shared libraries %q", libs)
	}
}

func testBundle(t *testing.T, e *env) {
	_, cf, files, _ := pull(t, e.bundleRef)
	dir := filepath.Join(e.root, "bundle")
	annotations, err := images.ReadAnnotations(filepath.Join(dir, "metadata", "annotations.yaml"))
	must(t, err)
	if !reflect.DeepEqual(cf.Config.Labels, annotations) {
		t.Errorf("labels %v\nwant annotations.yaml %v", cf.Config.Labels, annotations)
	}
	if got := cf.Config.Labels["operators.operatorframework.io.bundle.package.v1"]; got != packageName {
		t.Errorf("package label %q, want %s", got, packageName)
	}
	// bundle.Dockerfile (generated by "make bundle") must agree with annotations.yaml, and copy
	// exactly what the image holds.
	st, err := images.ParseDockerfile(filepath.Join(e.root, "bundle.Dockerfile"))
	must(t, err)
	if !reflect.DeepEqual(st.Labels, annotations) {
		t.Errorf("bundle.Dockerfile labels %v\nwant annotations.yaml %v", st.Labels, annotations)
	}
	for _, c := range st.Copies {
		if len(c) != 2 || !strings.HasPrefix(c[0], "bundle/") ||
			strings.Trim(strings.TrimPrefix(c[0], "bundle/"), "/") != strings.Trim(c[1], "/") {
			t.Errorf("bundle.Dockerfile COPY %q: want COPY bundle/X /X/", c)
		}
	}
	compareTree(t, dir, "", files)
}

func testCatalog(t *testing.T, e *env) {
	_, cf, files, _ := pull(t, e.catalogRef)
	want := map[string]string{images.CatalogConfigsLabel: "/configs"}
	if !reflect.DeepEqual(cf.Config.Labels, want) {
		t.Errorf("labels %v, want %v", cf.Config.Labels, want)
	}
	st, err := images.ParseDockerfile(filepath.Join(e.root, "catalog.Dockerfile"))
	must(t, err)
	if !reflect.DeepEqual(st.Labels, want) {
		t.Errorf("catalog.Dockerfile labels %v, want %v", st.Labels, want)
	}
	// Without the opm base there is nothing to run.
	if len(cf.Config.Entrypoint) != 0 {
		t.Errorf("Entrypoint %q, want none (no opm base)", cf.Config.Entrypoint)
	}
	compareTree(t, filepath.Join(e.root, "catalog"), "configs", files)
}

// compareTree checks that the image files under prefix are exactly the files of dir, byte for byte.
func compareTree(t *testing.T, dir, prefix string, files map[string][]byte) {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(filepath.Join(prefix, rel))
		seen[name] = true
		want, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		got, ok := files[name]
		switch {
		case !ok:
			t.Errorf("image lacks /%s", name)
		case !bytes.Equal(got, want):
			t.Errorf("/%s differs from %s", name, p)
		}
		return nil
	})
	must(t, err)
	for name := range files {
		if !seen[name] {
			t.Errorf("image has /%s, not in %s", name, dir)
		}
	}
	if len(seen) == 0 {
		t.Errorf("%s is empty", dir)
	}
}

// testReproducible rebuilds the images and expects the digests the registry holds.
func testReproducible(t *testing.T, e *env) {
	type build func() (v1.Image, error)
	for ref, b := range map[string]build{
		e.opRef: func() (v1.Image, error) {
			return images.OperatorImage(e.manager, filepath.Join(e.root, "Dockerfile"), e.arch, e.created)
		},
		e.bundleRef: func() (v1.Image, error) { return images.BundleImage(filepath.Join(e.root, "bundle"), e.created) },
		e.catalogRef: func() (v1.Image, error) {
			return images.CatalogImage(filepath.Join(e.root, "catalog"), filepath.Join(e.root, "catalog.Dockerfile"), nil, "", e.created)
		},
	} {
		img, err := b()
		must(t, err)
		got, err := img.Digest()
		must(t, err)
		remote, err := images.Pull(t.Context(), ref, false)
		must(t, err)
		want, err := remote.Digest()
		must(t, err)
		if got != want {
			t.Errorf("%s: rebuilt digest %s, registry holds %s", ref, got, want)
		}
	}
}

// opm runs $OPM with HOME pointing at a containers policy that accepts anything (opm's image
// pulls need one), and decodes the stream of JSON objects it prints.
func opm(t *testing.T, args ...string) []map[string]any {
	t.Helper()
	bin := os.Getenv("OPM")
	if bin == "" {
		t.Skip("OPM is unset: set OPM to an opm binary (make images-test builds it with 'make opm') to run opm render against the images")
	}
	home := t.TempDir()
	policy := filepath.Join(home, ".config", "containers", "policy.json")
	must(t, os.MkdirAll(filepath.Dir(policy), 0o755))
	must(t, os.WriteFile(policy, []byte(`{"default":[{"type":"insecureAcceptAnything"}]}`), 0o644))
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"), "TMPDIR="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, stderr.String())
	}
	t.Logf("opm %s: %s", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	var objs []map[string]any
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var o map[string]any
		if err := dec.Decode(&o); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("opm output: %v\n%s", err, out)
		}
		objs = append(objs, o)
	}
	return objs
}

func testOpmRenderBundle(t *testing.T, e *env) {
	objs := opm(t, "render", "--use-http", e.bundleRef, "-o", "json")
	var bundles []map[string]any
	for _, o := range objs {
		if o["schema"] == "olm.bundle" {
			bundles = append(bundles, o)
		}
	}
	if len(bundles) != 1 {
		t.Fatalf("opm render %s: %d olm.bundle objects, want 1: %v", e.bundleRef, len(bundles), objs)
	}
	b := bundles[0]
	wantName := fmt.Sprintf("%s.v%s", packageName, e.version)
	if b["name"] != wantName || b["package"] != packageName || b["image"] != e.bundleRef {
		t.Errorf("olm.bundle name=%v package=%v image=%v, want %s, %s, %s",
			b["name"], b["package"], b["image"], wantName, packageName, e.bundleRef)
	}
}

// testOpmRenderCatalog renders the catalog image and expects what rendering catalog/ gives.
func testOpmRenderCatalog(t *testing.T, e *env) {
	fromImage := opm(t, "render", "--use-http", e.catalogRef, "-o", "json")
	fromDir := opm(t, "render", filepath.Join(e.root, "catalog"), "-o", "json")
	if !reflect.DeepEqual(fromImage, fromDir) {
		t.Errorf("opm render of %s (%d objects) differs from opm render catalog/ (%d objects)",
			e.catalogRef, len(fromImage), len(fromDir))
	}
	var pkg bool
	var bundles []string
	for _, o := range fromImage {
		switch o["schema"] {
		case "olm.package":
			pkg = pkg || o["name"] == packageName
		case "olm.bundle":
			bundles = append(bundles, fmt.Sprint(o["name"]))
		}
	}
	want := fmt.Sprintf("%s.v%s", packageName, e.version)
	if !pkg || !strings.Contains(strings.Join(bundles, " "), want) {
		t.Errorf("catalog image: olm.package %s found=%v, bundles %q, want one named %s", packageName, pkg, bundles, want)
	}
}

func getenv(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// programImage is a static image holding one file, /bin/program, with content.
func programImage(t *testing.T, content string) v1.Image {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "program")
	must(t, os.WriteFile(bin, []byte(content), 0o755))
	img, err := images.StaticImage([]images.File{{Source: bin, Path: "/bin/program"}}, images.Config{}, time.Unix(0, 0))
	must(t, err)
	return img
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
