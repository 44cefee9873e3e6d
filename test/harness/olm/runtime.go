package olm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed1b407122/database-operator/test/harness/proc"
)

// fieldOwner is the server-side apply field manager of the CRDs StartOLM installs.
const fieldOwner = "database-operator-olm"

// RuntimeOptions say where OLM's binaries are and which cluster they run against.
type RuntimeOptions struct {
	// BinDir holds the olm and catalog binaries and OLM's CRDs in crds/ ("make olm-runtime"
	// builds them into ~/.cache/database-operator/olm-runtime-static-*).
	BinDir string
	// Kubeconfig of the cluster, admin credentials: OLM's own ServiceAccount is cluster-admin.
	Kubeconfig string
	// Namespace OLM runs for (its global catalog namespace; default "olm"); created if missing.
	Namespace string
	// LogDir receives olm.log and catalog.log.
	LogDir string
	// DisableCopiedCSVs sets OLMConfig's spec.features.disableCopiedCSVs: an AllNamespaces
	// install then leaves no copy of its CSV in every namespace, which makes its removal faster.
	DisableCopiedCSVs bool
	// CatalogArgs and CatalogEnv are added to the catalog operator's arguments and environment,
	// e.g. --util-image and --opmImage for bundle unpacking, GRPC_PROXY to reach registry pods.
	CatalogArgs, CatalogEnv []string
}

// Runtime is the Operator Lifecycle Manager running as two host processes.
type Runtime struct {
	// Namespace is OLM's namespace.
	Namespace string
	// Operator runs cmd/olm (CSVs, OperatorGroups); Catalog runs cmd/catalog (CatalogSources,
	// Subscriptions, InstallPlans).
	Operator, Catalog *proc.Process
}

// StartOLM installs OLM's CRDs (server-side apply, then it waits until they are Established),
// OLM's namespace and OLMConfig "cluster", and starts OLM's two controllers as host processes
// with opts.Kubeconfig. This is OLM without a container runtime: it installs bundles whose
// manifests a file-based catalog carries inline (RenderBundleCatalog), never an image.
// Both processes bind :8080 for health (hard-coded in OLM, every interface); the second one
// logs the clash and runs on. Stop them with Stop; they die with this process on Linux.
// DeployOLM runs the same controllers in the cluster instead, as a cluster with nodes does.
func StartOLM(ctx context.Context, c client.Client, opts RuntimeOptions) (*Runtime, error) {
	if opts.Namespace == "" {
		opts.Namespace = "olm"
	}
	if err := prepareOLM(ctx, c, filepath.Join(opts.BinDir, "crds"), opts.Namespace, opts.DisableCopiedCSVs); err != nil {
		return nil, err
	}

	env := []string{"KUBECONFIG=" + opts.Kubeconfig, "OPERATOR_NAMESPACE=" + opts.Namespace, "OPERATOR_NAME=olm-operator"}
	o := &Runtime{Namespace: opts.Namespace}
	var err error
	o.Operator, err = proc.Start("olm", filepath.Join(opts.BinDir, "olm"), []string{namespaceFlag, opts.Namespace},
		proc.Options{LogPath: filepath.Join(opts.LogDir, "olm.log"), Env: env})
	if err != nil {
		return nil, err
	}
	o.Catalog, err = proc.Start("catalog", filepath.Join(opts.BinDir, "catalog"),
		append([]string{namespaceFlag, opts.Namespace, "--set-workload-user-id=false"}, opts.CatalogArgs...),
		proc.Options{LogPath: filepath.Join(opts.LogDir, "catalog.log"), Env: append(env, opts.CatalogEnv...)})
	if err != nil {
		_ = o.Operator.Stop()
		return nil, err
	}
	return o, nil
}

// Processes are OLM's two processes, e.g. for proc.WhileRunning.
func (o *Runtime) Processes() []*proc.Process { return []*proc.Process{o.Operator, o.Catalog} }

// Stop stops both processes and returns an error only when one had to be killed. An exit
// status after SIGTERM is OLM's own (its controller manager can end a shutdown with a logged
// fatal error), as it is for kube-scheduler and kwok in the control plane: while the specs run,
// an exit of either process fails them through Processes and proc.WhileRunning.
func (o *Runtime) Stop() error {
	if o == nil {
		return nil
	}
	return proc.StopAll(o.Processes())
}

// prepareOLM installs what OLM's controllers need before they start: its CRDs of crdDir, its
// namespace and OLMConfig "cluster".
func prepareOLM(ctx context.Context, c client.Client, crdDir, namespace string, disableCopiedCSVs bool) error {
	if err := applyCRDs(ctx, c, crdDir); err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", namespace, err)
	}
	olmConfig := NewObject(APIVersionV1, KindOLMConfig, "", "cluster")
	if err := unstructured.SetNestedField(olmConfig.Object, disableCopiedCSVs, "spec", "features", "disableCopiedCSVs"); err != nil {
		return fmt.Errorf("building OLMConfig: %w", err)
	}
	if err := c.Create(ctx, olmConfig); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating OLMConfig cluster: %w", err)
	}
	return nil
}

// applyCRDs server-side applies every CRD of dir's YAML files and waits until each is
// Established.
func applyCRDs(ctx context.Context, c client.Client, dir string) error {
	crds, err := readYAMLDir(dir)
	if err != nil {
		return err
	}
	for _, obj := range crds {
		if obj.GetKind() != "CustomResourceDefinition" {
			return fmt.Errorf("%s holds a %s (%s): want only CRDs", dir, obj.GetKind(), obj.GetName())
		}
	}
	if len(crds) == 0 {
		return fmt.Errorf("no CRDs in %s", dir)
	}
	for _, crd := range crds {
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(crd), client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying CRD %s: %w", crd.GetName(), err)
		}
	}
	return poll(ctx, "OLM's CRDs to be Established", func(ctx context.Context) (bool, string, error) {
		for _, crd := range crds {
			got := NewObject("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", crd.GetName())
			if err := c.Get(ctx, client.ObjectKeyFromObject(got), got); err != nil {
				return false, err.Error(), nil
			}
			established := false
			for _, cond := range conditions(got) {
				established = established || (cond.typ == "Established" && cond.status == statusTrue)
			}
			if !established {
				return false, "CRD " + crd.GetName() + " is not Established", nil
			}
		}
		return true, "", nil
	})
}

// readYAMLDir decodes every document of the .yaml files of dir.
func readYAMLDir(dir string) ([]*unstructured.Unstructured, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	var objs []*unstructured.Unstructured
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", e.Name(), err)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			obj := &unstructured.Unstructured{}
			if err := dec.Decode(&obj.Object); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return nil, fmt.Errorf("decoding %s: %w", e.Name(), err)
			}
			if len(obj.Object) > 0 {
				objs = append(objs, obj)
			}
		}
	}
	return objs, nil
}
