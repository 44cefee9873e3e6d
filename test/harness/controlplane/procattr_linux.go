//go:build linux

package controlplane

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
)

// shimMarker is the file, next to the shim links, that names the real binary directory.
const shimMarker = ".localcluster-bin-dir"

// shimmedBinaries are the control-plane binaries that envtest starts itself.
var shimmedBinaries = []string{"kube-apiserver", "etcd"}

// envtest starts kube-apiserver and etcd itself, with Setpgid but without a parent-death
// signal, and offers no hook to change that. So envtest is pointed at links to the current
// executable; when the executable starts under one of those names, init below sets the
// parent-death signal and execs the real binary (the signal survives execve).
func init() {
	name := filepath.Base(os.Args[0])
	if !slices.Contains(shimmedBinaries, name) {
		return
	}
	realDir, err := os.ReadFile(filepath.Join(filepath.Dir(os.Args[0]), shimMarker))
	if err != nil {
		return // Not one of our links: a program that happens to share the name.
	}
	// The parent-death signal belongs to the thread, and execve keeps the calling thread.
	runtime.LockOSThread()
	parent := os.Getppid()
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0); errno != 0 {
		fmt.Fprintf(os.Stderr, "localcluster shim: prctl: %v\n", errno)
		os.Exit(1)
	}
	if os.Getppid() != parent {
		os.Exit(1) // The parent died before the signal was armed.
	}
	bin := filepath.Join(string(realDir), name)
	err = syscall.Exec(bin, append([]string{bin}, os.Args[1:]...), os.Environ())
	fmt.Fprintf(os.Stderr, "localcluster shim: exec %s: %v\n", bin, err)
	os.Exit(1)
}

// controlPlaneBinaries returns the paths envtest should run for kube-apiserver and etcd:
// links in workDir/shim to the current executable (see init).
func controlPlaneBinaries(workDir, binDir string) (apiServer, etcd string, err error) {
	self, err := os.Executable()
	if err != nil {
		return "", "", fmt.Errorf("finding the current executable: %w", err)
	}
	shimDir := filepath.Join(workDir, "shim")
	if err := os.MkdirAll(shimDir, 0o755); err != nil {
		return "", "", fmt.Errorf("creating %s: %w", shimDir, err)
	}
	absBin, err := filepath.Abs(binDir)
	if err != nil {
		return "", "", fmt.Errorf("resolving %s: %w", binDir, err)
	}
	if err := os.WriteFile(filepath.Join(shimDir, shimMarker), []byte(absBin), 0o644); err != nil {
		return "", "", fmt.Errorf("writing the shim marker: %w", err)
	}
	for _, name := range shimmedBinaries {
		link := filepath.Join(shimDir, name)
		_ = os.Remove(link)
		if err := os.Symlink(self, link); err != nil {
			return "", "", fmt.Errorf("linking %s: %w", link, err)
		}
	}
	return filepath.Join(shimDir, "kube-apiserver"), filepath.Join(shimDir, "etcd"), nil
}
