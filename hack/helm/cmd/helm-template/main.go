// Command helm-template renders a chart like "helm template --include-crds", with the Helm Go
// library, for machines without the helm CLI:
//
//	go run ./cmd/helm-template [--release NAME] [--namespace NS] [-f values.yaml]... [--set k=v]... CHART
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
)

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	release := flag.String("release", "database-operator", "Release name.")
	namespace := flag.String("namespace", "database-operator-system", "Release namespace.")
	kubeVersion := flag.String("kube-version", "v1.37.1", "Kubernetes version for .Capabilities.")
	noCRDs := flag.Bool("skip-crds", false, "Leave out the CRDs of crds/.")
	var opts values.Options
	flag.Var((*list)(&opts.ValueFiles), "f", "Values file (repeatable).")
	flag.Var((*list)(&opts.Values), "set", "Value key=value (repeatable).")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: helm-template [flags] CHART")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *release, *namespace, *kubeVersion, !*noCRDs, opts); err != nil {
		fmt.Fprintln(os.Stderr, "helm-template:", err)
		os.Exit(1)
	}
}

func run(chartPath, release, namespace, kubeVersion string, crds bool, opts values.Options) error {
	ch, err := loader.Load(chartPath)
	if err != nil {
		return err
	}
	vals, err := opts.MergeValues(getter.Providers{})
	if err != nil {
		return err
	}
	kv, err := chartutil.ParseKubeVersion(kubeVersion)
	if err != nil {
		return err
	}
	install := action.NewInstall(&action.Configuration{Log: func(string, ...any) {}})
	install.ReleaseName, install.Namespace = release, namespace
	install.DryRun, install.ClientOnly, install.Replace = true, true, true
	install.IncludeCRDs = crds
	install.KubeVersion = kv
	rel, err := install.Run(ch, vals)
	if err != nil {
		return err
	}
	fmt.Print(rel.Manifest)
	return nil
}
