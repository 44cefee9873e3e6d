//go:build !linux

package proc

import "syscall"

// SysProcAttr puts a child in its own process group. Only Linux has a parent-death signal.
func SysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
