package sbom_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"go.yaml.in/yaml/v3"
	"golang.org/x/mod/modfile"

	"github.com/seed1b407122/database-operator/hack/images"
	"github.com/seed1b407122/database-operator/hack/images/sbom"
)

// root is the repository root, from hack/images/sbom.
const root = "../../.."

func version() string {
	if v := os.Getenv("VERSION"); v != "" {
		return v
	}
	return "0.4.0"
}

func arch() string {
	if a := os.Getenv("ARCH"); a != "" {
		return a
	}
	return runtime.GOARCH
}

// goBinary returns the binary in env (set by make images-test), or builds pkg of the module in
// dir like the Makefile does (static, -trimpath, linux/ARCH).
func goBinary(t *testing.T, env, dir string) string {
	t.Helper()
	if bin := os.Getenv(env); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), filepath.Base(dir))
	start := time.Now()
	cmd := exec.CommandContext(t.Context(), "go", "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build in %s: %v\n%s", dir, err, out)
	}
	t.Logf("built %s (%s unset) in %s", bin, env, time.Since(start).Round(time.Millisecond))
	return bin
}

// goModRequires returns the modules go.mod in dir requires, path → version, after its replace
// directives (a replacement by another module gives that module's version).
func goModRequires(t *testing.T, dir string) (string, map[string]string) {
	t.Helper()
	file := filepath.Join(dir, "go.mod")
	data, err := os.ReadFile(file)
	must(t, err)
	mf, err := modfile.Parse(file, data, nil)
	must(t, err)
	req := map[string]string{}
	for _, r := range mf.Require {
		req[r.Mod.Path] = r.Mod.Version
	}
	for _, r := range mf.Replace {
		if _, ok := req[r.Old.Path]; ok && (r.Old.Version == "" || r.Old.Version == req[r.Old.Path]) && r.New.Version != "" {
			req[r.Old.Path] = r.New.Version
		}
	}
	return mf.Module.Mod.Path, req
}

// linkedModules lists, with "go list -deps", the modules that provide the packages of pkg's
// build for linux/ARCH (the manager's: no test dependency), path → version.
func linkedModules(t *testing.T, dir string) map[string]string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "go", "list", "-deps", "-f", "{{with .Module}}{{if not .Main}}{{.Path}} {{.Version}}{{end}}{{end}}", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch(), "GOWORK=off")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps in %s: %v", dir, err)
	}
	mods := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if p, v, ok := strings.Cut(l, " "); ok {
			mods[p] = v
		}
	}
	return mods
}

// checkModules fails unless got (an SBOM's modules) lists every module of want at its
// version and nothing else, and every version is the one go.mod requires.
func checkModules(t *testing.T, what string, got, want, goMod map[string]string) {
	t.Helper()
	for _, p := range sortedKeys(got) {
		switch req, ok := goMod[p]; {
		case !ok:
			t.Errorf("%s lists %s@%s, which go.mod does not require", what, p, got[p])
		case req != got[p]:
			t.Errorf("%s lists %s@%s, go.mod requires %s", what, p, got[p], req)
		}
		if _, ok := want[p]; !ok {
			t.Errorf("%s lists %s@%s, which the build does not link", what, p, got[p])
		}
	}
	for _, p := range sortedKeys(want) {
		if _, ok := got[p]; !ok {
			t.Errorf("%s misses %s@%s", what, p, want[p])
		}
	}
	if len(got) == 0 {
		t.Errorf("%s lists no module", what)
	}
}

// TestBinarySBOMListsGoModVersions generates the SBOM of the manager (MANAGER_BIN) and of the
// Echo image's shell (ECHO_BIN), each built from its own go.mod, and checks that it lists
// exactly the modules the build links (go list -deps), each at the version go.mod requires,
// and the main module at VERSION. A binary built from another go.mod (a stale MANAGER_BIN, a
// go.mod edited without rebuilding) fails it.
func TestBinarySBOMListsGoModVersions(t *testing.T) {
	for _, c := range []struct{ name, env, dir string }{
		{"manager", "MANAGER_BIN", root},
		{"echo", "ECHO_BIN", filepath.Join(root, "hack", "echo")},
	} {
		t.Run(c.name, func(t *testing.T) {
			bin := goBinary(t, c.env, c.dir)
			bom, err := sbom.Binary(bin, version())
			must(t, err)
			mainPath, req := goModRequires(t, c.dir)
			checkModules(t, c.name+" SBOM", sbom.Modules(bom), linkedModules(t, c.dir), req)
			if m := bom.Metadata.Component; m.Name != mainPath || m.Version != version() || m.Type != cdx.ComponentTypeApplication {
				t.Errorf("main component %s %s (%s), want %s %s (application)", m.Name, m.Version, m.Type, mainPath, version())
			}
			// The SBOM round-trips through its JSON, and the same binary gives the same bytes.
			var a, b bytes.Buffer
			must(t, sbom.Encode(&a, bom))
			again, err := sbom.Binary(bin, version())
			must(t, err)
			must(t, sbom.Encode(&b, again))
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Error("two SBOMs of the same binary differ")
			}
			decoded, err := sbom.Decode(&a)
			must(t, err)
			if len(sbom.Modules(decoded)) != len(sbom.Modules(bom)) {
				t.Error("the decoded SBOM lists other modules")
			}
		})
	}
}

// TestImageSBOM builds the operator image (MANAGER_BIN as /manager) and the bundle image
// (bundle/) and checks their SBOMs: the image by digest; /manager an application with the
// manager's modules; every other file, and every file of bundle/, with its SHA-256.
func TestImageSBOM(t *testing.T) {
	created := time.Unix(0, 0).UTC()
	manager := goBinary(t, "MANAGER_BIN", root)
	op, err := images.OperatorImage(manager, filepath.Join(root, "Dockerfile"), arch(), created)
	must(t, err)
	bom, err := sbom.Image(op, "quay.io/seed1b407122/database-operator", version())
	must(t, err)
	checkImage(t, bom, op)
	_, req := goModRequires(t, root)
	checkModules(t, "operator image SBOM", sbom.Modules(bom), linkedModules(t, root), req)
	comps := byName(bom)
	if c := comps["/manager"]; c.Type != cdx.ComponentTypeApplication || c.Version != version() || c.Components == nil {
		t.Errorf("/manager: %+v, want an application at %s with its modules", c, version())
	}
	for _, f := range []string{"/etc/passwd", "/etc/group"} {
		if c := comps[f]; c.Type != cdx.ComponentTypeFile || c.Hashes == nil {
			t.Errorf("%s: %+v, want a file with its hash", f, c)
		}
	}

	bundleDir := filepath.Join(root, "bundle")
	bundle, err := images.BundleImage(bundleDir, created)
	must(t, err)
	bom, err = sbom.Image(bundle, "quay.io/seed1b407122/database-operator-bundle", version())
	must(t, err)
	checkImage(t, bom, bundle)
	comps = byName(bom)
	want := map[string]string{}
	must(t, filepath.WalkDir(bundleDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(bundleDir, p)
		sum := sha256.Sum256(data)
		want["/"+filepath.ToSlash(rel)] = hex.EncodeToString(sum[:])
		return nil
	}))
	for name, sum := range want {
		c, ok := comps[name]
		if !ok || c.Hashes == nil || (*c.Hashes)[0].Value != sum {
			t.Errorf("bundle SBOM: %s missing or with another SHA-256 than %s", name, sum)
		}
	}
	// Besides the files: the images the CSV deploys (relatedImages), named, not contained.
	var csv struct {
		Spec struct {
			RelatedImages []struct{ Image string } `yaml:"relatedImages"`
		}
	}
	data, err := os.ReadFile(filepath.Join(bundleDir, "manifests", "database-operator.clusterserviceversion.yaml"))
	must(t, err)
	must(t, yaml.Unmarshal(data, &csv))
	var wantImages, gotImages []string
	for _, r := range csv.Spec.RelatedImages {
		wantImages = append(wantImages, r.Image)
	}
	files := 0
	for _, c := range *bom.Components {
		switch {
		case c.Type == cdx.ComponentTypeFile:
			files++
		case c.Type == cdx.ComponentTypeContainer && c.Scope == cdx.ScopeExcluded:
			gotImages = append(gotImages, c.Name+"@"+c.Version)
		default:
			t.Errorf("bundle SBOM: unexpected component %s (%s)", c.Name, c.Type)
		}
	}
	if files != len(want) {
		t.Errorf("bundle SBOM lists %d files, bundle/ has %d", files, len(want))
	}
	if len(wantImages) == 0 || !reflect.DeepEqual(gotImages, wantImages) {
		t.Errorf("bundle SBOM names the images %v, the CSV's relatedImages are %v", gotImages, wantImages)
	}
	if n := len(sbom.Modules(bom)); n != 0 {
		t.Errorf("bundle SBOM lists %d Go modules, want none", n)
	}
}

// checkImage checks the SBOM's subject: the image, as a container at its digest.
func checkImage(t *testing.T, bom *cdx.BOM, img v1.Image) {
	t.Helper()
	d, err := img.Digest()
	must(t, err)
	if m := bom.Metadata.Component; m.Type != cdx.ComponentTypeContainer || m.Version != d.String() ||
		!strings.Contains(m.PackageURL, strings.ReplaceAll(d.String(), ":", "%3A")) {
		t.Errorf("metadata.component %+v, want the container at %s", m, d)
	}
}

func byName(bom *cdx.BOM) map[string]cdx.Component {
	m := map[string]cdx.Component{}
	for _, c := range *bom.Components {
		m[c.Name] = c
	}
	return m
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
