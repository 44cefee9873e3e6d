//go:build linux

package proc

import "syscall"

// SysProcAttr puts a child in its own process group and has the kernel kill it when the thread
// that started it dies: nothing a harness starts outlives it.
func SysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
