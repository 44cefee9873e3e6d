// Command sbom-tool writes the CycloneDX SBOMs of the project's Go binaries and images (package
// sbom) and attaches them to images in a registry as OCI 1.1 referrers. Used by the Makefile
// (sbom, sbom-attach).
//
//	sbom-tool binary --file bin/images/manager-linux-amd64 --version 0.4.0 --out bin/release/sbom/manager.cdx.json
//	sbom-tool image --from bin/images/operator-release --name quay.io/seed1b407122/database-operator \
//	    --version 0.4.0 --out bin/release/sbom/operator.cdx.json
//	sbom-tool attach --from bin/images/operator-release --repo 127.0.0.1:5000/seed1b407122/database-operator \
//	    --sbom bin/release/sbom/operator.cdx.json
//	sbom-tool attach --subject REPO@sha256:... --sbom FILE
//	sbom-tool attach-release --registry 127.0.0.1:5000 --list bin/release/0.4.0/images.txt --dir bin/release/0.4.0/sbom [--version 0.4.0]
//	sbom-tool discover --subject REPO[:TAG|@sha256:...] [--out FILE]
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	cdx "github.com/CycloneDX/cyclonedx-go"

	"github.com/seed1b407122/database-operator/hack/images"
	"github.com/seed1b407122/database-operator/hack/images/sbom"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "binary":
		err = binary(os.Args[2:])
	case "image":
		err = image(os.Args[2:])
	case "attach":
		err = attach(os.Args[2:])
	case "attach-release":
		err = attachRelease(os.Args[2:])
	case "discover":
		err = discover(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "sbom-tool %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: sbom-tool binary|image|attach|attach-release|discover [flags] (-h for the flags)")
	os.Exit(2)
}

// binary is "sbom-tool binary": the SBOM of a Go binary.
func binary(args []string) error {
	fs := flag.NewFlagSet("binary", flag.ExitOnError)
	file := fs.String("file", "", "Go binary (with its build information: not stripped of it)")
	version := fs.String("version", "", "version of the project's main module (its build information says (devel))")
	out := fs.String("out", "", "SBOM file to write (CycloneDX JSON)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *file == "" || *out == "" {
		return fmt.Errorf("--file and --out are required")
	}
	bom, err := sbom.Binary(*file, *version)
	if err != nil {
		return err
	}
	return write(*out, bom)
}

// image is "sbom-tool image": the SBOM of the image of an OCI layout.
func image(args []string) error {
	fs := flag.NewFlagSet("image", flag.ExitOnError)
	from := fs.String("from", "", "OCI layout directory (written by image-tool)")
	name := fs.String("name", "", "repository the image is published as, e.g. quay.io/seed1b407122/database-operator")
	version := fs.String("version", "", "version of the project's Go binaries in the image")
	out := fs.String("out", "", "SBOM file to write (CycloneDX JSON)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *from == "" || *name == "" || *out == "" {
		return fmt.Errorf("--from, --name and --out are required")
	}
	img, err := images.ReadLayout(*from)
	if err != nil {
		return err
	}
	bom, err := sbom.Image(img, *name, *version)
	if err != nil {
		return err
	}
	return write(*out, bom)
}

func write(out string, bom *cdx.BOM) error {
	if err := sbom.WriteFile(out, bom); err != nil {
		return err
	}
	n := len(sbom.Modules(bom))
	fmt.Printf("%s: %s %s, %d Go modules\n", out, bom.Metadata.Component.Name, bom.Metadata.Component.Version, n)
	return nil
}

// attach is "sbom-tool attach": push an SBOM as an OCI 1.1 artifact referring to an image.
func attach(args []string) error {
	fs := flag.NewFlagSet("attach", flag.ExitOnError)
	file := fs.String("sbom", "", "SBOM file (CycloneDX JSON)")
	subject := fs.String("subject", "", "image the SBOM describes, by digest: REPO@sha256:...")
	from := fs.String("from", "", "instead of --subject: the OCI layout of the image (its digest) ...")
	repo := fs.String("repo", "", "... and the repository it was pushed to, e.g. 127.0.0.1:5000/seed1b407122/database-operator")
	insecure := fs.Bool("insecure", false, "plain HTTP for a non-loopback registry")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *file == "" {
		return fmt.Errorf("--sbom is required")
	}
	sub := *subject
	switch {
	case sub != "" && *from == "" && *repo == "":
	case sub == "" && *from != "" && *repo != "":
		img, err := images.ReadLayout(*from)
		if err != nil {
			return err
		}
		d, err := img.Digest()
		if err != nil {
			return err
		}
		sub = *repo + "@" + d.String()
	default:
		return fmt.Errorf("give --subject, or --from and --repo")
	}
	data, err := os.ReadFile(*file)
	if err != nil {
		return err
	}
	if _, err := sbom.Decode(bytes.NewReader(data)); err != nil {
		return fmt.Errorf("%s is not CycloneDX JSON: %w", *file, err)
	}
	ref, err := images.Attach(context.Background(), sub, sbom.MediaType, filepath.Base(*file), data, *insecure)
	if err != nil {
		return err
	}
	fmt.Printf("attached %s to %s as %s\n", *file, sub, ref)
	return nil
}

// discover is "sbom-tool discover": list the SBOMs that refer to an image, and write the first.
func discover(args []string) error {
	fs := flag.NewFlagSet("discover", flag.ExitOnError)
	subject := fs.String("subject", "", "image: REPO@sha256:... or REPO:TAG")
	out := fs.String("out", "", "write the (first) SBOM found to this file")
	insecure := fs.Bool("insecure", false, "plain HTTP for a non-loopback registry")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *subject == "" {
		return fmt.Errorf("--subject is required")
	}
	ctx := context.Background()
	refs, err := images.Referrers(ctx, *subject, sbom.MediaType, *insecure)
	if err != nil {
		return err
	}
	if len(refs) == 0 {
		return fmt.Errorf("no %s artifact refers to %s", sbom.MediaType, *subject)
	}
	for _, r := range refs {
		fmt.Printf("%s %s\n", r.Ref, r.ArtifactType)
	}
	if *out == "" {
		return nil
	}
	r := refs[0]
	if len(r.Layers) != 1 {
		return fmt.Errorf("%s has %d layers, want 1", r.Ref, len(r.Layers))
	}
	data, err := images.FetchBlob(ctx, r.Ref.Context(), r.Layers[0])
	if err != nil {
		return err
	}
	return os.WriteFile(*out, data, 0o644)
}

// attachRelease is "sbom-tool attach-release", make release's SBOM hook (RELEASE_SBOM_ATTACH):
// every image of the release's list (lines "<layout> <repo:tag> <repo@sha256:...>", the layout
// relative to the list's directory; other lines are ignored) gets the SBOM of --dir that
// describes its digest (metadata.component.version) attached in --registry, where make release
// pushed it (the list's repository without its host). An image that no SBOM of --dir describes
// (a released bundle, or an image built again since: the catalog image's serve cache is not
// reproducible) gets one made from its layout, written to --dir as <layout name>.cdx.json.
func attachRelease(args []string) error {
	fs := flag.NewFlagSet("attach-release", flag.ExitOnError)
	registry := fs.String("registry", "", "registry host:port the release pushed to")
	list := fs.String("list", "", "the release's image list (images.txt)")
	dir := fs.String("dir", "", "directory of the SBOMs (*.cdx.json)")
	version := fs.String("version", "", "version of the project's Go binaries, for the SBOMs made here")
	insecure := fs.Bool("insecure", false, "plain HTTP for a non-loopback registry")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *registry == "" || *list == "" || *dir == "" {
		return fmt.Errorf("--registry, --list and --dir are required")
	}
	byDigest, err := sbomsByDigest(*dir)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(*list)
	if err != nil {
		return err
	}
	attached := 0
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || !strings.Contains(f[2], "@sha256:") {
			continue
		}
		repo, digest, _ := strings.Cut(f[2], "@")
		file, ok := byDigest[digest]
		if !ok {
			if file, err = sbomOfLayout(filepath.Join(filepath.Dir(*list), f[0]), repo, digest, *version, *dir); err != nil {
				return fmt.Errorf("%s: %w", f[2], err)
			}
		}
		_, path, _ := strings.Cut(repo, "/")
		subject := *registry + "/" + path + "@" + digest
		sbomData, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		ref, err := images.Attach(context.Background(), subject, sbom.MediaType, filepath.Base(file), sbomData, *insecure)
		if err != nil {
			return err
		}
		fmt.Printf("attached %s to %s as %s\n", file, subject, ref)
		attached++
	}
	if attached == 0 {
		return fmt.Errorf("%s lists no image", *list)
	}
	return nil
}

// sbomOfLayout writes the SBOM of the image of layout, which must have digest, to
// dir/<layout name>.cdx.json, and returns the file.
func sbomOfLayout(layout, repo, digest, version, dir string) (string, error) {
	img, err := images.ReadLayout(layout)
	if err != nil {
		return "", fmt.Errorf("no SBOM describes it, and its layout: %w", err)
	}
	if d, err := img.Digest(); err != nil || d.String() != digest {
		return "", fmt.Errorf("no SBOM describes it, and its layout %s holds another image (%s)", layout, d)
	}
	bom, err := sbom.Image(img, repo, version)
	if err != nil {
		return "", err
	}
	file := filepath.Join(dir, filepath.Base(layout)+".cdx.json")
	if err := sbom.WriteFile(file, bom); err != nil {
		return "", err
	}
	fmt.Printf("made %s from %s (no SBOM of %s described %s)\n", file, layout, dir, digest)
	return file, nil
}

// sbomsByDigest maps the image digest each image SBOM of dir describes to its file.
func sbomsByDigest(dir string) (map[string]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.cdx.json"))
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		bom, err := sbom.Decode(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if c := bom.Metadata; c != nil && c.Component != nil && strings.HasPrefix(c.Component.Version, "sha256:") {
			m[c.Component.Version] = f
		}
	}
	return m, nil
}
