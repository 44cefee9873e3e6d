package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apischeme "github.com/seed1b407122/database-operator/api/scheme"
	"github.com/seed1b407122/database-operator/test/harness/controlplane"
	"github.com/seed1b407122/database-operator/test/harness/csisim"
)

// probeTimeout bounds the /version request that decides whether a cluster is reachable.
const probeTimeout = 3 * time.Second

// cluster is the cluster the manager runs against.
type cluster struct {
	// kubeconfig is the KUBECONFIG value for the manager ("" leaves the environment alone).
	kubeconfig string
	client     client.Client
	// local is the cluster this command started, nil when it found one.
	local *controlplane.Cluster
}

// stop stops the local cluster, if this command started one.
func (c *cluster) stop() error {
	if c == nil || c.local == nil {
		return nil
	}
	return c.local.Stop()
}

// connect returns a reachable cluster with the CRDs installed and Established: the one of
// the kubeconfig if it answers, else a new local one.
func connect(ctx context.Context, o options) (*cluster, error) {
	crds, err := readManifests(o.crdDir)
	if err != nil {
		return nil, fmt.Errorf("reading the CRDs: %w", err)
	}
	c, err := existingCluster(ctx)
	if err == nil {
		err = installCRDs(ctx, c.client, crds)
	} else {
		logf("No reachable cluster (%v): starting a local one in %s.", err, o.workDir)
		c, err = startLocal(ctx, o)
	}
	if err == nil {
		err = waitEstablished(ctx, c.client, crds)
	}
	if err != nil {
		return c, err
	}
	if c.local != nil {
		printLocalBanner(c.local, o.nodes, o.snapshotDir != "")
	}
	return c, nil
}

// existingCluster returns the cluster of KUBECONFIG (or ~/.kube/config) if /version answers.
func existingCluster(ctx context.Context) (*cluster, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	cfg, err := loader.ClientConfig()
	if clientcmd.IsEmptyConfig(err) {
		return nil, errors.New("no kubeconfig: KUBECONFIG is unset and ~/.kube/config is missing")
	}
	if err != nil {
		return nil, fmt.Errorf("unusable kubeconfig: %w", err)
	}
	version, err := serverVersion(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("%s does not answer: %w", cfg.Host, err)
	}
	raw, _ := loader.RawConfig()
	logf("Using the cluster of context %q at %s (Kubernetes %s).", raw.CurrentContext, cfg.Host, version)
	c, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	kubeconfig := os.Getenv(clientcmd.RecommendedConfigPathEnvVar)
	if _, err := os.Stat(clientcmd.RecommendedHomeFile); kubeconfig == "" && err == nil {
		kubeconfig = clientcmd.RecommendedHomeFile
	}
	return &cluster{kubeconfig: kubeconfig, client: c}, nil
}

// serverVersion asks the API server for its version, giving up after probeTimeout.
func serverVersion(ctx context.Context, cfg *rest.Config) (string, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = probeTimeout
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return "", fmt.Errorf("creating a discovery client: %w", err)
	}
	type answer struct {
		version string
		err     error
	}
	answered := make(chan answer, 1)
	go func() {
		v, err := dc.ServerVersion()
		if err != nil {
			answered <- answer{err: err}
			return
		}
		answered <- answer{version: v.GitVersion}
	}()
	select {
	case a := <-answered:
		return a.version, a.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// startLocal starts a local cluster in o.workDir; envtest installs the CRDs.
func startLocal(ctx context.Context, o options) (*cluster, error) {
	if o.binDir == "" {
		return nil, errors.New("no control-plane binaries: set KUBEBUILDER_ASSETS (make run does) or --bin-dir")
	}
	local, err := controlplane.Start(ctx, controlplane.Options{
		BinDir:            o.binDir,
		SnapshotDir:       o.snapshotDir,
		WorkDir:           o.workDir,
		Nodes:             o.nodes,
		CRDDirectoryPaths: []string{o.crdDir},
		Log:               os.Stderr,
	})
	if err != nil {
		return nil, fmt.Errorf("starting a local cluster: %w", err)
	}
	return &cluster{kubeconfig: local.KubeconfigPath, client: local.Client(), local: local}, nil
}

// newClient returns a client that knows the built-in types and CRDs.
func newClient(cfg *rest.Config) (client.Client, error) {
	scheme := apischeme.Must()
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("creating a client: %w", err)
	}
	return c, nil
}

// printLocalBanner tells how to reach the local cluster.
func printLocalBanner(local *controlplane.Cluster, nodes int, snapshots bool) {
	storage := fmt.Sprintf("StorageClass %q", csisim.StorageClassName)
	if snapshots {
		storage += fmt.Sprintf(", VolumeSnapshotClass %q", csisim.SnapshotClassName)
	}
	kubeconfig := local.KubeconfigPath
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, kubeconfig); err == nil && !strings.HasPrefix(rel, "..") {
			kubeconfig = "$PWD/" + rel
		}
	}
	fmt.Fprintf(os.Stderr, `
========================================================================================
Local cluster ready: %s, %d simulated (kwok) nodes, %s.
  kubeconfig: %s
  logs:       %s/*.log
  try:        KUBECONFIG=%s kubectl get dbc -A
              KUBECONFIG=%s kubectl apply -f config/samples/
Ctrl-C stops the manager and the cluster.
========================================================================================

`, local.Config.Host, nodes, storage, local.KubeconfigPath, local.WorkDir, kubeconfig, kubeconfig)
}
