//go:build linux

package realnode

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// The pod network of the node: a bridge the harness creates before anything else, whose
// address is also the node's and the API server's address. It is reachable from the pods
// (their gateway) and from the host, and from nowhere else.
const (
	BridgeName = "dbo0"
	NodeIP     = "10.89.0.1"
	PodSubnet  = "10.89.0.0/24"
	bridgeCIDR = NodeIP + "/24"
	// ServiceSubnet is envtest's service range; DNSServiceIP is the kube-dns Service in it.
	ServiceSubnet = "10.0.0.0/24"
	DNSServiceIP  = "10.0.0.10"
	// APIServiceIP is the ClusterIP of the "kubernetes" Service (first address of the range).
	APIServiceIP = "10.0.0.1"
)

const ipForwardPath = "/proc/sys/net/ipv4/ip_forward"

// chainPrefixes name the iptables chains that kube-proxy and the CNI plugins create.
var chainPrefixes = []string{"KUBE-", "CNI-"}

// Preflight says why this machine cannot run a real node, or nil when it can.
func Preflight() error {
	if os.Geteuid() != 0 {
		return errors.New("the real-node tier needs root (kubelet, containerd, network namespaces, iptables)")
	}
	var missing []string
	for _, bin := range []string{"containerd", "containerd-shim-runc-v2", "runc", "ctr", "ip", "iptables", "iptables-save", "iptables-restore"} {
		if _, err := exec.LookPath(bin); err != nil {
			missing = append(missing, bin)
		}
	}
	for _, plugin := range []string{"bridge", "host-local", "loopback", "portmap"} {
		if _, err := os.Stat(filepath.Join(CNIBinDir, plugin)); err != nil {
			missing = append(missing, filepath.Join(CNIBinDir, plugin))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing %s (make host-packages installs Debian's containerd, runc, containernetworking-plugins, iptables and iproute2)",
			strings.Join(missing, ", "))
	}
	return nil
}

// hostState is what the node changes on the host and must give back: ip_forward, the bridge,
// iptables chains, network namespaces and cgroups that did not exist before.
type hostState struct {
	ipForward    string
	netnsBefore  []string
	cgroupBefore map[string]bool
}

// prepareHost removes what a crashed earlier run may have left (our bridge, KUBE-/CNI- chains),
// records the host's state and creates the bridge.
func prepareHost() (*hostState, error) {
	_ = ip("link", "delete", BridgeName)
	if err := removeChains(); err != nil {
		return nil, err
	}
	forward, err := os.ReadFile(ipForwardPath)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", ipForwardPath, err)
	}
	st := &hostState{ipForward: strings.TrimSpace(string(forward)), netnsBefore: listNetns(), cgroupBefore: kubepodsCgroups()}
	for _, args := range [][]string{
		{"link", "add", BridgeName, "type", "bridge"},
		{"addr", "add", bridgeCIDR, "dev", BridgeName},
		{"link", "set", BridgeName, "up"},
	} {
		if err := ip(args...); err != nil {
			return st, err
		}
	}
	if err := os.WriteFile(ipForwardPath, []byte("1"), 0o644); err != nil {
		return st, fmt.Errorf("enabling ip_forward: %w", err)
	}
	return st, nil
}

// restore gives the host back what prepareHost and the node changed. It runs every step and
// returns every error.
func (st *hostState) restore(workDir string) error {
	var errs []error
	errs = append(errs, unmountUnder(workDir), detachLoopsUnder(workDir))
	for _, ns := range listNetns() {
		if !slices.Contains(st.netnsBefore, ns) && strings.HasPrefix(ns, "cni-") {
			errs = append(errs, ip("netns", "delete", ns))
		}
	}
	errs = append(errs, removeChains())
	if err := ip("link", "show", BridgeName); err == nil {
		errs = append(errs, ip("link", "delete", BridgeName))
	}
	if st.ipForward != "" {
		if err := os.WriteFile(ipForwardPath, []byte(st.ipForward), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("restoring ip_forward: %w", err))
		}
	}
	errs = append(errs, removeCgroups(st.cgroupBefore))
	return errors.Join(errs...)
}

// removeChains deletes every iptables and ip6tables chain named KUBE-* or CNI-* and every
// rule that jumps to one, in every table, by restoring a filtered iptables-save.
func removeChains() error {
	var errs []error
	for _, family := range []string{"iptables", "ip6tables"} {
		if _, err := exec.LookPath(family + "-save"); err != nil {
			continue
		}
		out, err := exec.Command(family + "-save").Output()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s-save: %w", family, err))
			continue
		}
		filtered, changed := filterChains(out)
		if !changed {
			continue
		}
		cmd := exec.Command(family + "-restore")
		cmd.Stdin = bytes.NewReader(filtered)
		if out, err := cmd.CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("%s-restore: %w: %s", family, err, out))
		}
	}
	return errors.Join(errs...)
}

// filterChains drops from an iptables-save dump the chains named with chainPrefixes and every
// rule in them or jumping to them. It reports whether anything was dropped.
func filterChains(dump []byte) ([]byte, bool) {
	var buf bytes.Buffer
	changed := false
	sc := bufio.NewScanner(bytes.NewReader(dump))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if ours(line) {
			changed = true
			continue
		}
		buf.WriteString(line)
		buf.WriteByte('\n')
	}
	return buf.Bytes(), changed
}

// ours reports whether a line of iptables-save declares, fills or jumps to one of our chains.
func ours(line string) bool {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return false
	}
	if strings.HasPrefix(fields[0], ":") {
		return hasChainPrefix(strings.TrimPrefix(fields[0], ":"))
	}
	if fields[0] != "-A" || len(fields) < 2 {
		return false
	}
	if hasChainPrefix(fields[1]) {
		return true
	}
	for i, f := range fields {
		if (f == "-j" || f == "-g" || f == "--jump" || f == "--goto") && i+1 < len(fields) && hasChainPrefix(fields[i+1]) {
			return true
		}
	}
	return false
}

func hasChainPrefix(chain string) bool {
	for _, p := range chainPrefixes {
		if strings.HasPrefix(chain, p) {
			return true
		}
	}
	return false
}

// listNetns lists the named network namespaces (/run/netns).
func listNetns() []string {
	entries, _ := os.ReadDir("/run/netns")
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// unmountUnder lazily unmounts every mount point below dir, deepest first.
func unmountUnder(dir string) error {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return fmt.Errorf("reading mountinfo: %w", err)
	}
	var points []string
	for line := range strings.SplitSeq(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) > 4 && strings.HasPrefix(fields[4], dir+"/") {
			points = append(points, fields[4])
		}
	}
	slices.SortFunc(points, func(a, b string) int { return len(b) - len(a) })
	var errs []error
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("unmounting %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// loopDevices lists the loop devices whose backing file's path starts with prefix, as
// "<device> <backing file>" (losetup --list).
func loopDevices(prefix string) []string {
	out, err := exec.Command("losetup", "--noheadings", "--output", "NAME,BACK-FILE", "--list").Output()
	if err != nil {
		return nil
	}
	var found []string
	for line := range strings.SplitSeq(string(out), "\n") {
		if fields := strings.Fields(line); len(fields) > 1 && strings.HasPrefix(fields[1], prefix) {
			found = append(found, fields[0]+" "+fields[1])
		}
	}
	return found
}

// detachLoopsUnder detaches the loop devices of the sized volumes' images below dir (the
// simulated CSI driver's; after unmountUnder): those whose volumes were not deleted before Stop.
func detachLoopsUnder(dir string) error {
	var errs []error
	for _, loop := range loopDevices(dir + "/") {
		device, _, _ := strings.Cut(loop, " ")
		if out, err := exec.Command("losetup", "--detach", device).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("detaching %s: %w: %s", loop, err, bytes.TrimSpace(out)))
		}
	}
	return errors.Join(errs...)
}

// kubepodsCgroups lists the cgroup v1 directories named kubepods (the kubelet's, with the
// cgroupfs driver) that exist now.
func kubepodsCgroups() map[string]bool {
	found := map[string]bool{}
	matches, _ := filepath.Glob("/sys/fs/cgroup/*/kubepods")
	for _, m := range matches {
		found[m] = true
	}
	if _, err := os.Stat("/sys/fs/cgroup/kubepods"); err == nil {
		found["/sys/fs/cgroup/kubepods"] = true
	}
	return found
}

// removeCgroups removes the kubepods hierarchies that were not there before, deepest first.
func removeCgroups(before map[string]bool) error {
	var errs []error
	for dir := range kubepodsCgroups() {
		if before[dir] {
			continue
		}
		var dirs []string
		_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		slices.SortFunc(dirs, func(a, b string) int { return len(b) - len(a) })
		for _, d := range dirs {
			if err := os.Remove(d); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, fmt.Errorf("removing cgroup %s: %w", d, err))
			}
		}
	}
	return errors.Join(errs...)
}

// ip runs iproute2's ip and returns its output in the error.
func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}
