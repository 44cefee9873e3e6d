package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// wrapBinaries returns a binary directory for the local cluster in which the programs named in
// extra are the real ones with flags appended (the last value of a flag wins), and the others
// links to the real ones. test/localcluster takes no extra component flags, and two of its
// defaults limit a benchmark of 1,000 clusters:
//   - envtest's kube-apiserver --service-cluster-ip-range, 10.0.0.0/24, holds ~250 ClusterIPs,
//     fewer than the client Services of 1,000 DatabaseClusters ("failed to allocate a serviceIP:
//     range is full");
//   - kube-scheduler talks to the API server at its default 50 QPS (kube-controller-manager
//     gets 1000), which makes binding the pods, not the operator, the bottleneck.
func wrapBinaries(extra map[string][]string) (string, func(), error) {
	binDir := os.Getenv("KUBEBUILDER_ASSETS")
	if binDir == "" {
		return "", nil, errors.New("no binary directory: set KUBEBUILDER_ASSETS (make bench does)")
	}
	real, err := filepath.Abs(binDir)
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", "bench-bin-")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { _ = os.RemoveAll(dir) }
	for _, name := range []string{"kube-apiserver", "etcd", "kube-controller-manager", "kube-scheduler", "kwok"} {
		target := filepath.Join(real, name)
		var err error
		if args := extra[name]; len(args) > 0 {
			script := fmt.Sprintf("#!/bin/sh\nexec %q \"$@\"", target)
			for _, a := range args {
				script += fmt.Sprintf(" %q", a)
			}
			err = os.WriteFile(filepath.Join(dir, name), []byte(script+"\n"), 0o755)
		} else {
			err = os.Symlink(target, filepath.Join(dir, name))
		}
		if err != nil {
			cleanup()
			return "", nil, err
		}
	}
	return dir, cleanup, nil
}
