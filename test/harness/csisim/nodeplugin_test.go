//go:build linux

package csisim

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// TestNodePlugin calls the CSI node plugin over its sockets as the kubelet does, with real bind
// mounts in a temporary directory: registration, identity, capabilities, publish (read-write and
// read-only, idempotent), stats, unpublish, and the refusals. Root only (mount(2)).
func TestNodePlugin(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("TestNodePlugin needs root: the CSI node plugin bind-mounts volumes (run it as root, as make test does in CI)")
	}
	// Not t.TempDir(): a unix socket path must stay under 108 bytes.
	root, err := os.MkdirTemp("", "csinode-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cleanMounts(t, root) })
	volumes := filepath.Join(root, "volumes")
	kubeletRoot := filepath.Join(root, "kubelet")
	volume := volumeDirectory(volumes, "pvc-1")
	if err := os.MkdirAll(volume, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(volume, "before"), []byte("written before the mount"), 0o600); err != nil {
		t.Fatal(err)
	}
	plugin, err := StartNodePlugin(NodePluginConfig{NodeID: "node-0", VolumeDir: volumes, KubeletRootDir: kubeletRoot, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = plugin.Stop()
		}
	})
	if want := filepath.Join(kubeletRoot, "plugins_registry", ProvisionerName+"-reg.sock"); plugin.RegistrationSocket != want {
		t.Fatalf("registration socket %s, want %s", plugin.RegistrationSocket, want)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	testRegistration(ctx, t, plugin)
	conn := dial(t, plugin.Endpoint)
	testIdentity(ctx, t, csi.NewIdentityClient(conn))
	node := csi.NewNodeClient(conn)
	testNodeInfo(ctx, t, node)
	testPublish(ctx, t, node, kubeletRoot, volume)
	testRefusals(ctx, t, node, kubeletRoot)

	stopped = true
	if err := plugin.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, socket := range []string{plugin.Endpoint, plugin.RegistrationSocket} {
		if _, err := os.Stat(socket); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("socket %s left after Stop: %v", socket, err)
		}
	}
}

// testRegistration plays the kubelet's plugin watcher: GetInfo, then the verdict.
func testRegistration(ctx context.Context, t *testing.T, plugin *NodePlugin) {
	reg := registerapi.NewRegistrationClient(dial(t, plugin.RegistrationSocket))
	info, err := reg.GetInfo(ctx, &registerapi.InfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if info.Type != registerapi.CSIPlugin || info.Name != ProvisionerName || info.Endpoint != plugin.Endpoint ||
		!slices.Equal(info.SupportedVersions, []string{"1.0.0"}) {
		t.Fatalf("GetInfo: %v", info)
	}
	if _, err := reg.NotifyRegistrationStatus(ctx, &registerapi.RegistrationStatus{PluginRegistered: false, Error: "refused"}); err != nil {
		t.Fatal(err)
	}
	if err := plugin.Registered(ctx); err == nil || err.Error() != "the kubelet refused CSI driver "+ProvisionerName+": refused" {
		t.Fatalf("Registered after a refusal: %v", err)
	}
	if _, err := reg.NotifyRegistrationStatus(ctx, &registerapi.RegistrationStatus{PluginRegistered: true}); err != nil {
		t.Fatal(err)
	}
	if err := plugin.Registered(ctx); err != nil {
		t.Fatalf("Registered: %v", err)
	}
}

func testIdentity(ctx context.Context, t *testing.T, identity csi.IdentityClient) {
	info, err := identity.GetPluginInfo(ctx, &csi.GetPluginInfoRequest{})
	if err != nil || info.Name != ProvisionerName || info.VendorVersion != nodePluginVersion {
		t.Fatalf("GetPluginInfo: %v, %v", info, err)
	}
	caps, err := identity.GetPluginCapabilities(ctx, &csi.GetPluginCapabilitiesRequest{})
	if err != nil || len(caps.Capabilities) != 0 {
		t.Fatalf("GetPluginCapabilities: %v, %v", caps, err)
	}
	if _, err := identity.Probe(ctx, &csi.ProbeRequest{}); err != nil {
		t.Fatalf("Probe: %v", err)
	}
}

func testNodeInfo(ctx context.Context, t *testing.T, node csi.NodeClient) {
	info, err := node.NodeGetInfo(ctx, &csi.NodeGetInfoRequest{})
	if err != nil || info.NodeId != "node-0" || info.MaxVolumesPerNode != 0 || info.AccessibleTopology != nil {
		t.Fatalf("NodeGetInfo: %v, %v", info, err)
	}
	caps, err := node.NodeGetCapabilities(ctx, &csi.NodeGetCapabilitiesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var got []csi.NodeServiceCapability_RPC_Type
	for _, c := range caps.Capabilities {
		got = append(got, c.GetRpc().GetType())
	}
	// No STAGE_UNSTAGE_VOLUME: the kubelet publishes straight away.
	want := []csi.NodeServiceCapability_RPC_Type{csi.NodeServiceCapability_RPC_GET_VOLUME_STATS, csi.NodeServiceCapability_RPC_EXPAND_VOLUME}
	if !slices.Equal(got, want) {
		t.Fatalf("node capabilities %v, want %v", got, want)
	}
}

// testPublish publishes the volume read-write and read-only to two targets as the kubelet names
// them, writes through one, reads the stats, and unpublishes both.
func testPublish(ctx context.Context, t *testing.T, node csi.NodeClient, kubeletRoot, volume string) {
	rw := filepath.Join(kubeletRoot, "pods", "uid-a", "volumes", "kubernetes.io~csi", "pvc-1", "mount")
	ro := filepath.Join(kubeletRoot, "pods", "uid-b", "volumes", "kubernetes.io~csi", "pvc-1", "mount")
	mountCap := &csi.VolumeCapability{AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{FsType: "ext4"}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}
	for range 2 { // The second call finds the target mounted: success, no second mount.
		if _, err := node.NodePublishVolume(ctx, &csi.NodePublishVolumeRequest{VolumeId: "pvc-1", TargetPath: rw, VolumeCapability: mountCap}); err != nil {
			t.Fatalf("NodePublishVolume: %v", err)
		}
	}
	if n := mountCount(t, rw); n != 1 {
		t.Fatalf("%s mounted %d times, want once", rw, n)
	}
	if data, err := os.ReadFile(filepath.Join(rw, "before")); err != nil || string(data) != "written before the mount" {
		t.Fatalf("reading through the mount: %q, %v", data, err)
	}
	if err := os.WriteFile(filepath.Join(rw, "through"), []byte("written through the mount"), 0o600); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(volume, "through")); err != nil || string(data) != "written through the mount" {
		t.Fatalf("the write through the mount is not in the volume's directory: %q, %v", data, err)
	}
	if _, err := node.NodePublishVolume(ctx, &csi.NodePublishVolumeRequest{VolumeId: "pvc-1", TargetPath: ro, VolumeCapability: mountCap, Readonly: true}); err != nil {
		t.Fatalf("NodePublishVolume read-only: %v", err)
	}
	if err := os.WriteFile(filepath.Join(ro, "refused"), nil, 0o600); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("writing through the read-only mount: %v, want EROFS", err)
	}

	stats, err := node.NodeGetVolumeStats(ctx, &csi.NodeGetVolumeStatsRequest{VolumeId: "pvc-1", VolumePath: rw})
	if err != nil {
		t.Fatal(err)
	}
	if len(stats.Usage) != 2 || stats.Usage[0].Unit != csi.VolumeUsage_BYTES || stats.Usage[1].Unit != csi.VolumeUsage_INODES {
		t.Fatalf("NodeGetVolumeStats: %v", stats)
	}
	for _, u := range stats.Usage {
		if u.Total <= 0 || u.Used <= 0 || u.Available < 0 || u.Used > u.Total {
			t.Fatalf("NodeGetVolumeStats %s: %v", u.Unit, u)
		}
	}
	if _, err := node.NodeExpandVolume(ctx, &csi.NodeExpandVolumeRequest{VolumeId: "pvc-1", VolumePath: rw,
		CapacityRange: &csi.CapacityRange{RequiredBytes: 2 << 30}}); err != nil {
		t.Fatalf("NodeExpandVolume: %v", err)
	}

	for _, target := range []string{rw, ro} {
		for range 2 { // The second call finds nothing to undo: success.
			if _, err := node.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: "pvc-1", TargetPath: target}); err != nil {
				t.Fatalf("NodeUnpublishVolume %s: %v", target, err)
			}
		}
		if n := mountCount(t, target); n != 0 {
			t.Fatalf("%s still mounted", target)
		}
		if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("target %s not removed: %v", target, err)
		}
	}
	if data, err := os.ReadFile(filepath.Join(volume, "through")); err != nil || string(data) != "written through the mount" {
		t.Fatalf("the volume's data after the unmount: %q, %v", data, err)
	}
}

// testRefusals: handles that would leave the volume directory, missing volumes, block volumes,
// relative targets.
func testRefusals(ctx context.Context, t *testing.T, node csi.NodeClient, kubeletRoot string) {
	target := filepath.Join(kubeletRoot, "pods", "uid-c", "mount")
	mountCap := &csi.VolumeCapability{AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}}}
	blockCap := &csi.VolumeCapability{AccessType: &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}}}
	for _, c := range []struct {
		what string
		req  *csi.NodePublishVolumeRequest
		code codes.Code
	}{
		{"a handle with a slash", &csi.NodePublishVolumeRequest{VolumeId: "../pvc-1", TargetPath: target, VolumeCapability: mountCap}, codes.InvalidArgument},
		{"the parent directory", &csi.NodePublishVolumeRequest{VolumeId: "..", TargetPath: target, VolumeCapability: mountCap}, codes.InvalidArgument},
		{"a missing volume", &csi.NodePublishVolumeRequest{VolumeId: "pvc-missing", TargetPath: target, VolumeCapability: mountCap}, codes.NotFound},
		{"a block volume", &csi.NodePublishVolumeRequest{VolumeId: "pvc-1", TargetPath: target, VolumeCapability: blockCap}, codes.InvalidArgument},
		{"a relative target", &csi.NodePublishVolumeRequest{VolumeId: "pvc-1", TargetPath: "mount", VolumeCapability: mountCap}, codes.InvalidArgument},
	} {
		if _, err := node.NodePublishVolume(ctx, c.req); status.Code(err) != c.code {
			t.Errorf("NodePublishVolume of %s: %v, want %s", c.what, err, c.code)
		}
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused publish created %s: %v", target, err)
	}
	if _, err := node.NodeGetVolumeStats(ctx, &csi.NodeGetVolumeStatsRequest{VolumeId: "pvc-1", VolumePath: target}); status.Code(err) != codes.NotFound {
		t.Errorf("NodeGetVolumeStats of a missing path: %v, want NotFound", err)
	}
}

func dial(t *testing.T, socket string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// mountCount counts the mounts on path.
func mountCount(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == path {
			n++
		}
	}
	return n
}

// cleanMounts detaches whatever a failed test left mounted under root, then removes root.
func cleanMounts(t *testing.T, root string) {
	for {
		mounted := false
		data, _ := os.ReadFile("/proc/self/mountinfo")
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], root+"/") {
				mounted = true
				if err := syscall.Unmount(f[4], syscall.MNT_DETACH); err != nil {
					t.Errorf("unmounting %s: %v", f[4], err)
					return
				}
			}
		}
		if !mounted {
			break
		}
	}
	if err := os.RemoveAll(root); err != nil {
		t.Errorf("removing %s: %v", root, err)
	}
}
