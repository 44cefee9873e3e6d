//go:build linux

package realnode

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// HostSnapshot is what the node may change on the host. Two snapshots, before Start and after
// Stop, must be equal.
type HostSnapshot struct {
	IPForward string
	Links     []string // network interfaces
	Chains    []string // KUBE-*/CNI-* chains of iptables and ip6tables
	Netns     []string // named network namespaces
	Cgroups   []string // kubepods cgroups
	Mounts    []string // mount points of a node's work directory or of containerd
	Processes []string // containerd, shims, kubelet, kube-proxy, coredns, etcd, testdb, manager
}

// nodeProcesses are the programs a node runs; none may survive Stop.
var nodeProcesses = []string{"containerd", "containerd-shim-runc-v2", "kubelet", "kube-proxy", "coredns", "testdb", "pause"}

// Snapshot reads the host's state.
func Snapshot() HostSnapshot {
	data, _ := os.ReadFile(ipForwardPath)
	s := HostSnapshot{IPForward: strings.TrimSpace(string(data)), Netns: listNetns()}
	if out, err := exec.Command("ip", "-o", "link", "show").Output(); err == nil {
		for line := range strings.SplitSeq(string(out), "\n") {
			if fields := strings.Fields(line); len(fields) > 1 {
				s.Links = append(s.Links, strings.TrimSuffix(fields[1], ":"))
			}
		}
	}
	for _, family := range []string{"iptables-save", "ip6tables-save"} {
		out, _ := exec.Command(family).Output()
		for line := range strings.SplitSeq(string(out), "\n") {
			if strings.HasPrefix(line, ":") && hasChainPrefix(strings.TrimPrefix(strings.Fields(line)[0], ":")) {
				s.Chains = append(s.Chains, family+" "+strings.Fields(line)[0])
			}
		}
	}
	for dir := range kubepodsCgroups() {
		s.Cgroups = append(s.Cgroups, dir)
	}
	slices.Sort(s.Cgroups)
	if mounts, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		for line := range strings.SplitSeq(string(mounts), "\n") {
			fields := strings.Fields(line)
			if len(fields) > 4 && (strings.Contains(fields[4], "/realnode-") || strings.HasPrefix(fields[4], "/run/containerd")) {
				s.Mounts = append(s.Mounts, fields[4])
			}
		}
	}
	comms, _ := filepath.Glob("/proc/[0-9]*/comm")
	for _, path := range comms {
		comm, err := os.ReadFile(path)
		if err == nil && slices.Contains(nodeProcesses, strings.TrimSpace(string(comm))) {
			s.Processes = append(s.Processes, fmt.Sprintf("%s (pid %s)", strings.TrimSpace(string(comm)), filepath.Base(filepath.Dir(path))))
		}
	}
	return s
}

// String summarises a snapshot.
func (s HostSnapshot) String() string {
	return fmt.Sprintf("ip_forward=%s, %d links, %d KUBE-/CNI- chains, %d netns, %d kubepods cgroups, %d node mounts, %d node processes",
		s.IPForward, len(s.Links), len(s.Chains), len(s.Netns), len(s.Cgroups), len(s.Mounts), len(s.Processes))
}
