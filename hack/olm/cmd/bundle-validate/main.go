// Command bundle-validate validates an OLM bundle directory with Operator Framework's default
// bundle validators and the operatorframework suite (OperatorHub v2, capabilities, categories,
// good practices, deprecated APIs). It prints every error and warning and exits 1 if there is
// any of either.
//
//	bundle-validate bundle/
package main

import (
	"fmt"
	"os"

	"github.com/seed1b407122/database-operator/hack/olm/validate"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: bundle-validate BUNDLE_DIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	r, err := validate.Bundle(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bundle-validate:", err)
		os.Exit(1)
	}
	for _, e := range r.Errors {
		fmt.Println("ERROR", e)
	}
	for _, w := range r.Warnings {
		fmt.Println("WARN ", w)
	}
	fmt.Printf("%s: %d error(s), %d warning(s)\n", dir, len(r.Errors), len(r.Warnings))
	if !r.OK() {
		os.Exit(1)
	}
}
