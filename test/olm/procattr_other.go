//go:build !linux

package olm

import "syscall"

// childSysProcAttr puts a child in its own process group. Only Linux has a parent-death
// signal: elsewhere a killed parent can leave children behind.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
