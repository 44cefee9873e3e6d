// Command run-bundle is what "make run-bundle" and "make cleanup-bundle" run: it installs the
// bundle directory through the OLM of the cluster in KUBECONFIG, or removes that install, as
// "operator-sdk run bundle" and "operator-sdk cleanup" do (operator-sdk is not available from
// the Go module proxy). The work is done by package test/harness/olm, which the OLM e2e shares.
//
//	run-bundle install --namespace NS [--install-mode OwnNamespace|AllNamespaces|SingleNamespace=X]
//	                   [--catalog-mode host|cluster] --opm OPM --catalog-serve CATALOG_SERVE
//	run-bundle cleanup --namespace NS
//
// install renders a one-bundle file-based catalog from --bundle-dir with opm, serves it (host
// mode: a catalog server on 127.0.0.1 of this machine, detached, for OLM running on this
// machine; cluster mode: a Deployment of the opm image behind a Service, for OLM running in
// the cluster), creates a CatalogSource, an OperatorGroup and a Subscription in the namespace
// and waits until the CSV has Succeeded (--timeout). cleanup removes all of it, stops the host
// catalog server (its pidfile is in --state-dir/NS/) and removes the state. Both exit 1 with
// OLM's explanation on failure.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apischeme "github.com/seed1b407122/database-operator/api/scheme"
	"github.com/seed1b407122/database-operator/hack/runbundle"
	"github.com/seed1b407122/database-operator/test/harness/olm"
)

// options are the command-line flags of both subcommands.
type options struct {
	namespace    string
	bundleDir    string
	installMode  string
	catalogMode  string
	opm          string
	catalogServe string
	port         int
	opmImage     string
	bundleImage  string
	mirror       string
	stateDir     string
	timeout      time.Duration
}

// The two subcommands.
const (
	install = "install"
	cleanup = "cleanup"
)

func main() {
	if len(os.Args) < 2 || (os.Args[1] != install && os.Args[1] != cleanup) {
		fmt.Fprintln(os.Stderr, "Usage: run-bundle install|cleanup [flags] (run-bundle install -h lists them)")
		os.Exit(2)
	}
	sub := os.Args[1]
	o := parseFlags(sub, os.Args[2:])
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeoutCause(ctx, o.timeout, fmt.Errorf("timed out after %s (--timeout)", o.timeout))
	defer cancel()

	if err := run(ctx, sub, o); err != nil {
		fmt.Fprintf(os.Stderr, "run-bundle %s: %v\n", sub, err)
		if sub == install {
			fmt.Fprintf(os.Stderr, "Nothing was rolled back; \"make cleanup-bundle NAMESPACE=%s\" removes it.\n", o.namespace)
		}
		os.Exit(1)
	}
}

func parseFlags(sub string, args []string) options {
	var o options
	fs := flag.NewFlagSet("run-bundle "+sub, flag.ExitOnError)
	fs.StringVar(&o.namespace, "namespace", "", "Namespace to install into / clean up (required).")
	fs.StringVar(&o.bundleDir, "bundle-dir", "bundle", "Bundle directory (registry+v1: manifests/ and metadata/).")
	fs.StringVar(&o.stateDir, "state-dir", ".run-bundle", "Directory for the rendered catalog, the catalog server's log and pidfile, per namespace.")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Minute, "Give up after this long.")
	if sub == install {
		fs.StringVar(&o.installMode, "install-mode", olm.InstallModeOwnNamespace,
			"OwnNamespace, AllNamespaces, SingleNamespace=NS or MultiNamespace=NS1,NS2 (the OperatorGroup's targets).")
		fs.StringVar(&o.catalogMode, "catalog-mode", string(runbundle.CatalogModeHost),
			"host: serve the catalog from this machine on 127.0.0.1 (OLM running on this machine); cluster: from a Deployment of --opm-image in the namespace (OLM in the cluster).")
		fs.StringVar(&o.opm, "opm", "", "opm binary (renders and validates the catalog; required).")
		fs.StringVar(&o.catalogServe, "catalog-serve", "", "catalog-serve binary (host mode).")
		fs.IntVar(&o.port, "port", 0, "Port of the host-mode catalog server on 127.0.0.1 (0: a free one).")
		fs.StringVar(&o.opmImage, "opm-image", olm.DefaultOPMImage, "Image of the cluster-mode catalog server.")
		fs.StringVar(&o.bundleImage, "bundle-image", "",
			"Bundle image to install, by digest (REPOSITORY@sha256:...), instead of --bundle-dir: the catalog names it and OLM unpacks it in a Job, as \"operator-sdk run bundle\" does.")
		fs.StringVar(&o.mirror, "mirror", "",
			"PUBLIC_HOST=HOST:PORT: pull --bundle-image on this machine from that plain-HTTP registry (the cluster pulls it as named).")
	}
	_ = fs.Parse(args)
	if o.namespace == "" || (sub == install && o.opm == "") {
		fmt.Fprintln(os.Stderr, "--namespace is required (and --opm for install)")
		fs.Usage()
		os.Exit(2)
	}
	return o
}

func run(ctx context.Context, sub string, o options) error {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return fmt.Errorf("loading the kubeconfig: %w", err)
	}
	c, err := newClient(cfg)
	if err != nil {
		return err
	}
	if sub == cleanup {
		return runbundle.Cleanup(ctx, c, runbundle.CleanupOptions{
			Namespace: o.namespace, StateDir: o.stateDir, BundleDir: o.bundleDir, Log: os.Stdout,
		})
	}
	mode, err := olm.ParseInstallMode(o.installMode)
	if err != nil {
		return err
	}
	mirror, err := olm.ParseImageMirror(o.mirror)
	if err != nil {
		return err
	}
	_, err = runbundle.Run(ctx, c, runbundle.Options{
		BundleDir: o.bundleDir, BundleImage: o.bundleImage, Mirror: mirror, Namespace: o.namespace, InstallMode: mode,
		CatalogMode: runbundle.CatalogMode(o.catalogMode), OPM: o.opm, CatalogServer: o.catalogServe,
		Port: o.port, OPMImage: o.opmImage, StateDir: o.stateDir, Cluster: cfg.Host, Log: os.Stdout,
	})
	return err
}

// newClient returns a client for the built-in types; OLM's objects are unstructured.
func newClient(cfg *rest.Config) (client.Client, error) {
	scheme := apischeme.Must()
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("creating a client: %w", err)
	}
	return c, nil
}
