// Command operatorhub exports bundle directories in the layout of the community operator
// repositories (package operatorhub) and validates the export with the validators of "make
// bundle-validate", ci.yaml's FBC settings, the catalog template and the catalogs. It exits 1 on
// any problem. Used by "make operatorhub".
//
//	operatorhub --package database-operator --bundle 0.4.0=bundle --released 0.3.0=hack/olm/released/0.3.0 \
//	    --catalog catalog/database-operator/index.yaml --catalog-names v4.18,v4.19 --reviewers someone \
//	    --output bin/release/operatorhub
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/seed1b407122/database-operator/hack/olm/operatorhub"
)

type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	*l = append(*l, v)
	return nil
}

func main() {
	var o operatorhub.Options
	var bundles, released listFlag
	flag.StringVar(&o.Package, "package", "database-operator", "OLM package")
	flag.Var(&bundles, "bundle", "VERSION=DIR, the new bundle (validated like make bundle-validate); repeatable")
	flag.Var(&released, "released", "VERSION=DIR, a released bundle the catalog still serves (validated with the suite); repeatable")
	flag.StringVar(&o.Catalog, "catalog", "catalog/database-operator/index.yaml", "the package's rendered file-based catalog")
	names := flag.String("catalog-names", "", "catalogs of ci.yaml's fbc.catalog_mapping, comma separated (e.g. v4.18,v4.19)")
	reviewers := flag.String("reviewers", "", "GitHub users of ci.yaml's reviewers, comma separated")
	out := flag.String("output", "bin/release/operatorhub", "directory to write (replaced)")
	flag.Parse()
	o.CatalogNames = operatorhub.ParseList(*names)
	o.Reviewers = operatorhub.ParseList(*reviewers)
	o.Bundles = map[string]string{}
	isReleased := map[string]bool{}
	for _, list := range []struct {
		flags    listFlag
		released bool
	}{{bundles, false}, {released, true}} {
		for _, b := range list.flags {
			v, dir, ok := strings.Cut(b, "=")
			if !ok || v == "" || dir == "" {
				fail(fmt.Errorf("%q: want VERSION=DIR", b))
			}
			o.Bundles[v], isReleased[v] = dir, list.released
		}
	}
	if err := operatorhub.Export(*out, o); err != nil {
		fail(err)
	}
	problems, err := operatorhub.Validate(*out, o.Package, isReleased)
	if err != nil {
		fail(err)
	}
	for _, p := range problems {
		fmt.Println("ERROR", p)
	}
	fmt.Printf("%s: versions %s, catalogs %s: %d problem(s)\n", operatorhub.OperatorDir(*out, o.Package),
		strings.Join(operatorhub.SortedVersions(o.Bundles), " "), strings.Join(o.CatalogNames, " "), len(problems))
	if len(problems) > 0 {
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "operatorhub:", err)
	os.Exit(1)
}
