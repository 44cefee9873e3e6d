// Package controlplane runs a real Kubernetes control plane on the local machine, for
// end-to-end tests and "make run": etcd and kube-apiserver (started through envtest, which
// also makes the certificates and users), kube-controller-manager, kube-scheduler, and kwok,
// which simulates nodes and the kubelet's work on pods (they become Ready, Job pods succeed,
// deleted pods go away; no container runs). A simulated CSI driver provisions and expands
// volumes of the default StorageClass "standard" (package csisim). With the snapshot parts
// (Options.SnapshotDir) it also runs external-snapshotter's snapshot-controller on the
// VolumeSnapshot CRDs, with the default VolumeSnapshotClass "standard-snapshots" whose
// snapshots the simulated CSI driver cuts and restores.
//
// Everything binds 127.0.0.1 on free ports. Children die with the process that started them
// (Linux parent-death signal) and Stop waits for every one of them.
package controlplane

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	snapclient "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	apischeme "github.com/seed1b407122/database-operator/api/scheme"
	"github.com/seed1b407122/database-operator/test/harness/csisim"
	"github.com/seed1b407122/database-operator/test/harness/proc"
)

const (
	defaultNodes = 3
	// readyTimeout bounds each wait of Start unless ctx ends sooner.
	readyTimeout = 2 * time.Minute
	pollInterval = 100 * time.Millisecond
	// controlPlaneTimeout is envtest's start and stop timeout for kube-apiserver and etcd.
	controlPlaneTimeout = time.Minute
)

// binaries are the programs Options.BinDir must hold.
var binaries = []string{"kube-apiserver", "etcd", "kube-controller-manager", "kube-scheduler", "kwok"}

// Options configure Start.
type Options struct {
	// BinDir holds the binaries (default: $KUBEBUILDER_ASSETS).
	BinDir string
	// WorkDir receives kubeconfigs, logs (<component>.log), configuration and etcd's data.
	// Default: a new temporary directory, removed by Stop. A given WorkDir is kept, but what
	// a previous cluster left in it is replaced, so every cluster starts empty; a lock file
	// keeps a second cluster out of it while one runs.
	WorkDir string
	// Nodes is the number of simulated nodes (default 3).
	Nodes int
	// CRDDirectoryPaths are installed (by envtest) before Start returns.
	CRDDirectoryPaths []string
	// Log receives progress lines (default: discarded).
	Log io.Writer
	// SnapshotDir holds snapshot-controller and crds/ with the VolumeSnapshot CRDs ("make
	// snapshot-env"; default: $SNAPSHOT_ENV_DIR, which the Makefile exports). When it is set the
	// CRDs are installed, the controller runs, the default VolumeSnapshotClass is created and the
	// simulated CSI driver cuts snapshots and restores claims from them; when it is empty the
	// cluster has no snapshot API (Start logs so).
	SnapshotDir string
	// APIServerArgs are kube-apiserver flags, each "--name=value" (or "--name" for true), set
	// after envtest's defaults and ConfigureAPIServer: a flag given here replaces theirs. The
	// benchmark widens the service range and turns on an audit log with them.
	APIServerArgs []string
	// SchedulerArgs are appended to kube-scheduler's flags; the last value of a flag wins.
	SchedulerArgs []string

	// The options below serve the real-node tier (test/nodee2e), where a real kubelet
	// joins the cluster instead of kwok's simulated nodes.

	// ConfigureAPIServer, when set, adjusts kube-apiserver before it starts: listen address,
	// serving certificate, flags (envtest.APIServer.Configure()).
	ConfigureAPIServer func(*envtest.APIServer) error
	// ControllerManagerArgs are appended to kube-controller-manager's flags; the last value of
	// a flag wins.
	ControllerManagerArgs []string
	// NoSimulatedNodes starts no kwok and creates no simulated nodes; Start then does not wait
	// for nodes.
	NoSimulatedNodes bool
	// LocalVolumeDir, when set, runs the simulated CSI driver in directory mode (csisim
	// Config.LocalDir): each volume's data is the directory LocalVolumeDir/<volume handle> on the
	// host, which the driver's node plugin mounts for a real kubelet on the same host, and
	// snapshots copy it; otherwise volumes are CSI volumes nothing mounts.
	LocalVolumeDir string
}

// Cluster is a running local control plane. Stop it when done.
type Cluster struct {
	// Config is an admin (system:masters) client configuration.
	Config *rest.Config
	// KubeconfigPath is the admin kubeconfig (WorkDir/kubeconfig).
	KubeconfigPath string
	// WorkDir holds the kubeconfigs, logs and configuration of the cluster.
	WorkDir string

	env           *envtest.Environment
	cpLogs        []*os.File      // kube-apiserver's and etcd's logs, which envtest writes to
	procs         []*proc.Process // the other children, in start order
	schedulerPort int
	// snapshotPort is snapshot-controller's metrics port; 0 without the snapshot parts.
	snapshotPort int
	// snapshots is a client of the VolumeSnapshot API; nil without the snapshot parts.
	snapshots  snapclient.Interface
	client     client.Client
	log        *logger
	removeDir  bool
	lock       *os.File // the lock on WorkDir, see lockWorkDir
	stopCSI    context.CancelFunc
	csiStopped <-chan struct{}
	stopped    func() error // stop, run once: see Stop
}

// Start starts a cluster and returns once its nodes are Ready, the controllers and the
// scheduler run and the CRDs are installed. ctx bounds the start only (envtest's start of
// kube-apiserver and etcd, a few seconds, cannot be interrupted); the cluster lives until
// Stop. On failure everything started is stopped again and the error quotes the failing
// component's log.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	c := &Cluster{log: &logger{w: opts.Log}}
	c.stopped = sync.OnceValue(c.stop)
	if err := c.prepare(&opts); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	began := time.Now()
	if err := c.start(ctx, opts); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	c.log.printf("Cluster ready in %s (kubeconfig %s)", time.Since(began).Round(time.Millisecond), c.KubeconfigPath)
	return c, nil
}

// prepare defaults the options and readies the work directory.
func (c *Cluster) prepare(opts *Options) error {
	if opts.BinDir == "" {
		opts.BinDir = os.Getenv("KUBEBUILDER_ASSETS")
	}
	if opts.BinDir == "" {
		return errors.New("no binary directory: set Options.BinDir or KUBEBUILDER_ASSETS")
	}
	for _, name := range binaries {
		if _, err := os.Stat(filepath.Join(opts.BinDir, name)); err != nil {
			return fmt.Errorf("binary %s missing from %s (build the test environment first): %w", name, opts.BinDir, err)
		}
	}
	if err := resolveSnapshotDir(opts); err != nil {
		return err
	}
	if opts.SnapshotDir == "" {
		c.log.printf("No snapshot parts: Options.SnapshotDir and $%s are empty (make snapshot-env builds them)", SnapshotDirEnv)
	}
	if opts.Nodes <= 0 {
		opts.Nodes = defaultNodes
	}
	if opts.NoSimulatedNodes {
		opts.Nodes = 0
	}
	if opts.WorkDir == "" {
		dir, err := os.MkdirTemp("", "localcluster-")
		if err != nil {
			return fmt.Errorf("creating a work directory: %w", err)
		}
		opts.WorkDir, c.removeDir = dir, true
	}
	dir, err := filepath.Abs(opts.WorkDir)
	if err != nil {
		return fmt.Errorf("resolving %s: %w", opts.WorkDir, err)
	}
	c.WorkDir = dir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	if c.lock, err = lockWorkDir(dir); err != nil {
		return err
	}
	return resetWorkDir(dir)
}

// lockWorkDir takes an exclusive lock on dir/.lock, held until the returned file is closed
// or the process ends, so that a second cluster cannot wipe the state of a running one.
func lockWorkDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, ".lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("work directory %s is in use by another local cluster (reach that one through %s): %w",
			dir, filepath.Join(dir, "kubeconfig"), err)
	}
	return f, nil
}

// resetWorkDir removes the state of a previous cluster from dir. Only what this package
// writes is removed: the directory may hold other files.
func resetWorkDir(dir string) error {
	for _, name := range []string{"etcd", "apiserver", "shim", "kwok.yaml", "kubeconfig"} {
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("cleaning %s: %w", dir, err)
		}
	}
	for _, pattern := range []string{"*.log", "*.kubeconfig"} {
		matches, _ := filepath.Glob(filepath.Join(dir, pattern))
		for _, m := range matches {
			if err := os.Remove(m); err != nil {
				return fmt.Errorf("cleaning %s: %w", dir, err)
			}
		}
	}
	return nil
}

// start brings up the components in dependency order.
func (c *Cluster) start(ctx context.Context, opts Options) error {
	if err := c.startControlPlane(opts); err != nil {
		return err
	}
	if err := c.startComponents(opts); err != nil {
		return err
	}
	if err := c.createFixtures(ctx, opts); err != nil {
		return err
	}
	if err := c.startCSI(opts.LocalVolumeDir); err != nil {
		return err
	}
	return c.waitReady(ctx, opts.Nodes)
}

// startControlPlane starts etcd and kube-apiserver through envtest, installs the CRDs and
// writes the admin kubeconfig.
func (c *Cluster) startControlPlane(opts Options) error {
	began := time.Now()
	apiServerPath, etcdPath, err := controlPlaneBinaries(c.WorkDir, opts.BinDir)
	if err != nil {
		return err
	}
	apiLog, err := c.createLog("kube-apiserver")
	if err != nil {
		return err
	}
	etcdLog, err := c.createLog("etcd")
	if err != nil {
		return err
	}
	// envtest writes the certificates into a given CertDir but does not create it.
	certDir := filepath.Join(c.WorkDir, "apiserver")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", certDir, err)
	}
	c.env = &envtest.Environment{
		ControlPlane: envtest.ControlPlane{
			APIServer: &envtest.APIServer{
				Path: apiServerPath, CertDir: certDir, Out: apiLog, Err: apiLog,
			},
			Etcd: &envtest.Etcd{Path: etcdPath, DataDir: filepath.Join(c.WorkDir, "etcd"), Out: etcdLog, Err: etcdLog},
		},
		BinaryAssetsDirectory:    opts.BinDir,
		CRDDirectoryPaths:        opts.CRDDirectoryPaths,
		ErrorIfCRDPathMissing:    true,
		UseExistingCluster:       ptr.To(false),
		ControlPlaneStartTimeout: controlPlaneTimeout,
		ControlPlaneStopTimeout:  controlPlaneTimeout,
	}
	if opts.ConfigureAPIServer != nil {
		if err := opts.ConfigureAPIServer(c.env.ControlPlane.APIServer); err != nil {
			return fmt.Errorf("configuring kube-apiserver: %w", err)
		}
	}
	if err := setFlags(c.env.ControlPlane.APIServer.Configure(), opts.APIServerArgs); err != nil {
		return fmt.Errorf("kube-apiserver flags: %w", err)
	}
	cfg, err := c.env.Start()
	if err != nil {
		return fmt.Errorf("starting kube-apiserver and etcd: %w\ntail of %s:\n%s\ntail of %s:\n%s", err,
			apiLog.Name(), proc.Tail(apiLog.Name()), etcdLog.Name(), proc.Tail(etcdLog.Name()))
	}
	c.Config = cfg
	c.KubeconfigPath = filepath.Join(c.WorkDir, "kubeconfig")
	if err := os.WriteFile(c.KubeconfigPath, c.env.KubeConfig, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", c.KubeconfigPath, err)
	}
	scheme := apischeme.Must()
	if c.client, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return fmt.Errorf("creating a client: %w", err)
	}
	if opts.SnapshotDir != "" {
		if c.snapshots, err = snapclient.NewForConfig(cfg); err != nil {
			return fmt.Errorf("creating a VolumeSnapshot client: %w", err)
		}
	}
	c.log.printf("kube-apiserver and etcd ready at %s in %s", cfg.Host, time.Since(began).Round(time.Millisecond))
	return nil
}

// createLog creates WorkDir/<name>.log for a component envtest starts.
func (c *Cluster) createLog(name string) (*os.File, error) {
	f, err := os.Create(filepath.Join(c.WorkDir, name+".log"))
	if err != nil {
		return nil, fmt.Errorf("creating the log of %s: %w", name, err)
	}
	c.cpLogs = append(c.cpLogs, f)
	return f, nil
}

// startComponents starts kube-controller-manager, kube-scheduler, (with simulated nodes) kwok
// and (with the snapshot parts) snapshot-controller, each with its own system:masters user.
func (c *Cluster) startComponents(opts Options) error {
	ports, err := proc.FreePorts("127.0.0.1", 3)
	if err != nil {
		return err
	}
	schedulerPort, kwokPort, snapshotPort := ports[0], ports[1], ports[2]
	kwokConfig, err := writeKwokConfig(c.WorkDir)
	if err != nil {
		return err
	}
	kubeconfigs := map[string]string{}
	for _, name := range []string{"kube-controller-manager", "kube-scheduler", "kwok", snapshotController} {
		if kubeconfigs[name], err = writeUserKubeconfig(c.env, c.WorkDir, name); err != nil {
			return err
		}
	}
	saKey := filepath.Join(c.env.ControlPlane.APIServer.CertDir, "sa-signer.key")
	kcm := controllerManager(kubeconfigs["kube-controller-manager"], saKey)
	kcm.args = append(kcm.args, opts.ControllerManagerArgs...)
	sched := scheduler(kubeconfigs["kube-scheduler"], schedulerPort)
	sched.args = append(sched.args, opts.SchedulerArgs...)
	comps := []component{kcm, sched}
	if opts.Nodes > 0 {
		comps = append(comps, kwok(kubeconfigs["kwok"], kwokConfig, c.WorkDir, kwokPort))
	}
	if opts.SnapshotDir != "" {
		comps = append(comps, snapshotControllerComponent(opts.SnapshotDir, kubeconfigs[snapshotController], snapshotPort))
		c.snapshotPort = snapshotPort
	}
	for _, comp := range comps {
		dir := cmp.Or(comp.dir, c.env.BinaryAssetsDirectory)
		p, err := startChild(comp.name, filepath.Join(dir, comp.name), comp.args, c.WorkDir, comp.env)
		if err != nil {
			return err
		}
		c.procs = append(c.procs, p)
	}
	c.schedulerPort = schedulerPort
	return nil
}

// createFixtures creates the storage class, the CSI driver object, (with the snapshot parts)
// the default snapshot class, and the nodes.
func (c *Cluster) createFixtures(ctx context.Context, opts Options) error {
	for _, obj := range []client.Object{csisim.BuildStorageClass(), csisim.BuildCSIDriver()} {
		if err := c.client.Create(ctx, obj); err != nil {
			return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		}
	}
	if c.snapshots != nil {
		class := csisim.BuildSnapshotClass()
		if _, err := c.snapshots.SnapshotV1().VolumeSnapshotClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating VolumeSnapshotClass %s: %w", class.Name, err)
		}
	}
	return createNodes(ctx, c.client, opts.Nodes)
}

// startCSI starts the simulated CSI driver, which runs until Stop.
func (c *Cluster) startCSI(localVolumeDir string) error {
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return fmt.Errorf("creating a clientset: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done, err := csisim.Start(ctx, csisim.Config{Client: cs, Snapshots: c.snapshots, LocalDir: localVolumeDir, Logf: c.log.printf})
	if err != nil {
		cancel()
		return err
	}
	c.stopCSI, c.csiStopped = cancel, done
	return nil
}

// readyStep is one condition waitReady waits for.
type readyStep struct {
	what string
	done func(context.Context) (bool, error)
}

// waitReady waits for the controllers, the scheduler and the simulated nodes.
func (c *Cluster) waitReady(ctx context.Context, nodes int) error {
	steps := []readyStep{
		// The serviceaccount-controller creates this one: proof the controllers run.
		{"kube-controller-manager", func(ctx context.Context) (bool, error) {
			err := c.client.Get(ctx, types.NamespacedName{Namespace: "default", Name: "default"}, &corev1.ServiceAccount{})
			return err == nil, client.IgnoreNotFound(err)
		}},
		{"kube-scheduler", func(ctx context.Context) (bool, error) { return healthy(ctx, c.schedulerPort), nil }},
	}
	if c.snapshotPort != 0 {
		steps = append(steps, readyStep{snapshotController, func(ctx context.Context) (bool, error) {
			return metricsServed(ctx, c.snapshotPort), nil
		}})
	}
	if nodes > 0 {
		steps = append(steps, readyStep{fmt.Sprintf("%d Ready nodes", nodes), func(ctx context.Context) (bool, error) {
			return nodesReady(ctx, c.client, nodes)
		}})
	}
	began := time.Now()
	for _, step := range steps {
		if err := c.waitFor(ctx, step.what, step.done); err != nil {
			return err
		}
		c.log.printf("%s ready after %s", step.what, time.Since(began).Round(time.Millisecond))
	}
	return nil
}

// waitFor polls done until it reports true, failing early when a child exits.
func (c *Cluster) waitFor(ctx context.Context, what string, done func(context.Context) (bool, error)) error {
	return proc.PollWhileRunning(ctx, what, c.procs, pollInterval, readyTimeout, done)
}

// AddUser provisions a client-certificate user of the API server with the given groups.
func (c *Cluster) AddUser(name string, groups ...string) (*envtest.AuthenticatedUser, error) {
	user, err := c.env.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		return nil, fmt.Errorf("provisioning user %s: %w", name, err)
	}
	return user, nil
}

// Client returns an admin client whose scheme knows the built-in types and CRDs.
func (c *Cluster) Client() client.Client { return c.client }

// Stop stops the simulated CSI driver, snapshot-controller, kwok, kube-scheduler,
// kube-controller-manager, then kube-apiserver, then etcd, and waits for each. It is idempotent; later calls return the first result.
func (c *Cluster) Stop() error { return c.stopped() }

func (c *Cluster) stop() error {
	began := time.Now()
	var errs []error
	if c.stopCSI != nil {
		c.stopCSI()
		<-c.csiStopped
	}
	errs = append(errs, proc.StopAll(c.procs))
	if c.env != nil {
		// envtest stops kube-apiserver before etcd and waits for both.
		if err := c.env.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stopping kube-apiserver and etcd: %w", err))
		}
	}
	for _, f := range c.cpLogs {
		_ = f.Close()
	}
	if c.removeDir {
		errs = append(errs, os.RemoveAll(c.WorkDir))
	}
	if c.lock != nil {
		_ = c.lock.Close()
	}
	if c.env != nil {
		c.log.printf("Cluster stopped in %s", time.Since(began).Round(time.Millisecond))
	}
	return errors.Join(errs...)
}

// logger serialises progress lines from several goroutines.
type logger struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *logger) printf(format string, args ...any) {
	if l.w == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = fmt.Fprintf(l.w, "localcluster: "+format+"\n", args...)
}
