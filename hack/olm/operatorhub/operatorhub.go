// Package operatorhub exports the bundle in the layout of the community operator repositories
// (k8s-operatorhub/community-operators for OperatorHub.io, redhat-openshift-ecosystem/
// community-operators-prod for OpenShift's embedded OperatorHub):
//
//	operators/<package>/<version>/manifests/...      one directory per bundle version
//	operators/<package>/<version>/metadata/annotations.yaml
//	operators/<package>/ci.yaml                       the operator's pipeline settings
//	operators/<package>/catalog-templates/basic.yaml  the FBC catalog template (olm.template.basic)
//	catalogs/<catalog>/<package>/catalog.yaml         the catalog the template renders to, per catalog
//
// ci.yaml turns on the pipelines' file-based catalog workflow (fbc.enabled) and maps the
// template to the catalogs it renders (fbc.catalog_mapping: template_name, catalog_names, type),
// as the operator-pipelines' documentation ("Operator Publishing / Review settings", "FBC
// workflow") and real submissions have it; it also names the reviewers whose pull requests merge
// without a maintainer, and updateGraph: replaces-mode for a pipeline that builds its catalog
// without FBC (the CSVs chain with replaces).
package operatorhub

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/template/basic"
	"sigs.k8s.io/yaml"

	"github.com/seed1b407122/database-operator/hack/olm/validate"
)

// TemplateName is the catalog template's file under catalog-templates/, and TemplateType its
// type in ci.yaml's catalog_mapping.
const (
	TemplateName = "basic.yaml"
	TemplateType = "olm.template.basic"
)

// BundleDirs are the directories of a bundle that the repositories take: the bundle image's
// tests/scorecard stays out (the pipelines run their own scorecard).
var BundleDirs = []string{"manifests", "metadata"}

// Options say what Export writes.
type Options struct {
	// Package is the OLM package (the operator's directory under operators/).
	Package string
	// Bundles are the bundle directories to export, by version (bundle/ at VERSION, and the
	// released ones the catalog still serves).
	Bundles map[string]string
	// Catalog is the package's rendered file-based catalog (catalog/<package>/index.yaml): the
	// template is made from it (bundles by image only, as "opm alpha convert-template basic"
	// does), and it is what the template renders to in each catalog.
	Catalog string
	// CatalogNames are the catalogs of the FBC workflow (e.g. v4.18: OpenShift versions).
	CatalogNames []string
	// Reviewers are GitHub users whose pull requests on the operator are merged without a
	// maintainer's review.
	Reviewers []string
}

// CIConfig is ci.yaml.
type CIConfig struct {
	FBC struct {
		Enabled        bool             `json:"enabled"`
		CatalogMapping []CatalogMapping `json:"catalog_mapping"`
	} `json:"fbc"`
	UpdateGraph string   `json:"updateGraph,omitempty"`
	Reviewers   []string `json:"reviewers,omitempty"`
}

// CatalogMapping maps one template to the catalogs it renders.
type CatalogMapping struct {
	TemplateName string   `json:"template_name"`
	CatalogNames []string `json:"catalog_names"`
	Type         string   `json:"type"`
}

// OperatorDir is the operator's directory of an export in out.
func OperatorDir(out, pkg string) string { return filepath.Join(out, "operators", pkg) }

// Export replaces out with the layout (see the package documentation).
func Export(out string, o Options) error {
	if o.Package == "" || len(o.Bundles) == 0 || o.Catalog == "" || len(o.CatalogNames) == 0 {
		return errors.New("package, bundles, catalog and catalog names are required")
	}
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	op := OperatorDir(out, o.Package)
	if err := copyBundles(op, o.Bundles); err != nil {
		return err
	}
	catalog, err := os.ReadFile(o.Catalog)
	if err != nil {
		return err
	}
	tmpl, err := basic.FromReader(bytes.NewReader(catalog))
	if err != nil {
		return fmt.Errorf("%s: %w", o.Catalog, err)
	}
	data, err := yaml.Marshal(tmpl)
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(op, "catalog-templates", TemplateName), data); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(op, "ci.yaml"), ciYAML(o)); err != nil {
		return err
	}
	for _, c := range o.CatalogNames {
		if err := writeFile(filepath.Join(out, "catalogs", c, o.Package, "catalog.yaml"), catalog); err != nil {
			return err
		}
	}
	return nil
}

// copyBundles copies the BundleDirs of each bundle (by version) to op/<version>.
func copyBundles(op string, bundles map[string]string) error {
	for v, dir := range bundles {
		for _, sub := range BundleDirs {
			if err := copyTree(filepath.Join(dir, sub), filepath.Join(op, v, sub)); err != nil {
				return err
			}
		}
	}
	return nil
}

// ciYAML is ci.yaml: the FBC workflow with the basic template mapped to every catalog, the
// update graph of a pipeline without FBC, the reviewers.
func ciYAML(o Options) []byte {
	var b strings.Builder
	b.WriteString("---\n# Generated by \"make operatorhub\" (hack/olm/cmd/operatorhub); docs/release.md, \"OperatorHub submission\".\n")
	b.WriteString("# The file-based catalog workflow: catalog-templates/" + TemplateName + " renders catalogs/<catalog>/" + o.Package + "/catalog.yaml.\n")
	b.WriteString("fbc:\n  enabled: true\n  catalog_mapping:\n")
	fmt.Fprintf(&b, "    - template_name: %s\n      catalog_names: [%s]\n      type: %s\n", TemplateName, quoted(o.CatalogNames), TemplateType)
	b.WriteString("# For a pipeline that builds its catalog without FBC: each CSV names the one it replaces.\nupdateGraph: replaces-mode\n")
	if len(o.Reviewers) > 0 {
		b.WriteString("# GitHub users whose pull requests on this operator merge without a maintainer's review.\nreviewers:\n")
		for _, r := range o.Reviewers {
			fmt.Fprintf(&b, "  - %s\n", r)
		}
	}
	return []byte(b.String())
}

func quoted(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// Validate checks an export in out: every bundle version directory with the validators of
// "make bundle-validate" (vals: validate.Validators for the new bundle, validate.Suite for the
// released ones, by version; a version missing from vals gets validate.Validators), ci.yaml's
// FBC settings, the template (it parses as olm.template.basic, its bundles are named by image
// only) and every catalog (loads, and is a valid model, as "opm validate" checks). It returns
// the problems found, one a line; the error is for an export that cannot be read.
func Validate(out, pkg string, vals map[string]bool) ([]string, error) {
	op := OperatorDir(out, pkg)
	problems, err := validateBundles(op, pkg, vals)
	if err != nil {
		return nil, err
	}
	ci, err := ReadCIConfig(filepath.Join(op, "ci.yaml"))
	if err != nil {
		return nil, err
	}
	problems = append(problems, checkCIConfig(ci, op)...)
	for _, m := range ci.FBC.CatalogMapping {
		for _, c := range m.CatalogNames {
			if err := validateCatalog(filepath.Join(out, "catalogs", c)); err != nil {
				problems = append(problems, fmt.Sprintf("catalog %s: %v", c, err))
			}
		}
	}
	return problems, nil
}

// validateBundles validates every version directory of op (see Validate).
func validateBundles(op, pkg string, vals map[string]bool) ([]string, error) {
	entries, err := os.ReadDir(op)
	if err != nil {
		return nil, err
	}
	var problems []string
	versions := 0
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "catalog-templates" {
			continue
		}
		versions++
		v := validate.Validators
		if vals[e.Name()] {
			v = validate.Suite
		}
		problems = append(problems, checkAnnotations(filepath.Join(op, e.Name()), pkg)...)
		r, err := validate.BundleWith(filepath.Join(op, e.Name()), v)
		if err != nil {
			return nil, err
		}
		for _, m := range append(r.Errors, r.Warnings...) {
			problems = append(problems, e.Name()+": "+m)
		}
	}
	if versions == 0 {
		problems = append(problems, op+": no bundle version directory")
	}
	return problems, nil
}

// validateCatalog loads the file-based catalog in dir and validates its model, as "opm
// validate" does.
func validateCatalog(dir string) error {
	cfg, err := declcfg.LoadFS(context.Background(), os.DirFS(dir))
	if err != nil {
		return err
	}
	m, err := declcfg.ConvertToModel(*cfg)
	if err != nil {
		return err
	}
	return m.Validate()
}

// PackageAnnotation names a bundle's package in metadata/annotations.yaml.
const PackageAnnotation = "operators.operatorframework.io.bundle.package.v1"

// checkAnnotations checks that the bundle in dir has metadata/annotations.yaml naming pkg (the
// pipelines' check_operator_name compares it with the CSV's name).
func checkAnnotations(dir, pkg string) []string {
	data, err := os.ReadFile(filepath.Join(dir, "metadata", "annotations.yaml"))
	if err != nil {
		return []string{fmt.Sprintf("%s: %v", filepath.Base(dir), err)}
	}
	var doc struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return []string{fmt.Sprintf("%s: metadata/annotations.yaml: %v", filepath.Base(dir), err)}
	}
	if got := doc.Annotations[PackageAnnotation]; got != pkg {
		return []string{fmt.Sprintf("%s: metadata/annotations.yaml names package %q, want %q", filepath.Base(dir), got, pkg)}
	}
	return nil
}

// ReadCIConfig reads ci.yaml strictly: an unknown key is an error.
func ReadCIConfig(file string) (CIConfig, error) {
	var ci CIConfig
	data, err := os.ReadFile(file)
	if err != nil {
		return ci, err
	}
	if err := yaml.UnmarshalStrict(data, &ci); err != nil {
		return ci, fmt.Errorf("%s: %w", file, err)
	}
	return ci, nil
}

// checkCIConfig checks the FBC settings as the pipelines' static checks do: FBC on, each
// template under catalog-templates/ of a known type and a basic template's bundles by image
// only, no catalog mapped twice (check_catalog_usage_ci_config), updateGraph one of the two
// modes (check_ci_upgrade_graph).
func checkCIConfig(ci CIConfig, op string) []string {
	var problems []string
	if !ci.FBC.Enabled {
		problems = append(problems, "ci.yaml: fbc.enabled is not true")
	}
	if len(ci.FBC.CatalogMapping) == 0 {
		problems = append(problems, "ci.yaml: fbc.catalog_mapping is empty")
	}
	if ci.UpdateGraph != "" && ci.UpdateGraph != "replaces-mode" && ci.UpdateGraph != "semver-mode" {
		problems = append(problems, fmt.Sprintf("ci.yaml: updateGraph %q is neither replaces-mode nor semver-mode", ci.UpdateGraph))
	}
	seen := map[string]string{}
	for _, m := range ci.FBC.CatalogMapping {
		if m.Type != TemplateType && m.Type != "olm.semver" {
			problems = append(problems, fmt.Sprintf("ci.yaml: template %s has type %q", m.TemplateName, m.Type))
		}
		if len(m.CatalogNames) == 0 {
			problems = append(problems, fmt.Sprintf("ci.yaml: template %s maps to no catalog", m.TemplateName))
		}
		for _, c := range m.CatalogNames {
			if prev, ok := seen[c]; ok {
				problems = append(problems, fmt.Sprintf("ci.yaml: catalog %s is mapped to %s and %s", c, prev, m.TemplateName))
			}
			seen[c] = m.TemplateName
		}
		data, err := os.ReadFile(filepath.Join(op, "catalog-templates", m.TemplateName))
		if err != nil {
			problems = append(problems, fmt.Sprintf("ci.yaml: template %s: %v", m.TemplateName, err))
			continue
		}
		if m.Type == TemplateType {
			problems = append(problems, checkBasicTemplate(m.TemplateName, data)...)
		}
	}
	return problems
}

// checkBasicTemplate checks that data is an olm.template.basic whose entries load as a
// declarative config with every bundle named by its image alone.
func checkBasicTemplate(name string, data []byte) []string {
	var t basic.BasicTemplateData
	if err := yaml.Unmarshal(data, &t); err != nil {
		return []string{fmt.Sprintf("template %s: %v", name, err)}
	}
	if t.Schema != TemplateType {
		return []string{fmt.Sprintf("template %s: schema %q, want %s", name, t.Schema, TemplateType)}
	}
	cfg, err := declcfg.LoadSlice(t.Entries)
	if err != nil {
		return []string{fmt.Sprintf("template %s: %v", name, err)}
	}
	var problems []string
	if len(cfg.Packages) != 1 || len(cfg.Channels) == 0 || len(cfg.Bundles) == 0 {
		problems = append(problems, fmt.Sprintf("template %s: %d packages, %d channels, %d bundles", name, len(cfg.Packages), len(cfg.Channels), len(cfg.Bundles)))
	}
	for _, b := range cfg.Bundles {
		if b.Image == "" || b.Name != "" || b.Package != "" || len(b.Properties) > 0 || len(b.RelatedImages) > 0 {
			problems = append(problems, fmt.Sprintf("template %s: a bundle entry has more than its image (%s)", name, b.Image))
		}
	}
	return problems
}

// copyTree copies the regular files under src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", p)
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return writeFile(filepath.Join(dst, rel), data)
	})
}

func writeFile(file string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	return os.WriteFile(file, data, 0o644)
}

// SortedVersions returns the versions of bundles in order (lexical; the repositories order
// them themselves).
func SortedVersions(bundles map[string]string) []string {
	vs := make([]string, 0, len(bundles))
	for v := range bundles {
		vs = append(vs, v)
	}
	slices.Sort(vs)
	return vs
}

// ParseList splits a comma or blank separated list.
func ParseList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
}
