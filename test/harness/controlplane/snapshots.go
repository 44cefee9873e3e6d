package controlplane

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// SnapshotDirEnv names the environment variable that gives Options.SnapshotDir its default; the
// Makefile exports it (SNAPSHOT_ENV_DIR, built by "make snapshot-env").
const SnapshotDirEnv = "SNAPSHOT_ENV_DIR"

const (
	// snapshotController is the binary of external-snapshotter's common controller in
	// Options.SnapshotDir, and the name of its log and kubeconfig.
	snapshotController = "snapshot-controller"
	// snapshotCRDDir is the directory of Options.SnapshotDir holding the VolumeSnapshot CRDs
	// (volumesnapshotclasses, volumesnapshotcontents, volumesnapshots).
	snapshotCRDDir = "crds"
)

// resolveSnapshotDir defaults opts.SnapshotDir from $SNAPSHOT_ENV_DIR and checks that it holds
// the controller and the CRDs. An empty directory turns the snapshot parts off; the caller says so.
func resolveSnapshotDir(opts *Options) error {
	if opts.SnapshotDir == "" {
		opts.SnapshotDir = os.Getenv(SnapshotDirEnv)
	}
	if opts.SnapshotDir == "" {
		return nil
	}
	for _, name := range []string{snapshotController, filepath.Join(snapshotCRDDir, "snapshot.storage.k8s.io_volumesnapshots.yaml")} {
		if _, err := os.Stat(filepath.Join(opts.SnapshotDir, name)); err != nil {
			return fmt.Errorf("%s missing from the snapshot directory %s (make snapshot-env builds it): %w", name, opts.SnapshotDir, err)
		}
	}
	// Cloned: the caller's slice is not ours to append to.
	opts.CRDDirectoryPaths = append(append([]string(nil), opts.CRDDirectoryPaths...), filepath.Join(opts.SnapshotDir, snapshotCRDDir))
	return nil
}

// snapshotControllerComponent runs external-snapshotter's snapshot-controller: it binds
// VolumeSnapshots to VolumeSnapshotContents, creates the contents of dynamic snapshots, adds and
// removes the finalizers, and copies the driver's status (which the simulated CSI driver writes)
// to the VolumeSnapshot. Its metrics listen on 127.0.0.1:port only; no leader election. The
// VolumeGroupSnapshot feature is off: its CRDs are not installed, and with it on the controller
// would wait for them before it starts.
func snapshotControllerComponent(dir, kubeconfig string, port int) component {
	return component{name: snapshotController, dir: dir, args: []string{
		"--kubeconfig=" + kubeconfig,
		"--leader-election=false",
		"--http-endpoint=127.0.0.1:" + strconv.Itoa(port),
		"--feature-gates=CSIVolumeGroupSnapshot=false",
		// The default 5 QPS would throttle tests that snapshot several claims at once.
		"--kube-api-qps=100",
		"--kube-api-burst=200",
		// Failed snapshot creations and deletions are retried after 1 s, doubling up to this.
		"--retry-interval-max=10s",
	}}
}

// metricsServed reports whether http://127.0.0.1:port/metrics answers 200: the
// snapshot-controller serves it once it found its CRDs and is about to start its informers.
func metricsServed(ctx context.Context, port int) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/metrics", port), nil)
	if err != nil {
		return false
	}
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
