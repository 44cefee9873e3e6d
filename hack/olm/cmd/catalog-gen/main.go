// Command catalog-gen writes the file-based catalog of one package from bundle directories
// (see package catalog).
//
//	catalog-gen --opm bin/opm --package database-operator --channel stable \
//	    --output catalog/database-operator/index.yaml /tmp/bundle-0.1.0 bundle
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/seed1b407122/database-operator/hack/olm/catalog"
)

func main() {
	var opm, pkg, channel, output string
	flag.StringVar(&opm, "opm", "opm", "opm binary")
	flag.StringVar(&pkg, "package", "database-operator", "package name")
	flag.StringVar(&channel, "channel", "stable", "channel holding every bundle (also the default channel)")
	flag.StringVar(&output, "output", "catalog/database-operator/index.yaml", "FBC file to write")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: catalog-gen [flags] BUNDLE_DIR...")
		os.Exit(2)
	}
	if err := run(opm, pkg, channel, output, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "catalog-gen:", err)
		os.Exit(1)
	}
}

func run(opm, pkg, channel, output string, dirs []string) error {
	fbc, err := catalog.Render(opm, pkg, channel, dirs)
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
