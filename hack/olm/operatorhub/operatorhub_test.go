package operatorhub_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/template/basic"
	"sigs.k8s.io/yaml"

	"github.com/seed1b407122/database-operator/hack/olm/operatorhub"
)

const (
	repoRoot = "../../.."
	pkg      = "database-operator"
)

var catalogNames = []string{"v4.18", "v4.19", "v4.20", "v4.21"}

// options are the Makefile's: bundle/ at its CSV's version, every released bundle, catalog/.
func options(t *testing.T) (operatorhub.Options, map[string]bool, string) {
	t.Helper()
	b, err := manifests.GetBundleFromDir(filepath.Join(repoRoot, "bundle"))
	must(t, err)
	version := b.CSV.Spec.Version.String()
	o := operatorhub.Options{
		Package:      pkg,
		Bundles:      map[string]string{version: filepath.Join(repoRoot, "bundle")},
		Catalog:      filepath.Join(repoRoot, "catalog", pkg, "index.yaml"),
		CatalogNames: catalogNames,
		Reviewers:    []string{"seed1b407122"},
	}
	released := map[string]bool{version: false}
	dirs, err := os.ReadDir(filepath.Join(repoRoot, "hack/olm/released"))
	must(t, err)
	for _, d := range dirs {
		o.Bundles[d.Name()] = filepath.Join(repoRoot, "hack/olm/released", d.Name())
		released[d.Name()] = true
	}
	return o, released, version
}

// TestExport exports bundle/ and the released bundles, validates the export (the validators of
// make bundle-validate, ci.yaml, the template, the catalogs), and checks it: each version's
// manifests/ and metadata/ exactly the bundle's, ci.yaml's FBC settings, the template rendering
// to catalog/, and "opm validate" of every catalog when OPM is set.
func TestExport(t *testing.T) {
	o, released, version := options(t)
	out := t.TempDir()
	must(t, operatorhub.Export(out, o))
	problems, err := operatorhub.Validate(out, pkg, released)
	must(t, err)
	for _, p := range problems {
		t.Errorf("validate: %s", p)
	}
	op := operatorhub.OperatorDir(out, pkg)

	// Each version directory is its bundle's manifests/ and metadata/, nothing else.
	for v, dir := range o.Bundles {
		want := map[string][]byte{}
		for _, sub := range operatorhub.BundleDirs {
			for name, data := range readTree(t, filepath.Join(dir, sub)) {
				want[filepath.Join(sub, name)] = data
			}
		}
		sameFiles(t, v, readTree(t, filepath.Join(op, v)), want)
	}
	if _, err := os.Stat(filepath.Join(op, version, "manifests", pkg+".clusterserviceversion.yaml")); err != nil {
		t.Errorf("the new bundle's CSV: %v", err)
	}

	ci, err := operatorhub.ReadCIConfig(filepath.Join(op, "ci.yaml"))
	must(t, err)
	want := operatorhub.CIConfig{UpdateGraph: "replaces-mode", Reviewers: o.Reviewers}
	want.FBC.Enabled = true
	want.FBC.CatalogMapping = []operatorhub.CatalogMapping{{TemplateName: "basic.yaml", CatalogNames: catalogNames, Type: "olm.template.basic"}}
	if !reflect.DeepEqual(ci, want) {
		t.Errorf("ci.yaml = %+v, want %+v", ci, want)
	}

	// The template renders to catalog/: its bundles, by image, are catalog/'s, rendered as
	// "opm alpha render-template basic" would from the bundle images.
	catalogCfg, err := declcfg.LoadFS(context.Background(), os.DirFS(filepath.Join(repoRoot, "catalog")))
	must(t, err)
	byImage := map[string]declcfg.Bundle{}
	for _, b := range catalogCfg.Bundles {
		byImage[b.Image] = b
	}
	data, err := os.ReadFile(filepath.Join(op, "catalog-templates", "basic.yaml"))
	must(t, err)
	var tmpl basic.BasicTemplateData
	must(t, yaml.Unmarshal(data, &tmpl))
	rendered, err := declcfg.LoadSlice(tmpl.Entries)
	must(t, err)
	for i, b := range rendered.Bundles {
		full, ok := byImage[b.Image]
		if !ok {
			t.Fatalf("template bundle %s is not in catalog/", b.Image)
		}
		rendered.Bundles[i] = full
	}
	if !reflect.DeepEqual(rendered.Packages, catalogCfg.Packages) || !reflect.DeepEqual(rendered.Channels, catalogCfg.Channels) ||
		!reflect.DeepEqual(rendered.Deprecations, catalogCfg.Deprecations) || len(rendered.Bundles) != len(catalogCfg.Bundles) {
		t.Error("the template does not render to catalog/")
	}
	catalog, err := os.ReadFile(o.Catalog)
	must(t, err)
	for _, c := range catalogNames {
		got, err := os.ReadFile(filepath.Join(out, "catalogs", c, pkg, "catalog.yaml"))
		must(t, err)
		if !bytes.Equal(got, catalog) {
			t.Errorf("catalogs/%s/%s/catalog.yaml differs from catalog/", c, pkg)
		}
		if opm := os.Getenv("OPM"); opm != "" {
			if out, err := exec.Command(opm, "validate", filepath.Join(out, "catalogs", c)).CombinedOutput(); err != nil {
				t.Errorf("opm validate catalogs/%s: %v\n%s", c, err, out)
			}
		}
	}
}

// TestValidateFindsProblems breaks an export and expects Validate to say so: a CSV without a
// description (the project's validator), a catalog mapped twice, a template bundle with more
// than its image.
func TestValidateFindsProblems(t *testing.T) {
	o, released, version := options(t)
	out := t.TempDir()
	must(t, operatorhub.Export(out, o))
	op := operatorhub.OperatorDir(out, pkg)
	csv := filepath.Join(op, version, "manifests", pkg+".clusterserviceversion.yaml")
	data, err := os.ReadFile(csv)
	must(t, err)
	var doc map[string]any
	must(t, yaml.Unmarshal(data, &doc))
	delete(doc["spec"].(map[string]any), "description")
	data, err = yaml.Marshal(doc)
	must(t, err)
	must(t, os.WriteFile(csv, data, 0o644))
	ci := filepath.Join(op, "ci.yaml")
	data, err = os.ReadFile(ci)
	must(t, err)
	data = bytes.Replace(data, []byte(`["v4.18", `), []byte(`["v4.18", "v4.18", `), 1)
	must(t, os.WriteFile(ci, data, 0o644))
	tmpl := filepath.Join(op, "catalog-templates", "basic.yaml")
	data, err = os.ReadFile(tmpl)
	must(t, err)
	data = bytes.Replace(data, []byte("  schema: olm.bundle\n"), []byte("  schema: olm.bundle\n  package: database-operator\n"), 1)
	must(t, os.WriteFile(tmpl, data, 0o644))

	problems, err := operatorhub.Validate(out, pkg, released)
	must(t, err)
	all := strings.Join(problems, "\n")
	for _, want := range []string{
		version + ": ", "csv.Spec.Description is empty",
		"ci.yaml: catalog v4.18 is mapped to basic.yaml and basic.yaml",
		"template basic.yaml: a bundle entry has more than its image",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("Validate did not report %q; it reported:\n%s", want, all)
		}
	}
}

func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	must(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files[rel], err = os.ReadFile(p)
		return err
	}))
	return files
}

func sameFiles(t *testing.T, what string, got, want map[string][]byte) {
	t.Helper()
	for name, g := range got {
		if w, ok := want[name]; !ok {
			t.Errorf("%s: %s is not in the bundle", what, name)
		} else if !bytes.Equal(g, w) {
			t.Errorf("%s: %s differs from the bundle's", what, name)
		}
	}
	for name := range want {
		if _, ok := got[name]; !ok {
			t.Errorf("%s: %s is missing", what, name)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
