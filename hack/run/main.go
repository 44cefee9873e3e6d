// Command run is what "make run" executes: it runs the manager in the foreground against a
// cluster, starting a local one if none is reachable.
//
//	go run ./hack/run [flags] -- [manager flags]
//
// The cluster is the one of KUBECONFIG (or ~/.kube/config) when it answers within a few
// seconds; otherwise a local control plane (test/harness/controlplane: kube-apiserver, etcd,
// kube-controller-manager, kube-scheduler and kwok's simulated nodes; with --snapshot-dir, which
// make run sets, snapshot-controller and the VolumeSnapshot API too) is started in .run/,
// with its kubeconfig at .run/kubeconfig. The CRDs of config/crd/bases are installed, the
// manager is built (bin/manager) and run with KUBECONFIG pointing at the cluster. Ctrl-C
// (SIGINT or SIGTERM) stops the manager, then the local cluster, and exits 0; if the manager
// exits by itself, the cluster is stopped and its exit code returned. Nothing is left running.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// options are the command-line flags.
type options struct {
	applySamples bool
	build        bool
	managerBin   string
	workDir      string
	binDir       string
	snapshotDir  string
	crdDir       string
	samplesDir   string
	nodes        int
	managerArgs  []string
}

func main() {
	os.Exit(run())
}

// parseFlags reads the flags; what follows "--" goes to the manager.
func parseFlags() options {
	var o options
	flag.BoolVar(&o.applySamples, "apply-samples", false,
		"Create the objects of the samples directory in namespace default once the manager runs (existing ones are kept).")
	flag.BoolVar(&o.build, "build", true, "Build the manager (go build -o <manager> .) before running it.")
	flag.StringVar(&o.managerBin, "manager", "bin/manager", "Path of the manager binary.")
	flag.StringVar(&o.workDir, "work-dir", ".run", "Directory of the local cluster: kubeconfig, logs, data.")
	flag.StringVar(&o.binDir, "bin-dir", os.Getenv("KUBEBUILDER_ASSETS"),
		"Directory of the control-plane binaries (default $KUBEBUILDER_ASSETS).")
	flag.StringVar(&o.snapshotDir, "snapshot-dir", os.Getenv("SNAPSHOT_ENV_DIR"),
		"Directory of snapshot-controller and the VolumeSnapshot CRDs (make snapshot-env; default $SNAPSHOT_ENV_DIR); empty: no snapshots.")
	flag.StringVar(&o.crdDir, "crd-dir", "config/crd/bases", "Directory of the CRDs to install.")
	flag.StringVar(&o.samplesDir, "samples-dir", "config/samples", "Directory of the samples of --apply-samples.")
	flag.IntVar(&o.nodes, "nodes", 3, "Number of simulated nodes of a local cluster.")
	flag.Usage = func() {
		_, _ = fmt.Fprintf(flag.CommandLine.Output(), "Usage: go run ./hack/run [flags] -- [manager flags]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	o.managerArgs = flag.Args()
	return o
}

// run does the work of main and returns the exit code.
func run() int {
	o := parseFlags()
	ctx, signals := handleSignals()

	target, err := prepare(ctx, o)
	if err != nil {
		return fail(ctx, target, err)
	}

	manager, err := startManager(o.managerBin, o.managerArgs, target.kubeconfig)
	if err != nil {
		return fail(ctx, target, err)
	}
	var samples sync.WaitGroup
	if o.applySamples {
		samples.Go(func() { applySamples(ctx, target.client, o.samplesDir) })
	}
	code := superviseManager(manager, signals)
	samples.Wait()
	if err := target.stop(); err != nil {
		logf("Stopping the local cluster: %v", err)
		return 1
	}
	return code
}

// prepare builds the manager while it connects to (or starts) the cluster: both take seconds.
// A failure of either stops the other.
func prepare(ctx context.Context, o options) (*cluster, error) {
	if !o.build {
		if _, err := os.Stat(o.managerBin); err != nil {
			return nil, fmt.Errorf("the manager binary (--build=false): %w", err)
		}
	}
	buildCtx, cancelBuild := context.WithCancel(ctx)
	defer cancelBuild()
	built := make(chan error, 1)
	if o.build {
		go func() { built <- buildManager(buildCtx, o.managerBin) }()
	} else {
		built <- nil
	}
	target, err := connect(ctx, o)
	if err != nil {
		cancelBuild()
	}
	buildErr := <-built
	if err != nil {
		return target, err // A build error is then only the consequence of the cancel.
	}
	return target, buildErr
}

// fail reports err, stops the local cluster if one was started, and returns the exit code:
// 0 when a signal interrupted the start, else 1.
func fail(ctx context.Context, target *cluster, err error) int {
	stopErr := target.stop()
	if ctx.Err() != nil {
		logf("Interrupted: %v", errors.Join(err, stopErr))
		return 0
	}
	logf("%v", errors.Join(err, stopErr))
	return 1
}

// handleSignals returns a context cancelled by the first SIGINT or SIGTERM, and a channel of
// every such signal (the first one included) for the manager's supervisor.
func handleSignals() (context.Context, <-chan os.Signal) {
	caught := make(chan os.Signal, 4)
	signal.Notify(caught, os.Interrupt, syscall.SIGTERM)
	relay := make(chan os.Signal, 4)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for sig := range caught {
			cancel()
			select {
			case relay <- sig:
			default: // Nobody listens to this many signals.
			}
		}
	}()
	return ctx, relay
}

// logf prints a line of this command's own on stderr.
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "run: "+format+"\n", args...)
}
