//go:build linux

package csisim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

const (
	// nodePluginVersion is the vendor version the plugin reports.
	nodePluginVersion = "v1.0.0"
	// stopGrace is how long Stop lets calls in flight finish before it cuts them.
	stopGrace = 5 * time.Second
)

// NodePluginConfig configures StartNodePlugin.
type NodePluginConfig struct {
	// NodeID is the node's name; the kubelet writes it into the CSINode object.
	NodeID string
	// VolumeDir holds the volumes' directories, VolumeDir/<volume handle>: Config.LocalDir of the
	// provisioner.
	VolumeDir string
	// KubeletRootDir is the kubelet's --root-dir. The plugin serves CSI on
	// <root>/plugins/<driver>/csi.sock and the kubelet's plugin registration on
	// <root>/plugins_registry/<driver>-reg.sock, where the kubelet's plugin watcher finds it.
	KubeletRootDir string
	// Logf receives the calls and the registration result (default: discarded).
	Logf func(format string, args ...any)
}

// NodePlugin is the node half of the simulated CSI driver, a real CSI node plugin: the
// Identity and Node services on a unix socket, and the kubelet's plugin registration service.
// NodePublishVolume bind-mounts the volume's directory onto the kubelet's target path and
// NodeUnpublishVolume unmounts it, so a pod on a real kubelet writes into VolumeDir/<handle>,
// the directory the provisioner's snapshots copy. There is no stage step (no
// STAGE_UNSTAGE_VOLUME) and no controller service (the provisioner plays it). Stop it when done.
type NodePlugin struct {
	// Endpoint is the CSI socket, RegistrationSocket the plugin registration socket.
	Endpoint, RegistrationSocket string

	cfg     NodePluginConfig
	servers []*grpc.Server
	done    sync.WaitGroup
	// registered receives the kubelet's NotifyRegistrationStatus calls.
	registered chan *registerapi.RegistrationStatus
}

// StartNodePlugin serves the plugin until Stop.
func StartNodePlugin(cfg NodePluginConfig) (*NodePlugin, error) {
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.NodeID == "" || cfg.VolumeDir == "" || cfg.KubeletRootDir == "" {
		return nil, errors.New("the CSI node plugin needs NodeID, VolumeDir and KubeletRootDir")
	}
	p := &NodePlugin{
		Endpoint:           filepath.Join(cfg.KubeletRootDir, "plugins", ProvisionerName, "csi.sock"),
		RegistrationSocket: filepath.Join(cfg.KubeletRootDir, "plugins_registry", ProvisionerName+"-reg.sock"),
		cfg:                cfg,
		registered:         make(chan *registerapi.RegistrationStatus, 4),
	}
	csiServer := grpc.NewServer()
	csi.RegisterIdentityServer(csiServer, identityServer{})
	csi.RegisterNodeServer(csiServer, &nodeServer{cfg: cfg})
	regServer := grpc.NewServer()
	registerapi.RegisterRegistrationServer(regServer, &registrationServer{endpoint: p.Endpoint, plugin: p})
	// The CSI socket first: the kubelet dials it as soon as it finds the registration socket.
	for _, s := range []struct {
		server *grpc.Server
		path   string
	}{{csiServer, p.Endpoint}, {regServer, p.RegistrationSocket}} {
		listener, err := listenUnix(s.path)
		if err != nil {
			return nil, errors.Join(err, p.Stop())
		}
		p.servers = append(p.servers, s.server)
		p.done.Go(func() { _ = s.server.Serve(listener) })
	}
	cfg.Logf("CSI node plugin %s serving %s, registration %s", ProvisionerName, p.Endpoint, p.RegistrationSocket)
	return p, nil
}

// listenUnix listens on a fresh unix socket at path, removing a stale one a crashed run left.
func listenUnix(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("creating the directory of socket %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("removing stale socket %s: %w", path, err)
	}
	listener, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", path, err)
	}
	return listener, nil
}

// Registered waits until the kubelet reports the outcome of the plugin's registration and
// returns nil if it registered the driver.
func (p *NodePlugin) Registered(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return fmt.Errorf("the kubelet did not register CSI driver %s: %w", ProvisionerName, ctx.Err())
	case st := <-p.registered:
		if !st.PluginRegistered {
			return fmt.Errorf("the kubelet refused CSI driver %s: %s", ProvisionerName, st.Error)
		}
		return nil
	}
}

// Stop stops serving, lets calls in flight finish for a few seconds, and removes the sockets
// (the kubelet's plugin watcher then deregisters the driver). Mounts made for pods are the
// kubelet's to undo (NodeUnpublishVolume when their pods go).
func (p *NodePlugin) Stop() error {
	for _, s := range p.servers {
		stopped := make(chan struct{})
		go func() {
			s.GracefulStop()
			close(stopped)
		}()
		select {
		case <-stopped:
		case <-time.After(stopGrace):
			s.Stop()
		}
	}
	p.done.Wait()
	var errs []error
	for _, path := range []string{p.RegistrationSocket, p.Endpoint} {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("removing socket %s: %w", path, err))
		}
	}
	return errors.Join(errs...)
}

// registrationServer is the kubelet's plugin registration service (pluginregistration/v1).
type registrationServer struct {
	registerapi.UnimplementedRegistrationServer
	endpoint string
	plugin   *NodePlugin
}

// GetInfo tells the kubelet this is a CSI plugin, its name, its CSI endpoint and versions.
func (r *registrationServer) GetInfo(context.Context, *registerapi.InfoRequest) (*registerapi.PluginInfo, error) {
	return &registerapi.PluginInfo{
		Type:              registerapi.CSIPlugin,
		Name:              ProvisionerName,
		Endpoint:          r.endpoint,
		SupportedVersions: []string{"1.0.0"},
	}, nil
}

// NotifyRegistrationStatus receives the kubelet's verdict.
func (r *registrationServer) NotifyRegistrationStatus(_ context.Context, st *registerapi.RegistrationStatus) (*registerapi.RegistrationStatusResponse, error) {
	r.plugin.cfg.Logf("CSI node plugin %s: registered by the kubelet: %v %s", ProvisionerName, st.PluginRegistered, st.Error)
	select {
	case r.plugin.registered <- st:
	default: // Nobody waits: the log line is enough.
	}
	return &registerapi.RegistrationStatusResponse{}, nil
}

// identityServer is the CSI Identity service.
type identityServer struct {
	csi.UnimplementedIdentityServer
}

// GetPluginInfo names the driver.
func (identityServer) GetPluginInfo(context.Context, *csi.GetPluginInfoRequest) (*csi.GetPluginInfoResponse, error) {
	return &csi.GetPluginInfoResponse{Name: ProvisionerName, VendorVersion: nodePluginVersion}, nil
}

// GetPluginCapabilities reports none: no controller service here (the provisioner plays the
// controller side through the API, as the sidecars would) and no topology.
func (identityServer) GetPluginCapabilities(context.Context, *csi.GetPluginCapabilitiesRequest) (*csi.GetPluginCapabilitiesResponse, error) {
	return &csi.GetPluginCapabilitiesResponse{}, nil
}

// Probe says the plugin is ready.
func (identityServer) Probe(context.Context, *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	return &csi.ProbeResponse{}, nil
}

// nodeServer is the CSI Node service over the volumes' directories.
type nodeServer struct {
	csi.UnimplementedNodeServer
	cfg NodePluginConfig
	// mu serializes publish and unpublish: the kubelet may call both for one target at once
	// when a pod is deleted while it starts.
	mu sync.Mutex
}

// NodeGetInfo gives the node's ID and no volume limit.
func (n *nodeServer) NodeGetInfo(context.Context, *csi.NodeGetInfoRequest) (*csi.NodeGetInfoResponse, error) {
	return &csi.NodeGetInfoResponse{NodeId: n.cfg.NodeID}, nil
}

// NodeGetCapabilities: volume stats, and expansion (nothing to grow in a directory, but the
// kubelet then completes a resize the provisioner reported); no stage step.
func (n *nodeServer) NodeGetCapabilities(context.Context, *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	var caps []*csi.NodeServiceCapability
	for _, t := range []csi.NodeServiceCapability_RPC_Type{csi.NodeServiceCapability_RPC_GET_VOLUME_STATS, csi.NodeServiceCapability_RPC_EXPAND_VOLUME} {
		caps = append(caps, &csi.NodeServiceCapability{Type: &csi.NodeServiceCapability_Rpc{Rpc: &csi.NodeServiceCapability_RPC{Type: t}}})
	}
	return &csi.NodeGetCapabilitiesResponse{Capabilities: caps}, nil
}

// NodePublishVolume bind-mounts the volume's directory onto the target path, which it creates;
// read-only when asked. A target already mounted is success (the call is idempotent).
func (n *nodeServer) NodePublishVolume(_ context.Context, req *csi.NodePublishVolumeRequest) (*csi.NodePublishVolumeResponse, error) {
	source, err := n.volumePath(req.GetVolumeId())
	if err != nil {
		return nil, err
	}
	if req.GetVolumeCapability().GetMount() == nil {
		return nil, status.Error(codes.InvalidArgument, "only mount volumes are supported (no block volumes): the volume is a directory")
	}
	if _, err := os.Stat(source); err != nil {
		return nil, status.Errorf(codes.NotFound, "volume %s: %v", req.GetVolumeId(), err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	target := req.GetTargetPath()
	mounted, err := targetMounted(target)
	if err != nil || mounted {
		return &csi.NodePublishVolumeResponse{}, err
	}
	if err := os.MkdirAll(target, 0o750); err != nil {
		return nil, status.Errorf(codes.Internal, "creating target %s: %v", target, err)
	}
	if err := syscall.Mount(source, target, "", syscall.MS_BIND, ""); err != nil {
		return nil, status.Errorf(codes.Internal, "bind-mounting %s on %s: %v", source, target, err)
	}
	if req.GetReadonly() {
		// A bind mount takes MS_RDONLY only on a remount.
		if err := syscall.Mount("", target, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
			_ = syscall.Unmount(target, 0)
			return nil, status.Errorf(codes.Internal, "making %s read-only: %v", target, err)
		}
	}
	n.cfg.Logf("CSI node plugin: published %s on %s (read-only %v)", req.GetVolumeId(), target, req.GetReadonly())
	return &csi.NodePublishVolumeResponse{}, nil
}

// NodeUnpublishVolume unmounts the target and removes it; a target already gone is success.
func (n *nodeServer) NodeUnpublishVolume(_ context.Context, req *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	if _, err := n.volumePath(req.GetVolumeId()); err != nil {
		return nil, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	target := req.GetTargetPath()
	mounted, err := targetMounted(target)
	if err != nil {
		return nil, err
	}
	if mounted {
		if err := syscall.Unmount(target, 0); err != nil {
			return nil, status.Errorf(codes.Internal, "unmounting %s: %v", target, err)
		}
		n.cfg.Logf("CSI node plugin: unpublished %s from %s", req.GetVolumeId(), target)
	}
	if err := os.Remove(target); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, status.Errorf(codes.Internal, "removing target %s: %v", target, err)
	}
	return &csi.NodeUnpublishVolumeResponse{}, nil
}

// NodeGetVolumeStats reports the bytes and inodes of the filesystem holding the volume (the
// host's for a directory, which has no size of its own; the volume's own for a sized file
// system), which the kubelet exports as kubelet_volume_stats_*.
func (n *nodeServer) NodeGetVolumeStats(_ context.Context, req *csi.NodeGetVolumeStatsRequest) (*csi.NodeGetVolumeStatsResponse, error) {
	if _, err := n.volumePath(req.GetVolumeId()); err != nil {
		return nil, err
	}
	path := req.GetVolumePath()
	if path == "" {
		return nil, status.Error(codes.InvalidArgument, "volume path is empty")
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(path, &fs); err != nil {
		if errors.Is(err, syscall.ENOENT) {
			return nil, status.Errorf(codes.NotFound, "volume path %s: %v", path, err)
		}
		return nil, status.Errorf(codes.Internal, "statfs %s: %v", path, err)
	}
	bsize := fs.Bsize
	return &csi.NodeGetVolumeStatsResponse{Usage: []*csi.VolumeUsage{
		{
			Unit:      csi.VolumeUsage_BYTES,
			Total:     int64(fs.Blocks) * bsize,
			Available: int64(fs.Bavail) * bsize,
			Used:      int64(fs.Blocks-fs.Bfree) * bsize,
		},
		{
			Unit:      csi.VolumeUsage_INODES,
			Total:     int64(fs.Files),
			Available: int64(fs.Ffree),
			Used:      int64(fs.Files - fs.Ffree),
		},
	}}, nil
}

// NodeExpandVolume has nothing to grow: a directory takes what its filesystem has, and the
// provisioner has grown a sized file system before it reported the claim's new size.
func (n *nodeServer) NodeExpandVolume(_ context.Context, req *csi.NodeExpandVolumeRequest) (*csi.NodeExpandVolumeResponse, error) {
	if _, err := n.volumePath(req.GetVolumeId()); err != nil {
		return nil, err
	}
	return &csi.NodeExpandVolumeResponse{CapacityBytes: req.GetCapacityRange().GetRequiredBytes()}, nil
}

// volumePath is the directory of a volume handle, which must be one plain path element.
func (n *nodeServer) volumePath(handle string) (string, error) {
	if handle == "" || handle == "." || handle == ".." || strings.ContainsRune(handle, '/') {
		return "", status.Errorf(codes.InvalidArgument, "volume ID %q is not a volume handle of %s", handle, ProvisionerName)
	}
	return volumeDirectory(n.cfg.VolumeDir, handle), nil
}

// targetMounted checks that a target is an absolute path and reports whether it is mounted.
func targetMounted(target string) (bool, error) {
	if target == "" || !filepath.IsAbs(target) {
		return false, status.Errorf(codes.InvalidArgument, "target path %q is not an absolute path", target)
	}
	mounted, err := isMountPoint(target)
	if err != nil {
		return false, status.Error(codes.Internal, err.Error())
	}
	return mounted, nil
}
