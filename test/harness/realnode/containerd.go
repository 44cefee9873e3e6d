//go:build linux

package realnode

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// CNIBinDir holds Debian's CNI plugins (package containernetworking-plugins).
const CNIBinDir = "/usr/lib/cni"

// SandboxImage is the CRI sandbox ("pause") image: a tiny static program built by
// make node-images, since no registry is reachable.
const SandboxImage = "database-operator.test/pause:v1"

// containerdConfig is containerd 1.6's configuration: its own root, state and socket, runc
// with cgroupfs, and restrict_oom_score_adj, without which every sandbox fails here (root lacks
// CAP_SYS_RESOURCE: "can't get final child's PID from pipe: EOF").
func containerdConfig(dir string) string {
	return fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]

[grpc]
  address = %[3]q

[ttrpc]
  address = %[4]q

[plugins."io.containerd.internal.v1.opt"]
  path = %[5]q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[6]q
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %[7]q
    conf_dir = %[8]q
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = %[9]q
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), containerdSocket(dir), filepath.Join(dir, "ttrpc.sock"),
		filepath.Join(dir, "opt"), SandboxImage, CNIBinDir, filepath.Join(dir, "net.d"), mirrorsDir(dir))
}

// mirrorsDir holds containerd's hosts configuration (<host>/hosts.toml, see writeMirrors).
func mirrorsDir(dir string) string { return filepath.Join(dir, "certs.d") }

// containerdSocket is containerd's gRPC socket in dir.
func containerdSocket(dir string) string { return filepath.Join(dir, "containerd.sock") }

// cniConfig is the pod network: a bridge with host-local addresses, masquerading traffic that
// leaves the subnet, and port mappings.
func cniConfig(ipamDir string) string {
	return fmt.Sprintf(`{
  "cniVersion": "0.4.0",
  "name": "database-operator-test",
  "plugins": [
    {
      "type": "bridge",
      "bridge": %[1]q,
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": %[2]q,
        "ranges": [[{"subnet": %[3]q, "gateway": %[4]q}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`, BridgeName, ipamDir, PodSubnet, NodeIP)
}

// writeContainerdFiles writes containerd's and the CNI's configuration into dir, with a mirror
// to registry (when not nil) for each of its hosts.
func writeContainerdFiles(dir string, registry *Registry) (string, error) {
	for _, d := range []string{dir, filepath.Join(dir, "net.d"), filepath.Join(dir, "ipam")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", fmt.Errorf("creating %s: %w", d, err)
		}
	}
	if err := writeMirrors(mirrorsDir(dir), registry); err != nil {
		return "", fmt.Errorf("writing containerd's registry mirrors: %w", err)
	}
	path := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(path, []byte(containerdConfig(dir)), 0o644); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	cni := filepath.Join(dir, "net.d", "10-database-operator-test.conflist")
	if err := os.WriteFile(cni, []byte(cniConfig(filepath.Join(dir, "ipam"))), 0o644); err != nil {
		return "", fmt.Errorf("writing %s: %w", cni, err)
	}
	return path, nil
}

// ctr runs "ctr -n k8s.io" against the node's containerd.
func ctr(ctx context.Context, dir string, args ...string) ([]byte, error) {
	full := append([]string{"--address", containerdSocket(dir), "--namespace", "k8s.io"}, args...)
	out, err := exec.CommandContext(ctx, "ctr", full...).CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return out, nil
}

// importImages imports every tarball listed in imagesFile ("<tarball> <image ref>" per line,
// tarball relative to the file's directory unless absolute) and checks that the reference is
// there afterwards.
func importImages(ctx context.Context, dir, imagesFile string) ([]string, error) {
	lines, err := readImageList(imagesFile)
	if err != nil {
		return nil, err
	}
	var refs []string
	for _, l := range lines {
		if len(l.fields) != 2 {
			continue
		}
		ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		_, err := ctr(ctx, dir, "images", "import", "--snapshotter", "overlayfs", l.fields[0])
		cancel()
		if err != nil {
			return refs, err
		}
		refs = append(refs, l.fields[1])
	}
	out, err := ctr(ctx, dir, "images", "list", "--quiet")
	if err != nil {
		return refs, err
	}
	have := string(out)
	for _, ref := range refs {
		if !strings.Contains(have, normalize(ref)) {
			return refs, fmt.Errorf("image %s is not in containerd after the import (have:\n%s)", ref, have)
		}
	}
	return refs, nil
}

// normalize returns the fully qualified form containerd stores a reference under.
func normalize(ref string) string {
	first, _, found := strings.Cut(ref, "/")
	if !found || (!strings.ContainsAny(first, ".:") && first != "localhost") {
		if !found {
			ref = "library/" + ref
		}
		return "docker.io/" + ref
	}
	return ref
}
