// Command catalog-gen writes the file-based catalog of one package from bundle directories
// (see package catalog).
//
//	catalog-gen --opm bin/opm --package database-operator --channel candidate-v0 --deprecated-channels stable \
//	    --output catalog/database-operator/index.yaml /tmp/bundle-0.1.0 bundle
//
// A bundle given as DIR=IMAGE is rendered from its pushed image (by digest), pulled from the
// --mirror registry (PUBLIC_HOST=HOST:PORT, plain HTTP), and the catalog names the image as
// IMAGE: OLM then unpacks it.
//
//	catalog-gen --mirror quay.io=127.0.0.1:5000 --output /tmp/catalog/database-operator/index.yaml \
//	    bundle=quay.io/seed1b407122/database-operator-bundle@sha256:...
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/seed1b407122/database-operator/hack/olm/catalog"
)

func main() {
	var opm, pkg, channel, deprecated, output, mirror string
	flag.StringVar(&opm, "opm", "opm", "opm binary")
	flag.StringVar(&pkg, "package", "database-operator", "package name")
	flag.StringVar(&channel, "channel", "candidate-v0", "the default channel, holding every bundle")
	flag.StringVar(&deprecated, "deprecated-channels", "", "comma-separated deprecated channels, each holding every bundle too")
	flag.StringVar(&output, "output", "catalog/database-operator/index.yaml", "FBC file to write")
	flag.StringVar(&mirror, "mirror", "", "PUBLIC_HOST=HOST:PORT: the registry bundle images (DIR=IMAGE) are pulled from")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: catalog-gen [flags] BUNDLE_DIR[=BUNDLE_IMAGE]...")
		os.Exit(2)
	}
	ch := catalog.Channels{Default: channel}
	if deprecated != "" {
		ch.Deprecated = strings.Split(deprecated, ",")
	}
	if err := run(opm, pkg, ch, output, mirror, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "catalog-gen:", err)
		os.Exit(1)
	}
}

func run(opm, pkg string, ch catalog.Channels, output, mirror string, args []string) error {
	var m catalog.Mirror
	if mirror != "" {
		var ok bool
		if m.Public, m.Pull, ok = strings.Cut(mirror, "="); !ok {
			return fmt.Errorf("--mirror %q: want PUBLIC_HOST=HOST:PORT", mirror)
		}
	}
	sources := make([]catalog.Source, 0, len(args))
	for _, a := range args {
		dir, image, _ := strings.Cut(a, "=")
		sources = append(sources, catalog.Source{Dir: dir, Image: image})
	}
	fbc, err := catalog.Render(opm, pkg, ch, sources, m)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(output), 0o755); err != nil {
		return fmt.Errorf("creating catalog directory: %w", err)
	}
	if err := os.WriteFile(output, fbc, 0o644); err != nil {
		return fmt.Errorf("writing catalog: %w", err)
	}
	return nil
}
