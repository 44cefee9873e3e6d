// Command bundle-gen writes the OLM bundle of database-operator from the output of
// "kustomize build config/manifests" (read from --input, or stdin when --input is "-").
//
//	kustomize build config/manifests | bundle-gen --version 0.2.0 --previous-version 0.1.0 \
//	    --channels stable --default-channel stable --output-dir bundle --dockerfile bundle.Dockerfile
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/seed1b407122/database-operator/hack/olm/bundlegen"
)

func main() {
	var o bundlegen.Options
	var input, channels string
	flag.StringVar(&input, "input", "-", "kustomize output to read; - for stdin")
	flag.StringVar(&o.Package, "package", "database-operator", "OLM package name")
	flag.StringVar(&o.Version, "version", "", "bundle version, e.g. 0.2.0 (required)")
	flag.StringVar(&o.PreviousVersion, "previous-version", "", "version this bundle replaces (optional)")
	flag.StringVar(&channels, "channels", "stable", "comma-separated channels")
	flag.StringVar(&o.DefaultChannel, "default-channel", "stable", "default channel")
	flag.StringVar(&o.OperatorImage, "image", "", "operator image (default: the manager container's image)")
	flag.StringVar(&o.CreatedAt, "created-at", "", "createdAt annotation (default: the CSV base's)")
	flag.StringVar(&o.OutputDir, "output-dir", "bundle", "bundle directory")
	flag.StringVar(&o.Dockerfile, "dockerfile", "", "where to write bundle.Dockerfile (optional)")
	flag.Parse()
	o.Channels = strings.Split(channels, ",")

	if err := run(input, o); err != nil {
		fmt.Fprintln(os.Stderr, "bundle-gen:", err)
		os.Exit(1)
	}
}

func run(input string, o bundlegen.Options) error {
	var in io.Reader = os.Stdin
	if input != "-" {
		f, err := os.Open(input)
		if err != nil {
			return err
		}
		// The input is only read, so a failing Close cannot lose data; there is nothing to report.
		defer func() { _ = f.Close() }()
		in = f
	}
	return bundlegen.Generate(in, o)
}
