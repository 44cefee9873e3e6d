//go:build linux

// Package realnode runs one real Kubernetes node next to the local control plane of
// test/harness/controlplane: Debian's containerd with runc and the CNI bridge plugin, a kubelet and
// kube-proxy built from hack/node, the simulated CSI driver's node plugin, and CoreDNS as the
// cluster DNS. Containers really run; images come from tarballs imported into containerd
// (nothing can be pulled here). Volumes are directories of the work directory that the CSI node
// plugin mounts into pods; their snapshots are copies of them (package csisim, directory mode).
//
// The node needs root and changes the host: a bridge (BridgeName, NodeIP), ip_forward,
// iptables chains, network namespaces, mounts and cgroups. Stop deletes every pod while the
// kubelet still runs (so volumes are unmounted and networks torn down by their owners), stops
// the processes, then gives all of it back, also when a test failed; Start also removes what a
// crashed earlier run left behind.
package realnode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/seed1b407122/database-operator/test/harness/controlplane"
	"github.com/seed1b407122/database-operator/test/harness/csisim"
	"github.com/seed1b407122/database-operator/test/harness/proc"
)

const (
	readyTimeout = 3 * time.Minute
	stopTimeout  = 15 * time.Second
	drainTimeout = 2 * time.Minute
	pollInterval = 200 * time.Millisecond
)

// Options configure Start.
type Options struct {
	// BinDir holds the control plane binaries (default $KUBEBUILDER_ASSETS).
	BinDir string
	// NodeBinDir holds kubelet and kube-proxy (default $NODE_ENV_DIR, make test-env-node).
	NodeBinDir string
	// ImagesFile lists the image tarballs to import ("<tarball> <ref>" per line; default
	// $NODE_IMAGES_DIR/images.txt, make node-images).
	ImagesFile string
	// RegistryFile lists the images of the node's registry ("<layout> <ref:tag> <ref@digest>"
	// per line; default $NODE_IMAGES_DIR/registry.txt when it exists, make node-images); empty:
	// no registry.
	RegistryFile string
	// RegistryKey is the public key (cosign.pub) every image of RegistryFile must be signed
	// with; Start verifies each one (signature and provenance, image-tool verify) before it
	// starts anything else (default: cosign.pub beside RegistryFile, make node-images).
	RegistryKey string
	// ReleaseDir is a release directory (make release) whose images the registry serves in
	// place of RegistryFile's of the same tag or digest, verified against the release's own
	// cosign.pub (default $NODE_RELEASE_DIR; empty: RegistryFile's images only).
	ReleaseDir string
	// ImageTool is hack/images' image-tool, which serves and verifies the registry (default
	// $IMAGE_TOOL).
	ImageTool string
	// CRDDirectoryPaths are installed before Start returns.
	CRDDirectoryPaths []string
	// Log receives progress lines (default: discarded).
	Log io.Writer
}

// Node is a running control plane with one real node. Stop it when done.
type Node struct {
	*controlplane.Cluster
	// Images are the references imported into containerd.
	Images []string
	// Registry is the registry containerd pulls from (nil without Options.RegistryFile).
	Registry *Registry

	dir     string
	host    *hostState
	kubelet *proc.Process
	procs   []*proc.Process // containerd, kubelet, kube-proxy, in start order
	csi     *csisim.NodePlugin
	log     io.Writer
	stopped func() error // stop, run once: see Stop
}

// Start brings up the control plane, the node and CoreDNS, and returns once the node is Ready
// and CoreDNS answers.
func Start(ctx context.Context, opts Options) (*Node, error) {
	if err := Preflight(); err != nil {
		return nil, err
	}
	defaults(&opts)
	began := time.Now()
	dir, err := os.MkdirTemp("", "realnode-")
	if err != nil {
		return nil, fmt.Errorf("creating a work directory: %w", err)
	}
	n := &Node{dir: dir, log: opts.Log}
	n.stopped = sync.OnceValue(n.stop)
	if err := n.start(ctx, opts); err != nil {
		return nil, errors.Join(err, n.Stop())
	}
	n.printf("Real node %s Ready with CoreDNS in %s (work directory %s)", NodeName, time.Since(began).Round(time.Millisecond), dir)
	return n, nil
}

func defaults(opts *Options) {
	if opts.BinDir == "" {
		opts.BinDir = os.Getenv("KUBEBUILDER_ASSETS")
	}
	if opts.NodeBinDir == "" {
		opts.NodeBinDir = os.Getenv("NODE_ENV_DIR")
	}
	if opts.ImagesFile == "" && os.Getenv("NODE_IMAGES_DIR") != "" {
		opts.ImagesFile = filepath.Join(os.Getenv("NODE_IMAGES_DIR"), "images.txt")
	}
	if opts.RegistryFile == "" && os.Getenv("NODE_IMAGES_DIR") != "" {
		if file := filepath.Join(os.Getenv("NODE_IMAGES_DIR"), "registry.txt"); fileExists(file) {
			opts.RegistryFile = file
		}
	}
	if opts.RegistryKey == "" && opts.RegistryFile != "" {
		opts.RegistryKey = defaultRegistryKey(opts.RegistryFile)
	}
	if opts.ReleaseDir == "" {
		opts.ReleaseDir = os.Getenv("NODE_RELEASE_DIR")
	}
	if opts.ImageTool == "" {
		opts.ImageTool = os.Getenv("IMAGE_TOOL")
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
}

func fileExists(file string) bool {
	_, err := os.Stat(file)
	return err == nil
}

func (n *Node) start(ctx context.Context, opts Options) error {
	var err error
	if n.host, err = prepareHost(); err != nil {
		return err
	}
	// The registry's images are verified first: nothing is installed from an image whose
	// content, signature or provenance does not verify.
	if opts.RegistryFile != "" {
		if opts.ImageTool == "" {
			return fmt.Errorf("a registry (%s) needs Options.ImageTool or $IMAGE_TOOL", opts.RegistryFile)
		}
		lists, err := registryLists(opts, n.dir)
		if err != nil {
			return err
		}
		if err := n.startRegistry(ctx, opts.ImageTool, lists); err != nil {
			return err
		}
		if err := n.verifyRegistry(ctx, opts.ImageTool); err != nil {
			return err
		}
	}
	if err := n.startControlPlane(ctx, opts); err != nil {
		return err
	}
	if err := n.startContainerd(ctx, opts.ImagesFile); err != nil {
		return err
	}
	if err := n.startKubelet(ctx, opts.NodeBinDir); err != nil {
		return err
	}
	if err := n.startKubeProxy(opts.NodeBinDir); err != nil {
		return err
	}
	return n.startDNS(ctx)
}

// startControlPlane starts the local cluster without simulated nodes, its API server on the
// node's address with a certificate pods can verify, Node authorization and NodeRestriction,
// and ServiceAccount admission (token volumes).
func (n *Node) startControlPlane(ctx context.Context, opts Options) error {
	port, err := proc.FreePort(NodeIP)
	if err != nil {
		return err
	}
	certDir := filepath.Join(n.dir, "cluster", "apiserver")
	cluster, err := controlplane.Start(ctx, controlplane.Options{
		BinDir:            opts.BinDir,
		WorkDir:           filepath.Join(n.dir, "cluster"),
		CRDDirectoryPaths: opts.CRDDirectoryPaths,
		Log:               opts.Log,
		NoSimulatedNodes:  true,
		LocalVolumeDir:    n.volumeDir(),
		ConfigureAPIServer: func(s *envtest.APIServer) error {
			s.Address = NodeIP
			s.Port = itoa(port)
			if err := writeServingCerts(s); err != nil {
				return err
			}
			if err := writeKubeletClientCerts(s.CertDir); err != nil {
				return err
			}
			args := s.Configure()
			args.Set("kubelet-client-certificate", filepath.Join(s.CertDir, kubeletClientCertFile))
			args.Set("kubelet-client-key", filepath.Join(s.CertDir, kubeletClientKeyFile))
			args.Set("advertise-address", NodeIP)
			args.Set("endpoint-reconciler-type", "lease")
			args.Set("authorization-mode", "Node,RBAC")
			args.Set("enable-admission-plugins", "NodeRestriction")
			args.Disable("disable-admission-plugins")
			args.Set("kubelet-preferred-address-types", "InternalIP,Hostname")
			return nil
		},
		// Pods trust the API server through the kube-root-ca.crt ConfigMap of every namespace.
		ControllerManagerArgs: []string{"--root-ca-file=" + filepath.Join(certDir, CAFile)},
	})
	if err != nil {
		return err
	}
	n.Cluster = cluster
	return nil
}

// startContainerd starts containerd and imports the images.
func (n *Node) startContainerd(ctx context.Context, imagesFile string) error {
	dir := filepath.Join(n.dir, "containerd")
	config, err := writeContainerdFiles(dir, n.Registry)
	if err != nil {
		return err
	}
	p, err := n.startProc("containerd", "containerd", "--config", config)
	if err != nil {
		return err
	}
	if err := n.waitFor(ctx, "containerd", func(ctx context.Context) (bool, error) {
		_, err := ctr(ctx, dir, "version")
		return err == nil, nil
	}); err != nil {
		return err
	}
	began := time.Now()
	if n.Images, err = importImages(ctx, dir, imagesFile); err != nil {
		return fmt.Errorf("%w (containerd log %s)", err, p.LogPath)
	}
	n.printf("Imported %d images in %s", len(n.Images), time.Since(began).Round(time.Millisecond))
	return nil
}

// startKubelet starts the kubelet as system:node:<NodeName> and waits for the node to be Ready.
func (n *Node) startKubelet(ctx context.Context, binDir string) error {
	dir := filepath.Join(n.dir, "kubelet")
	kubeconfig, err := n.userKubeconfig("system:node:"+NodeName, "system:nodes")
	if err != nil {
		return err
	}
	port, err := proc.FreePort(NodeIP)
	if err != nil {
		return err
	}
	healthz, err := proc.FreePort("127.0.0.1")
	if err != nil {
		return err
	}
	ca := filepath.Join(n.WorkDir, "apiserver", kubeletClientCAFile)
	config, err := writeKubeletFiles(dir, ca, containerdSocket(filepath.Join(n.dir, "containerd")), port, healthz)
	if err != nil {
		return err
	}
	if n.kubelet, err = n.startProc("kubelet", filepath.Join(binDir, "kubelet"), kubeletArgs(dir, config, kubeconfig)...); err != nil {
		return err
	}
	if err := n.startCSINodePlugin(ctx, filepath.Join(dir, "root")); err != nil {
		return err
	}
	return n.waitFor(ctx, "node "+NodeName+" Ready", func(ctx context.Context) (bool, error) {
		var node corev1.Node
		if err := n.Client().Get(ctx, client.ObjectKey{Name: NodeName}, &node); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	})
}

// volumeDir holds the volumes' directories and their snapshots' copies.
func (n *Node) volumeDir() string { return filepath.Join(n.dir, "volumes") }

// startCSINodePlugin serves the simulated CSI driver's node plugin under the kubelet's root
// directory and waits until the kubelet has registered it (the CSINode object lists the driver):
// before that the kubelet cannot mount the driver's volumes.
func (n *Node) startCSINodePlugin(ctx context.Context, kubeletRoot string) error {
	var err error
	n.csi, err = csisim.StartNodePlugin(csisim.NodePluginConfig{
		NodeID: NodeName, VolumeDir: n.volumeDir(), KubeletRootDir: kubeletRoot, Logf: n.printf,
	})
	if err != nil {
		return err
	}
	return n.waitFor(ctx, "CSI driver "+csisim.ProvisionerName+" registered", func(ctx context.Context) (bool, error) {
		var csiNode storagev1.CSINode
		if err := n.Client().Get(ctx, client.ObjectKey{Name: NodeName}, &csiNode); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		for _, d := range csiNode.Spec.Drivers {
			if d.Name == csisim.ProvisionerName {
				return d.NodeID == NodeName, nil
			}
		}
		return false, nil
	})
}

// startKubeProxy starts kube-proxy, which programs the Services into iptables.
func (n *Node) startKubeProxy(binDir string) error {
	kubeconfig, err := n.userKubeconfig("system:kube-proxy", "system:node-proxier")
	if err != nil {
		return err
	}
	ports, err := proc.FreePorts("127.0.0.1", 2)
	if err != nil {
		return err
	}
	healthz, metrics := ports[0], ports[1]
	path := filepath.Join(n.dir, "kube-proxy.yaml")
	if err := os.WriteFile(path, []byte(kubeProxyConfig(kubeconfig, healthz, metrics)), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	_, err = n.startProc("kube-proxy", filepath.Join(binDir, "kube-proxy"), "--config="+path, "--v=2")
	return err
}

// startDNS creates CoreDNS and waits until its pod is Ready.
func (n *Node) startDNS(ctx context.Context) error {
	for _, obj := range dnsObjects() {
		if err := n.Client().Create(ctx, obj); err != nil {
			return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		}
	}
	return n.waitFor(ctx, "CoreDNS Ready", func(ctx context.Context) (bool, error) {
		var pods corev1.PodList
		if err := n.Client().List(ctx, &pods, client.InNamespace(dnsNamespace), client.MatchingLabels{"k8s-app": dnsAppLabel}); err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			if podReady(&p) {
				return true, nil
			}
		}
		return false, nil
	})
}

// userKubeconfig provisions a client-certificate user with the given groups and writes its
// kubeconfig into the work directory.
func (n *Node) userKubeconfig(name string, groups ...string) (string, error) {
	user, err := n.AddUser(name, groups...)
	if err != nil {
		return "", err
	}
	data, err := user.KubeConfig()
	if err != nil {
		return "", fmt.Errorf("rendering the kubeconfig of %s: %w", name, err)
	}
	path := filepath.Join(n.dir, filepath.Base(name)+".kubeconfig")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return path, nil
}

// waitFor polls done until it reports true, failing early when a node process exits.
func (n *Node) waitFor(ctx context.Context, what string, done func(context.Context) (bool, error)) error {
	began := time.Now()
	if err := proc.PollWhileRunning(ctx, what, n.procs, pollInterval, readyTimeout, done); err != nil {
		return err
	}
	n.printf("%s after %s", what, time.Since(began).Round(time.Millisecond))
	return nil
}

// Stop deletes every pod while the kubelet runs, stops the CSI node plugin, kube-proxy, the
// kubelet, containerd and the control plane, and restores the host. It is idempotent.
func (n *Node) Stop() error { return n.stopped() }

func (n *Node) stop() error {
	began := time.Now()
	var errs []error
	if n.Cluster != nil && n.kubeletRunning() {
		errs = append(errs, n.drain())
	}
	// After the drain: the kubelet unpublished every volume of the deleted pods.
	if n.csi != nil {
		errs = append(errs, n.csi.Stop())
	}
	errs = append(errs, proc.StopAll(n.procs))
	killShims(filepath.Join(n.dir, "containerd"))
	if n.Cluster != nil {
		errs = append(errs, n.Cluster.Stop())
	}
	if n.host != nil {
		errs = append(errs, n.host.restore(n.dir))
	}
	if err := errors.Join(errs...); err != nil {
		n.printf("Real node stopped with errors in %s; work directory kept: %s", time.Since(began).Round(time.Millisecond), n.dir)
		return err
	}
	if os.Getenv("REALNODE_KEEP_WORKDIR") == "" {
		if err := os.RemoveAll(n.dir); err != nil {
			return fmt.Errorf("removing %s: %w", n.dir, err)
		}
	}
	n.printf("Real node stopped and host restored in %s", time.Since(began).Round(time.Millisecond))
	return nil
}

func (n *Node) kubeletRunning() bool {
	return n.kubelet != nil && !n.kubelet.Exited()
}

// drain cordons the node, deletes every pod on it and waits until the kubelet has removed them
// (volumes unmounted, sandboxes and their network namespaces gone) and containerd runs no task.
// Pods their controllers create again stay Pending on the cordoned node. The stopped
// containers themselves are left to go with containerd's directory: the kubelet removes them
// only in its container garbage collection, once a minute, which took 30-55 s of every run.
func (n *Node) drain() error {
	ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
	defer cancel()
	var node corev1.Node
	if err := n.Client().Get(ctx, client.ObjectKey{Name: NodeName}, &node); err != nil {
		return fmt.Errorf("reading node %s: %w", NodeName, err)
	}
	patch := client.MergeFrom(node.DeepCopy())
	node.Spec.Unschedulable = true
	if err := n.Client().Patch(ctx, &node, patch); err != nil {
		return fmt.Errorf("cordoning node %s: %w", NodeName, err)
	}
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		if !n.deletePodsOnNode(ctx) {
			return false, nil
		}
		out, err := ctr(ctx, n.containerdDir(), "tasks", "list")
		return err == nil && taskCount(string(out)) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the kubelet to remove every pod and stop every container: %w", err)
	}
	return nil
}

// deletePodsOnNode deletes the pods bound to the node and reports whether none is left.
func (n *Node) deletePodsOnNode(ctx context.Context) bool {
	var pods corev1.PodList
	if err := n.Client().List(ctx, &pods); err != nil {
		return false
	}
	left := 0
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName != NodeName {
			continue
		}
		left++
		if p.DeletionTimestamp == nil {
			if err := n.Client().Delete(ctx, p, client.GracePeriodSeconds(1)); err != nil && !apierrors.IsNotFound(err) {
				n.printf("Deleting pod %s/%s: %v", p.Namespace, p.Name, err)
			}
		}
	}
	return left == 0
}

// killShims kills containerd-shim processes of this node's containerd that survived it.
func killShims(containerdDir string) {
	socket := containerdSocket(containerdDir)
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, path := range procs {
		data, err := os.ReadFile(path)
		if err != nil || !containsArg(data, socket) {
			continue
		}
		var pid int
		if _, err := fmt.Sscanf(filepath.Base(filepath.Dir(path)), "%d", &pid); err == nil && pid != os.Getpid() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func containsArg(cmdline []byte, arg string) bool {
	for _, a := range splitNull(cmdline) {
		if a == arg {
			return true
		}
	}
	return false
}

func splitNull(b []byte) []string {
	var out []string
	start := 0
	for i, c := range b {
		if c == 0 {
			out = append(out, string(b[start:i]))
			start = i + 1
		}
	}
	return out
}

// podReady reports whether a pod's Ready condition is True.
func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (n *Node) printf(format string, args ...any) {
	if n.log != nil {
		_, _ = fmt.Fprintf(n.log, "realnode: "+format+"\n", args...)
	}
}

// startProc starts a node process; its output goes to WorkDir/<name>.log.
func (n *Node) startProc(name, bin string, args ...string) (*proc.Process, error) {
	p, err := proc.Start(name, bin, args, proc.Options{LogPath: filepath.Join(n.dir, name+".log"), Append: true})
	if err != nil {
		return nil, err
	}
	n.procs = append(n.procs, p)
	return p, nil
}
