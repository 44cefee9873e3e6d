//go:build !linux

package localcluster

import (
	"path/filepath"
	"syscall"
)

// ChildSysProcAttr puts a child in its own process group. Only Linux has a parent-death
// signal: elsewhere a killed parent can leave children behind.
func ChildSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// controlPlaneBinaries returns the real kube-apiserver and etcd: without a parent-death
// signal there is nothing for a shim to add.
func controlPlaneBinaries(_, binDir string) (apiServer, etcd string, err error) {
	return filepath.Join(binDir, "kube-apiserver"), filepath.Join(binDir, "etcd"), nil
}
