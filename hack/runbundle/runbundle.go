package runbundle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed1b407122/database-operator/test/harness/olm"
	"github.com/seed1b407122/database-operator/test/harness/proc"
)

// CatalogMode says where Run serves the catalog from.
type CatalogMode string

const (
	// CatalogModeHost serves it from this machine (catalog-serve on 127.0.0.1): for OLM
	// running on this machine, as in this project's OLM e2e.
	CatalogModeHost CatalogMode = "host"
	// CatalogModeCluster serves it from a Deployment of the opm image in the namespace: for
	// OLM running in the cluster, which cannot reach this machine's loopback.
	CatalogModeCluster CatalogMode = "cluster"
)

// Files of a namespace's state directory (Options.StateDir/<namespace>/).
const (
	stateFile = "state.json"
	// PIDFile holds the pid of the host-mode catalog server; Cleanup stops it.
	PIDFile       = "catalog-serve.pid"
	catalogSubdir = "catalog"
)

// Options are the settings of Run ("make run-bundle").
type Options struct {
	// BundleDir is the bundle to install (bundle/), unless BundleImage is set.
	BundleDir string
	// BundleImage, when set, is the bundle image to install, by digest: the catalog names it
	// and OLM pulls and unpacks it in a Job, as for "operator-sdk run bundle IMAGE". The
	// cluster pulls it as named; this machine pulls it (to read and render it) through Mirror.
	BundleImage string
	Mirror      olm.ImageMirror
	// Namespace to install into; created when missing (and then kept by Cleanup).
	Namespace string
	// InstallMode (default OwnNamespace) must be one the CSV supports.
	InstallMode olm.InstallMode
	// CatalogMode (default CatalogModeHost).
	CatalogMode CatalogMode
	// OPM is the opm binary, which renders and validates the catalog.
	OPM string
	// CatalogServer is the catalog-serve binary (host mode).
	CatalogServer string
	// Port of the host-mode server on 127.0.0.1; 0 picks a free one.
	Port int
	// OPMImage runs the cluster-mode server (default DefaultOPMImage).
	OPMImage string
	// StateDir keeps, per namespace, the rendered catalog, the server's log and pidfile and
	// what Cleanup needs to know.
	StateDir string
	// Cluster names the API server (its URL), recorded in the state for Cleanup's
	// messages.
	Cluster string
	// Log receives progress lines (default: discarded).
	Log io.Writer
}

// bundleState is what Run leaves in StateDir/<namespace>/state.json.
type bundleState struct {
	Namespace        string      `json:"namespace"`
	Package          string      `json:"package"`
	CSV              string      `json:"csv"`
	CatalogSource    string      `json:"catalogSource"`
	CatalogMode      CatalogMode `json:"catalogMode"`
	Address          string      `json:"address,omitempty"`
	Cluster          string      `json:"cluster,omitempty"`
	CreatedNamespace bool        `json:"createdNamespace,omitempty"`
}

// CatalogSourceName is the name of the CatalogSource (and of the in-cluster catalog's
// objects) that Run creates for a package.
func CatalogSourceName(pkg string) string { return pkg + "-catalog" }

// managedLabels are the labels of everything Run creates.
func managedLabels() map[string]string { return map[string]string{olm.ManagedByLabel: olm.ManagedBy} }

// Run installs the bundle directory, or the bundle image, through OLM, as "operator-sdk run
// bundle" does: it renders a one-bundle catalog (RenderBundleCatalog, or
// RenderBundleImageCatalog naming the image, which OLM then unpacks), serves it (host or
// cluster mode), creates the CatalogSource <package>-catalog in the namespace and waits until
// OLM has connected to it, then Install (an OperatorGroup for the install mode unless a
// matching one exists, a Subscription to the bundle's CSV on its default channel) and waits
// until the CSV has Succeeded. Everything it creates carries ManagedByLabel=ManagedBy.
//
// ctx bounds the whole run. On failure nothing is rolled back, so that it can be inspected;
// Cleanup removes it. In host mode the catalog server is detached and outlives this
// program: Cleanup stops it through the pidfile in the state directory.
func Run(ctx context.Context, c client.Client, o Options) (*olm.Installation, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	b, err := o.readBundle(ctx)
	if err != nil {
		return nil, err
	}
	if err := o.InstallMode.SupportedBy(b); err != nil {
		return nil, err
	}
	if err := checkReady(ctx, c, o, b); err != nil {
		return nil, err
	}
	st := &bundleState{Namespace: o.Namespace, Package: b.Package, CSV: b.CSVName,
		CatalogSource: CatalogSourceName(b.Package), CatalogMode: o.CatalogMode, Cluster: o.Cluster}
	if st.CreatedNamespace, err = ensureNamespace(ctx, c, o.Namespace); err != nil {
		return nil, err
	}
	dir := filepath.Join(o.StateDir, o.Namespace)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the state directory: %w", err)
	}
	// Saved before anything runs or is created, so that Cleanup finds it after any failure.
	if err := writeState(dir, st); err != nil {
		return nil, err
	}
	fbc, err := o.renderCatalog(ctx, b, filepath.Join(dir, catalogSubdir))
	if err != nil {
		return nil, err
	}
	o.logf("Rendered a catalog of %s (%s, channel %s, %s) into %s.", b.CSVName, b.Package, b.DefaultChannel, o.source(), filepath.Join(dir, catalogSubdir))

	if st.Address, err = serve(ctx, c, o, b, dir, fbc); err != nil {
		return nil, err
	}
	if err := writeState(dir, st); err != nil {
		return nil, err
	}
	cs := olm.BuildCatalogSource(o.Namespace, st.CatalogSource, st.Address,
		fmt.Sprintf("%s (run-bundle %s)", b.Package, b.CSVName), managedLabels())
	if err := olm.CreateCatalogSource(ctx, c, cs); err != nil {
		if o.CatalogMode == CatalogModeHost {
			err = fmt.Errorf("%w\nOLM did not connect to %s on this machine's loopback: the host mode needs OLM's catalog operator running on this machine (as in make olm-e2e); for OLM running in the cluster, use the cluster mode", err, st.Address)
		}
		return nil, err
	}
	o.logf("CatalogSource %s/%s is READY (%s).", o.Namespace, st.CatalogSource, st.Address)

	began := time.Now()
	o.logf("Subscribing %s to %s (install mode %s); waiting for %s to succeed.", o.Namespace, b.Package, o.InstallMode, b.CSVName)
	inst, err := olm.Install(ctx, c, olm.InstallOptions{
		Namespace: o.Namespace, Package: b.Package, Channel: b.DefaultChannel,
		CatalogSource: st.CatalogSource, CatalogSourceNamespace: o.Namespace,
		InstallMode: o.InstallMode, CSV: b.CSVName, Labels: managedLabels(),
	})
	if err != nil {
		return inst, err
	}
	o.logf("ClusterServiceVersion %s/%s Succeeded after %s (OperatorGroup %s).", o.Namespace, b.CSVName, time.Since(began).Round(time.Millisecond), inst.OperatorGroup)
	return inst, nil
}

func (o *Options) defaults() error {
	var err error
	if o.StateDir, err = filepath.Abs(o.StateDir); err != nil {
		return fmt.Errorf("resolving the state directory: %w", err)
	}
	if o.InstallMode.Type == "" {
		o.InstallMode.Type = olm.InstallModeOwnNamespace
	}
	if o.CatalogMode == "" {
		o.CatalogMode = CatalogModeHost
	}
	if o.OPMImage == "" {
		o.OPMImage = olm.DefaultOPMImage
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return nil
}

// readBundle reads the bundle to install: BundleImage's, unpacked, or BundleDir.
func (o *Options) readBundle(ctx context.Context) (*olm.Bundle, error) {
	if o.BundleImage != "" {
		return olm.UnpackBundleImage(ctx, o.OPM, o.BundleImage, o.Mirror)
	}
	return olm.ReadBundle(o.BundleDir)
}

// renderCatalog renders the one-bundle catalog of b into dir: naming BundleImage, or with
// BundleDir's manifests inline.
func (o *Options) renderCatalog(ctx context.Context, b *olm.Bundle, dir string) ([]byte, error) {
	if o.BundleImage != "" {
		return olm.RenderBundleImageCatalog(ctx, o.OPM, o.BundleImage, o.Mirror, b, dir)
	}
	_, fbc, err := olm.RenderBundleCatalog(ctx, o.OPM, o.BundleDir, dir)
	return fbc, err
}

// source says where the bundle comes from, for the log.
func (o *Options) source() string {
	if o.BundleImage != "" {
		return "bundle image " + o.BundleImage + ", which OLM unpacks"
	}
	return "manifests inline from " + o.BundleDir
}

func (o *Options) logf(format string, args ...any) {
	_, _ = fmt.Fprintf(o.Log, format+"\n", args...)
}

// checkReady refuses a run that cannot work or would collide with an earlier one: OLM's API
// missing, a state directory left by an earlier run, or a Subscription to the package in the
// namespace.
func checkReady(ctx context.Context, c client.Client, o Options, b *olm.Bundle) error {
	switch {
	case o.Namespace == "":
		return errors.New("no namespace given")
	case o.CatalogMode != CatalogModeHost && o.CatalogMode != CatalogModeCluster:
		return fmt.Errorf("catalog mode %q: want %s or %s", o.CatalogMode, CatalogModeHost, CatalogModeCluster)
	case o.CatalogMode == CatalogModeHost && o.CatalogServer == "":
		return errors.New("the host mode needs the catalog-serve binary")
	}
	gk := schema.GroupKind{Group: "operators.coreos.com", Kind: olm.KindCatalogSource}
	if _, err := c.RESTMapper().RESTMapping(gk, "v1alpha1"); err != nil {
		if meta.IsNoMatchError(err) {
			return errors.New("OLM is not installed on this cluster (no operators.coreos.com/v1alpha1 CatalogSource API): install OLM first")
		}
		return fmt.Errorf("looking up OLM's API: %w", err)
	}
	if _, err := os.Stat(filepath.Join(o.StateDir, o.Namespace, stateFile)); err == nil {
		return fmt.Errorf("%s holds an earlier run-bundle in namespace %s: remove it first (make cleanup-bundle NAMESPACE=%s)",
			filepath.Join(o.StateDir, o.Namespace), o.Namespace, o.Namespace)
	}
	subs := olm.NewList(olm.APIVersionV1alpha1, olm.KindSubscription)
	if err := c.List(ctx, subs, client.InNamespace(o.Namespace)); err != nil {
		return fmt.Errorf("listing the Subscriptions of %s: %w", o.Namespace, err)
	}
	for _, s := range subs.Items {
		if pkg, _, _ := unstructured.NestedString(s.Object, "spec", "name"); pkg == b.Package {
			return fmt.Errorf("namespace %s already subscribes to %s (Subscription %s): remove it first", o.Namespace, b.Package, s.GetName())
		}
	}
	return nil
}

// ensureNamespace creates namespace when missing and says whether it did.
func ensureNamespace(ctx context.Context, c client.Client, namespace string) (bool, error) {
	err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsAlreadyExists(err):
		return false, nil
	}
	return false, fmt.Errorf("creating namespace %s: %w", namespace, err)
}

// serve serves the rendered catalog in the chosen mode and returns its address.
func serve(ctx context.Context, c client.Client, o Options, b *olm.Bundle, dir string, fbc []byte) (string, error) {
	if o.CatalogMode == CatalogModeCluster {
		objs, err := olm.ServeCatalogInCluster(ctx, c, o.Namespace, CatalogSourceName(b.Package), b.Package, o.OPMImage, fbc)
		if err != nil {
			return "", err
		}
		o.logf("Serving the catalog in the cluster: ConfigMap, Deployment (%s) and Service %s/%s; waiting for its pod to be ready.", o.OPMImage, o.Namespace, objs.Service.Name)
		if err := olm.WaitInClusterCatalogServing(ctx, c, objs); err != nil {
			return "", err
		}
		return objs.Address(), nil
	}
	srv, err := olm.ServeCatalog(ctx, olm.ServeOptions{
		Server: o.CatalogServer, Dir: filepath.Join(dir, catalogSubdir), WorkDir: dir, Port: o.Port, Detached: true,
	})
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, PIDFile), []byte(strconv.Itoa(srv.PID())+"\n"), 0o644); err != nil {
		_ = srv.Stop()
		return "", fmt.Errorf("writing the pidfile: %w", err)
	}
	o.logf("Serving the catalog on %s (pid %d, log %s); make cleanup-bundle stops it.", srv.Address, srv.PID(), srv.LogPath)
	return srv.Address, nil
}

// CleanupOptions are the settings of Cleanup ("make cleanup-bundle").
type CleanupOptions struct {
	// Namespace Run installed into.
	Namespace string
	// StateDir as given to Run.
	StateDir string
	// BundleDir names the package when the state directory is missing.
	BundleDir string
	// Log receives progress lines (default: discarded).
	Log io.Writer
}

// Cleanup undoes Run in the namespace, as "operator-sdk cleanup" does: Uninstall
// (the Subscription, the package's CSVs and their InstallPlans, and the OperatorGroups that
// Run created, recognised by ManagedByLabel), then the CatalogSource <package>-catalog
// and the in-cluster catalog's objects that Run created, then it stops the host-mode
// catalog server of the pidfile and removes the namespace's state directory. CRDs, custom
// resources and the namespace stay. It is idempotent: what is gone already is skipped, and it
// works without a state directory. When the cluster cannot be reached, the server is still
// stopped, but the state stays so that a later run can finish.
func Cleanup(ctx context.Context, c client.Client, o CleanupOptions) error {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Namespace == "" {
		return errors.New("no namespace given")
	}
	dir := filepath.Join(o.StateDir, o.Namespace)
	st, err := readState(dir)
	if err != nil {
		return err
	}
	if st == nil {
		b, err := olm.ReadBundle(o.BundleDir)
		if err != nil {
			return fmt.Errorf("no run-bundle state in %s, and the package is unknown: %w", dir, err)
		}
		st = &bundleState{Namespace: o.Namespace, Package: b.Package, CatalogSource: CatalogSourceName(b.Package)}
	}
	if st.Cluster != "" {
		_, _ = fmt.Fprintf(o.Log, "Cleaning up %s in namespace %s (installed on %s).\n", st.Package, o.Namespace, st.Cluster)
	}
	clusterErr := cleanupCluster(ctx, c, st)
	serverErr := stopServer(ctx, dir)
	if err := errors.Join(clusterErr, serverErr); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing the state directory: %w", err)
	}
	_, _ = fmt.Fprintf(o.Log, "Removed %s from namespace %s: Subscription, CSV, CatalogSource, OperatorGroup and catalog server are gone.\n", st.Package, o.Namespace)
	return nil
}

// cleanupCluster deletes what Run created in the cluster.
func cleanupCluster(ctx context.Context, c client.Client, st *bundleState) error {
	groups := olm.NewList(olm.APIVersionV1, olm.KindOperatorGroup)
	if err := c.List(ctx, groups, client.InNamespace(st.Namespace), client.MatchingLabels(managedLabels())); err != nil && !meta.IsNoMatchError(err) {
		return fmt.Errorf("listing the OperatorGroups of %s: %w", st.Namespace, err)
	}
	var ogs []string
	for _, og := range groups.Items {
		ogs = append(ogs, og.GetName())
	}
	if err := olm.Uninstall(ctx, c, olm.UninstallOptions{Namespace: st.Namespace, Package: st.Package, OperatorGroups: ogs}); err != nil {
		return err
	}
	return olm.DeleteCatalog(ctx, c, st.Namespace, st.CatalogSource, true)
}

// stopServer stops the host-mode catalog server of the state directory, if one runs, and
// removes its pidfile. The pid counts only when its command line names this state
// directory's catalog: a pid reused by another program is left alone.
func stopServer(ctx context.Context, dir string) error {
	pidPath := filepath.Join(dir, PIDFile)
	pid, err := readPID(pidPath)
	if err != nil || pid == 0 {
		return err
	}
	catalogDir, err := filepath.Abs(filepath.Join(dir, catalogSubdir))
	if err != nil {
		return fmt.Errorf("resolving the catalog directory: %w", err)
	}
	if err := proc.StopPID(ctx, pid, catalogDir); err != nil {
		return err
	}
	if err := os.Remove(pidPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing the pidfile: %w", err)
	}
	return nil
}

// ServerPID returns the pid in the pidfile of namespace's state directory (0 when there is
// none), e.g. for a test that checks that Cleanup stopped the server.
func ServerPID(stateDir, namespace string) (int, error) {
	return readPID(filepath.Join(stateDir, namespace, PIDFile))
}

// readPID reads a pidfile; a missing file is pid 0.
func readPID(path string) (int, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", path, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 0, fmt.Errorf("parsing %s: %w", path, err)
	}
	return pid, nil
}

// ServerMark is what the command line of namespace's host-mode catalog server contains: its
// catalog directory. With proc.Alive, it tells the server from a process that reuses its pid.
func ServerMark(stateDir, namespace string) (string, error) {
	return filepath.Abs(filepath.Join(stateDir, namespace, catalogSubdir))
}

func writeState(dir string, st *bundleState) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the state: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, stateFile), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing the state: %w", err)
	}
	return nil
}

// readState reads the state of dir; nil when there is none.
func readState(dir string) (*bundleState, error) {
	data, err := os.ReadFile(filepath.Join(dir, stateFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the state: %w", err)
	}
	st := &bundleState{}
	if err := json.Unmarshal(data, st); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", filepath.Join(dir, stateFile), err)
	}
	return st, nil
}
