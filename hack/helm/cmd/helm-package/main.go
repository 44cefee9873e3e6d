// Command helm-package packages a chart like "helm package CHART -d DIR", with the Helm Go
// library, for machines without the helm CLI: it writes DIR/<name>-<version>.tgz and prints its
// path. --version, when given, must be the chart's version (a release checks that the chart it
// ships is the version it releases).
//
//	go run ./cmd/helm-package [--version 0.4.0] -d bin/release/0.4.0 charts/database-operator
package main

import (
	"flag"
	"fmt"
	"os"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
)

func main() {
	dir := flag.String("d", ".", "Directory to write the package to.")
	version := flag.String("version", "", "The version the chart must have (default: any).")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: helm-package [--version V] [-d DIR] CHART")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *dir, *version); err != nil {
		fmt.Fprintln(os.Stderr, "helm-package:", err)
		os.Exit(1)
	}
}

func run(chartDir, dir, version string) error {
	c, err := loader.LoadDir(chartDir)
	if err != nil {
		return err
	}
	if err := c.Validate(); err != nil {
		return err
	}
	if version != "" && (c.Metadata.Version != version || c.Metadata.AppVersion != version) {
		return fmt.Errorf("%s is version %s (appVersion %s), not %s: set both in Chart.yaml and commit",
			chartDir, c.Metadata.Version, c.Metadata.AppVersion, version)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	file, err := chartutil.Save(c, dir)
	if err != nil {
		return err
	}
	fmt.Println(file)
	return nil
}
