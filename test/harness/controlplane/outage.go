package controlplane

import (
	"fmt"
	"time"

	"github.com/seed1b407122/database-operator/test/harness/proc"
)

// The components StopComponent and StartComponent can take down and bring back: the two that
// envtest runs. The others are host processes without state a restart would test.
const (
	ComponentAPIServer = "kube-apiserver"
	ComponentEtcd      = "etcd"
)

// StopComponent stops kube-apiserver or etcd gracefully (SIGTERM, then SIGKILL after
// envtest's stop timeout) and waits until it exited; every other component keeps running, so
// clients see the outage. StartComponent brings it back.
func (c *Cluster) StopComponent(name string) error {
	began := time.Now()
	var err error
	switch name {
	case ComponentAPIServer:
		err = c.env.ControlPlane.APIServer.Stop()
	case ComponentEtcd:
		err = c.env.ControlPlane.Etcd.Stop()
	default:
		return fmt.Errorf("cannot stop %q: only %s and %s can be stopped", name, ComponentAPIServer, ComponentEtcd)
	}
	if err != nil {
		return fmt.Errorf("stopping %s: %w", name, err)
	}
	c.log.printf("%s stopped in %s", name, time.Since(began).Round(time.Millisecond))
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
		log := c.WorkDir + "/" + name + ".log"
		return fmt.Errorf("starting %s again: %w\ntail of %s:\n%s", name, err, log, proc.Tail(log))
	}
	c.log.printf("%s started again in %s", name, time.Since(began).Round(time.Millisecond))
	return nil
}
