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
	Loops     []string // loop devices backed by a file of a node's work directory
	Processes []string // containerd, shims, kubelet, kube-proxy, coredns, etcd, testdb, manager
}

// nodeProcesses are the programs a node runs; none may survive Stop.
var nodeProcesses = []string{"containerd", "containerd-shim-runc-v2", "kubelet", "kube-proxy", "coredns", "testdb", "pause"}

// Snapshot reads the host's state.
func Snapshot() HostSnapshot {
	data, _ := os.ReadFile(ipForwardPath)
	s := HostSnapshot{
		IPForward: strings.TrimSpace(string(data)),
		Links:     links(),
		Chains:    ourChains(),
		Netns:     listNetns(),
		Mounts:    nodeMounts(),
		Loops:     loopDevices(filepath.Join(os.TempDir(), "realnode-")),
		Processes: nodeProcessList(),
	}
	for dir := range kubepodsCgroups() {
		s.Cgroups = append(s.Cgroups, dir)
	}
	slices.Sort(s.Cgroups)
	return s
}

// links lists the network interfaces.
func links() []string {
	out, err := exec.Command("ip", "-o", "link", "show").Output()
	if err != nil {
		return nil
	}
	var names []string
	for line := range strings.SplitSeq(string(out), "\n") {
		if fields := strings.Fields(line); len(fields) > 1 {
			names = append(names, strings.TrimSuffix(fields[1], ":"))
		}
	}
	return names
}

// ourChains lists the KUBE-*/CNI-* chains of iptables and ip6tables.
func ourChains() []string {
	var chains []string
	for _, family := range []string{"iptables-save", "ip6tables-save"} {
		out, _ := exec.Command(family).Output()
		for line := range strings.SplitSeq(string(out), "\n") {
			fields := strings.Fields(line)
			if len(fields) > 0 && strings.HasPrefix(fields[0], ":") && hasChainPrefix(strings.TrimPrefix(fields[0], ":")) {
				chains = append(chains, family+" "+fields[0])
			}
		}
	}
	return chains
}

// nodeMounts lists the mount points of a node's work directory or of containerd.
func nodeMounts() []string {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var points []string
	for line := range strings.SplitSeq(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) > 4 && (strings.Contains(fields[4], "/realnode-") || strings.HasPrefix(fields[4], "/run/containerd")) {
			points = append(points, fields[4])
		}
	}
	return points
}

// nodeProcessList lists the running processes named like a node's programs.
func nodeProcessList() []string {
	var procs []string
	comms, _ := filepath.Glob("/proc/[0-9]*/comm")
	for _, path := range comms {
		comm, err := os.ReadFile(path)
		if err == nil && slices.Contains(nodeProcesses, strings.TrimSpace(string(comm))) {
			procs = append(procs, fmt.Sprintf("%s (pid %s)", strings.TrimSpace(string(comm)), filepath.Base(filepath.Dir(path))))
		}
	}
	return procs
}

// String summarises a snapshot.
func (s HostSnapshot) String() string {
	return fmt.Sprintf("ip_forward=%s, %d links, %d KUBE-/CNI- chains, %d netns, %d kubepods cgroups, %d node mounts, %d node loop devices, %d node processes",
		s.IPForward, len(s.Links), len(s.Chains), len(s.Netns), len(s.Cgroups), len(s.Mounts), len(s.Loops), len(s.Processes))
}
