//go:build linux

package olm

import "syscall"

// childSysProcAttr puts a child in its own process group and has the kernel kill it when the
// thread that started it dies: nothing this package starts for a caller outlives it.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
