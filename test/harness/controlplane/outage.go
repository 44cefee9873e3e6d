package controlplane

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/seed1b407122/database-operator/test/harness/proc"
)

// The components StopComponent and StartComponent can take down and bring back: the two that
// envtest runs. The others are host processes without state a restart would test.
const (
	ComponentAPIServer = "kube-apiserver"
	ComponentEtcd      = "etcd"
)

// stopGrace is how long StopComponent waits after SIGTERM before SIGKILL. kube-apiserver's
// graceful stop waits for the long-running requests of every client still connected (it
// stopped listening, and did not exit within envtest's minute, while a manager and the
// controllers watched); a test of an outage does not need that wait.
const stopGrace = 3 * time.Second

// StopComponent stops kube-apiserver or etcd: SIGTERM, SIGKILL after stopGrace, and waits
// until it exited; every other component keeps running, so its clients see the outage.
// StartComponent brings it back.
func (c *Cluster) StopComponent(name string) error {
	if name != ComponentAPIServer && name != ComponentEtcd {
		return fmt.Errorf("cannot stop %q: only %s and %s can be stopped", name, ComponentAPIServer, ComponentEtcd)
	}
	began := time.Now()
	pid, err := childPID(filepath.Join(c.env.BinaryAssetsDirectory, name))
	if err != nil {
		return fmt.Errorf("stopping %s: %w", name, err)
	}
	killed := false
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return fmt.Errorf("stopping %s (pid %d): %w", name, pid, err)
	}
	if !waitGone(pid, stopGrace) {
		killed = true
		_ = syscall.Kill(pid, syscall.SIGKILL)
		if !waitGone(pid, controlPlaneTimeout) {
			return fmt.Errorf("%s (pid %d) still runs after SIGKILL", name, pid)
		}
	}
	// envtest reaped the process (its Wait returned); its Stop now only resets its state.
	switch name {
	case ComponentAPIServer:
		err = c.env.ControlPlane.APIServer.Stop()
	case ComponentEtcd:
		err = c.env.ControlPlane.Etcd.Stop()
	}
	if err != nil {
		return fmt.Errorf("stopping %s: %w", name, err)
	}
	c.log.printf("%s (pid %d) stopped in %s (SIGKILL needed: %v)", name, pid, time.Since(began).Round(time.Millisecond), killed)
	return nil
}

// StartComponent starts a component StopComponent stopped, on the same address, with the same
// certificates and users (kube-apiserver) or the same data directory (etcd), so every
// kubeconfig and every object survives, and waits until it answers its health check.
func (c *Cluster) StartComponent(name string) error {
	began := time.Now()
	var err error
	switch name {
	case ComponentAPIServer:
		err = c.env.ControlPlane.APIServer.Start()
	case ComponentEtcd:
		err = c.env.ControlPlane.Etcd.Start()
	default:
		return fmt.Errorf("cannot start %q: only %s and %s can be started", name, ComponentAPIServer, ComponentEtcd)
	}
	if err != nil {
		log := filepath.Join(c.WorkDir, name+".log")
		return fmt.Errorf("starting %s again: %w\ntail of %s:\n%s", name, err, log, proc.Tail(log))
	}
	c.log.printf("%s started again in %s", name, time.Since(began).Round(time.Millisecond))
	return nil
}

// childPID finds the child of this process that runs binary. envtest keeps the process to
// itself; the shim (procattr_linux.go) execs the real binary, so /proc/PID/exe names it.
func childPID(binary string) (int, error) {
	want, err := filepath.EvalSymlinks(binary)
	if err != nil {
		return 0, err
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err != nil || exe != want {
			continue
		}
		if st, err := proc.ReadStat(pid); err == nil && st.PPID == self {
			return pid, nil
		}
	}
	return 0, errors.New("no running child process of " + want)
}

// waitGone waits up to timeout until pid is reaped (envtest waits for its children).
func waitGone(pid int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); os.IsNotExist(err) {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}
