package controlplane

import (
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// setFlags sets each "--name=value" of flags on args, replacing what args held for that name;
// "--name" alone sets it to true. A flag given twice keeps its last value, as on a command line.
func setFlags(args *envtest.Arguments, flags []string) error {
	for _, f := range flags {
		name, value, err := splitFlag(f)
		if err != nil {
			return err
		}
		args.Set(name, value)
	}
	return nil
}

// splitFlag splits "--name=value" into its name and value; "--name" has the value "true".
func splitFlag(f string) (name, value string, err error) {
	rest, ok := strings.CutPrefix(f, "--")
	if !ok || rest == "" || strings.HasPrefix(rest, "=") {
		return "", "", fmt.Errorf("%q is not a flag of the form --name=value", f)
	}
	name, value, found := strings.Cut(rest, "=")
	if !found {
		value = "true"
	}
	return name, value, nil
}
