//go:build !linux

package controlplane

import (
	"path/filepath"
)

// controlPlaneBinaries returns the real kube-apiserver and etcd: without a parent-death
// signal there is nothing for a shim to add.
func controlPlaneBinaries(_, binDir string) (apiServer, etcd string, err error) {
	return filepath.Join(binDir, "kube-apiserver"), filepath.Join(binDir, "etcd"), nil
}
