// Package sbom writes CycloneDX SBOMs of the project's Go binaries and images.
//
// A Go binary's SBOM comes from its build information (debug/buildinfo: the module graph the
// binary was linked from, with each module's version and go.sum hash) through
// cyclonedx-gomod's bin generator (github.com/CycloneDX/cyclonedx-gomod/pkg/generate/bin), the
// OWASP CycloneDX project's Go module SBOM library. An image's SBOM lists what its flattened
// filesystem holds: each Go binary as an application component with its modules nested in it
// (the same generator), every other regular file as a file component with its SHA-256.
//
// Nothing reads the clock or draws a random serial number: the same inputs give the same bytes,
// so an SBOM attached to an image as an OCI artifact has a stable digest.
package sbom

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/CycloneDX/cyclonedx-gomod/pkg/generate/bin"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/rs/zerolog"
	"go.yaml.in/yaml/v3"
)

// MediaType is the media type of a CycloneDX JSON document: the artifactType of an SBOM
// attached to an image.
const MediaType = "application/vnd.cyclonedx+json"

// ProjectModulePrefix is the module path of the project's own Go modules (the operator's, and
// hack/echo's, hack/olm's...): binaries of those get the version given to Binary and Image,
// since their build information says only "(devel)".
const ProjectModulePrefix = "github.com/seed1b407122/database-operator"

// Binary returns the SBOM of the Go binary file: metadata.component is its main module (an
// application, at version when the main module is the project's and version is not empty),
// components are the modules linked into it, at the versions of its build information.
func Binary(file, version string) (*cdx.BOM, error) {
	bi, err := buildinfo.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s: not a Go binary with build information: %w", file, err)
	}
	opts := []bin.Option{bin.WithLogger(zerolog.Nop())}
	if version != "" && (bi.Main.Path == ProjectModulePrefix || strings.HasPrefix(bi.Main.Path, ProjectModulePrefix+"/")) {
		opts = append(opts, bin.WithVersionOverride(version))
	}
	g, err := bin.NewGenerator(file, opts...)
	if err != nil {
		return nil, err
	}
	bom, err := g.Generate()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	bom.Metadata.Tools = tools()
	return bom, nil
}

// generatorModule is the module of the SBOM generator.
const generatorModule = "github.com/CycloneDX/cyclonedx-gomod"

// tools names the generator in metadata.tools: cyclonedx-gomod at the version linked in.
func tools() *cdx.ToolsChoice {
	version := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == generatorModule {
				version = d.Version
			}
		}
	}
	return &cdx.ToolsChoice{Components: &[]cdx.Component{{
		Type:        cdx.ComponentTypeLibrary,
		Name:        generatorModule,
		Version:     version,
		Description: "its bin generator, driven by hack/images/sbom of github.com/seed1b407122/database-operator",
	}}}
}

// Image returns the SBOM of img, named repo (e.g. quay.io/seed1b407122/database-operator):
// metadata.component is the image (a container, version its digest); components are, in path
// order, every Go binary of its flattened filesystem (an application component named by its
// path, with its SHA-256, its modules as nested components and its main module's purl) and
// every other regular file (a file component with its SHA-256); then, with scope "excluded"
// (named, not contained), the images that its OLM manifests name by digest: a bundle CSV's
// relatedImages, a file-based catalog's bundle images. version is passed to Binary.
func Image(img v1.Image, repo, version string) (*cdx.BOM, error) {
	digest, err := img.Digest()
	if err != nil {
		return nil, err
	}
	files, err := imageFiles(img)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "sbom-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	var components []cdx.Component
	var deps []cdx.Dependency
	var refs []string
	for _, name := range sortedNames(files) {
		data := files[name]
		sum := sha256.Sum256(data)
		hashes := &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: hex.EncodeToString(sum[:])}}
		if _, err := buildinfo.Read(bytes.NewReader(data)); err != nil {
			components = append(components, cdx.Component{
				BOMRef: "file:" + name, Type: cdx.ComponentTypeFile, Name: name, Hashes: hashes,
			})
			refs = append(refs, "file:"+name)
			continue
		}
		c, d, err := binaryComponent(tmp, name, data, version)
		if err != nil {
			return nil, err
		}
		c.Hashes = hashes
		components = append(components, c)
		deps = append(deps, d...)
		refs = append(refs, c.BOMRef)
	}
	components = append(components, referencedImages(files)...)
	imageRef := "image:" + repo + "@" + digest.String()
	deps = append([]cdx.Dependency{{Ref: imageRef, Dependencies: &refs}}, deps...)
	bom := cdx.NewBOM()
	bom.Metadata = &cdx.Metadata{
		Tools: tools(),
		Component: &cdx.Component{
			BOMRef:     imageRef,
			Type:       cdx.ComponentTypeContainer,
			Name:       repo,
			Version:    digest.String(),
			PackageURL: ociPURL(repo, digest.String()),
		},
	}
	bom.Components = &components
	bom.Dependencies = &deps
	return bom, nil
}

// binaryComponent is the application component of the Go binary at path name of an image
// (written to dir to be read), with its modules nested; its bom-refs, and those of its
// dependency graph, are prefixed with the path so that two binaries may link the same module.
func binaryComponent(dir, name string, data []byte, version string) (cdx.Component, []cdx.Dependency, error) {
	file := filepath.Join(dir, path.Base(name))
	if err := os.WriteFile(file, data, 0o600); err != nil {
		return cdx.Component{}, nil, err
	}
	defer func() { _ = os.Remove(file) }()
	bom, err := Binary(file, version)
	if err != nil {
		return cdx.Component{}, nil, fmt.Errorf("%s: %w", name, err)
	}
	prefix := name + "#"
	main := *bom.Metadata.Component
	main.Name, main.Group = name, ""
	main.Description = "Go binary; main module " + bom.Metadata.Component.Name
	if v := bom.Metadata.Component.Version; v != "" {
		main.Description += " " + v
	}
	main.BOMRef = prefix + main.BOMRef
	var nested []cdx.Component
	if bom.Components != nil {
		for _, c := range *bom.Components {
			c.BOMRef = prefix + c.BOMRef
			nested = append(nested, c)
		}
	}
	main.Components = &nested
	var deps []cdx.Dependency
	if bom.Dependencies != nil {
		for _, d := range *bom.Dependencies {
			d.Ref = prefix + d.Ref
			if d.Dependencies != nil {
				on := make([]string, len(*d.Dependencies))
				for i, r := range *d.Dependencies {
					on[i] = prefix + r
				}
				d.Dependencies = &on
			}
			deps = append(deps, d)
		}
	}
	return main, deps, nil
}

// ociPURL is the package URL of an image by digest: pkg:oci/NAME@DIGEST?repository_url=REPO.
func ociPURL(repo, digest string) string {
	return "pkg:oci/" + path.Base(repo) + "@" + strings.ReplaceAll(digest, ":", "%3A") + "?repository_url=" + url.QueryEscape(repo)
}

// imageFiles returns the regular files of img's flattened filesystem by absolute path.
func imageFiles(img v1.Image) (map[string][]byte, error) {
	rc := mutate.Extract(img)
	defer func() { _ = rc.Close() }()
	files := map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		files[path.Clean("/"+hdr.Name)] = data
	}
}

func sortedNames(m map[string][]byte) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Encode writes bom as indented CycloneDX JSON (spec 1.6).
func Encode(w io.Writer, bom *cdx.BOM) error {
	return cdx.NewBOMEncoder(w, cdx.BOMFileFormatJSON).SetPretty(true).EncodeVersion(bom, cdx.SpecVersion1_6)
}

// WriteFile writes bom to file (its directory created), through a temporary file.
func WriteFile(file string, bom *cdx.BOM) error {
	var buf bytes.Buffer
	if err := Encode(&buf, bom); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(file+".tmp", buf.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(file+".tmp", file)
}

// Decode reads a CycloneDX JSON document.
func Decode(r io.Reader) (*cdx.BOM, error) {
	bom := new(cdx.BOM)
	if err := cdx.NewBOMDecoder(r, cdx.BOMFileFormatJSON).Decode(bom); err != nil {
		return nil, err
	}
	return bom, nil
}

// Modules returns the Go modules a BOM lists, module path → version: the library components
// whose purl is pkg:golang, at any depth (an image's binaries nest theirs).
func Modules(bom *cdx.BOM) map[string]string {
	mods := map[string]string{}
	var walk func([]cdx.Component)
	walk = func(cs []cdx.Component) {
		for _, c := range cs {
			if c.Type == cdx.ComponentTypeLibrary && strings.HasPrefix(c.PackageURL, "pkg:golang/") {
				mods[c.Name] = c.Version
			}
			if c.Components != nil {
				walk(*c.Components)
			}
		}
	}
	if bom.Components != nil {
		walk(*bom.Components)
	}
	return mods
}

// ReferencedByProperty is the property of a referenced image's component that names the file
// of the image that refers to it.
const ReferencedByProperty = "database-operator:referenced-by"

// referencedImages returns, as container components of scope "excluded", the images named by
// digest in the image's OLM manifests: spec.relatedImages of a ClusterServiceVersion (a bundle),
// and the image of each olm.bundle of a file-based catalog's YAML or JSON files, in file order.
func referencedImages(files map[string][]byte) []cdx.Component {
	var out []cdx.Component
	seen := map[string]bool{}
	for _, name := range sortedNames(files) {
		ext := path.Ext(name)
		if ext != ".yaml" && ext != ".yml" && ext != ".json" {
			continue
		}
		for _, img := range imagesOf(files[name]) {
			repo, digest, ok := strings.Cut(img, "@")
			if !ok || !strings.HasPrefix(digest, "sha256:") || seen[img+name] {
				continue
			}
			seen[img+name] = true
			out = append(out, cdx.Component{
				BOMRef:     "ref:" + name + "#" + img,
				Type:       cdx.ComponentTypeContainer,
				Name:       repo,
				Version:    digest,
				Scope:      cdx.ScopeExcluded,
				PackageURL: ociPURL(repo, digest),
				Properties: &[]cdx.Property{{Name: ReferencedByProperty, Value: name}},
			})
		}
	}
	return out
}

// imagesOf returns the images a YAML or JSON stream names as a ClusterServiceVersion's
// relatedImages or an olm.bundle's image; documents that do not parse are passed over.
func imagesOf(data []byte) []string {
	var imgs []string
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc struct {
			Kind   string `yaml:"kind"`
			Schema string `yaml:"schema"`
			Image  string `yaml:"image"`
			Spec   struct {
				RelatedImages []struct {
					Image string `yaml:"image"`
				} `yaml:"relatedImages"`
			} `yaml:"spec"`
		}
		if err := dec.Decode(&doc); err != nil {
			return imgs
		}
		switch {
		case doc.Kind == "ClusterServiceVersion":
			for _, r := range doc.Spec.RelatedImages {
				imgs = append(imgs, r.Image)
			}
		case doc.Schema == "olm.bundle" && doc.Image != "":
			imgs = append(imgs, doc.Image)
		}
	}
}
