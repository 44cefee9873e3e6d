package olm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed1b407122/database-operator/test/harness/proc"
)

// CatalogServer is a file-based catalog served over gRPC from this machine, on 127.0.0.1.
type CatalogServer struct {
	*proc.Process
	// Address is 127.0.0.1:PORT, for a CatalogSource's spec.address.
	Address string
}

// ServeOptions say what ServeCatalog serves and how.
type ServeOptions struct {
	// Server is the catalog-serve binary (hack/olm/cmd/catalog-serve, built by "make
	// catalog-serve"): opm serve's registry, listening on 127.0.0.1 only. opm serve itself
	// listens on every interface and has no flag to change that.
	Server string
	// Dir is the catalog directory.
	Dir string
	// WorkDir receives NAME.log, NAME.address and the registry cache NAME-cache/.
	WorkDir string
	// Name of the process (default "catalog-serve").
	Name string
	// Port on 127.0.0.1; 0 picks a free one.
	Port int
	// Detached lets the server outlive this program (see proc.Options.Detached).
	Detached bool
}

// ServeCatalog starts a catalog server and waits until it accepts connections. OLM reaches
// it only when OLM runs on this machine (host processes, as in the OLM e2e); for OLM in a
// cluster, see ServeCatalogInCluster.
func ServeCatalog(ctx context.Context, o ServeOptions) (*CatalogServer, error) {
	if o.Name == "" {
		o.Name = "catalog-serve"
	}
	// The server runs in WorkDir: every path it gets must be absolute.
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", o.Dir, err)
	}
	if o.WorkDir, err = filepath.Abs(o.WorkDir); err != nil {
		return nil, fmt.Errorf("resolving %s: %w", o.WorkDir, err)
	}
	addressFile := filepath.Join(o.WorkDir, o.Name+".address")
	if err := os.Remove(addressFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("removing a stale %s: %w", addressFile, err)
	}
	p, err := proc.Start(o.Name, o.Server, []string{
		"--port", strconv.Itoa(o.Port), "--address-file", addressFile,
		"--cache-dir", filepath.Join(o.WorkDir, o.Name+"-cache"), dir,
	}, proc.Options{LogPath: filepath.Join(o.WorkDir, o.Name+".log"), Dir: o.WorkDir, Detached: o.Detached})
	if err != nil {
		return nil, err
	}
	s := &CatalogServer{Process: p}
	if err := s.waitServing(ctx, addressFile); err != nil {
		_ = p.Stop()
		return nil, err
	}
	return s, nil
}

// waitServing waits for the address file, which the server writes once it listens, and
// checks that the address answers.
func (s *CatalogServer) waitServing(ctx context.Context, addressFile string) error {
	for {
		data, err := os.ReadFile(addressFile)
		if err == nil {
			s.Address = strings.TrimSpace(string(data))
			conn, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "tcp", s.Address)
			if err != nil {
				return fmt.Errorf("%s wrote %s but does not answer there: %w", s.Name, s.Address, err)
			}
			return conn.Close()
		}
		select {
		case <-s.Done():
			return s.ExitError()
		case <-ctx.Done():
			return fmt.Errorf("%s did not start serving: %w; tail of %s:\n%s", s.Name, context.Cause(ctx), s.LogPath, proc.Tail(s.LogPath))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ServeCatalogInCluster creates (or updates) the ConfigMap, Deployment and Service of
// BuildInClusterCatalog in namespace and returns them; the CatalogSource address is
// Address(). It does not wait for the pod (WaitInClusterCatalogServing does). This is the mode
// for a cluster whose OLM runs in pods, which cannot reach 127.0.0.1 of this machine; it needs
// the cluster to pull image.
func ServeCatalogInCluster(ctx context.Context, c client.Client, namespace, name, pkg, image string, fbc []byte) (InClusterCatalog, error) {
	objs := BuildInClusterCatalog(namespace, name, pkg, image, fbc)
	for _, obj := range []client.Object{objs.ConfigMap, objs.Deployment, objs.Service} {
		if err := createOrReplace(ctx, c, obj); err != nil {
			return objs, err
		}
	}
	return objs, nil
}

// WaitInClusterCatalogServing waits until the Deployment of objs has its pod available, that is,
// one whose gRPC readiness probe (the registry's health service) passes, as operator-sdk waits
// for its registry pod before it points a CatalogSource at it. A CatalogSource created before
// would have OLM dial a Service without endpoints and back off. The error of a pod that does
// not get ready names what its containers wait for (e.g. ImagePullBackOff).
func WaitInClusterCatalogServing(ctx context.Context, c client.Client, objs InClusterCatalog) error {
	return waitDeploymentAvailable(ctx, c, objs.Deployment.DeepCopy(), "the catalog server")
}

// waitDeploymentAvailable waits until dep's current generation has every replica updated and
// available (its pods passed their readiness probes); while it waits, it reports where its pods
// are. what names it in the error.
func waitDeploymentAvailable(ctx context.Context, c client.Client, dep *appsv1.Deployment, what string) error {
	return poll(ctx, what+" "+dep.Namespace+"/"+dep.Name+" to be ready", func(ctx context.Context) (bool, string, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(dep), dep); err != nil {
			return false, err.Error(), nil
		}
		want := ptr.Deref(dep.Spec.Replicas, 1)
		if dep.Status.ObservedGeneration >= dep.Generation && dep.Status.UpdatedReplicas >= want && dep.Status.AvailableReplicas >= want {
			return true, "", nil
		}
		return false, describePods(ctx, c, dep), nil
	})
}

// describePods says where the pods of dep are: phase, and the reason each waiting
// container gives.
func describePods(ctx context.Context, c client.Client, dep *appsv1.Deployment) string {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(dep.Namespace), client.MatchingLabels(dep.Spec.Selector.MatchLabels)); err != nil {
		return err.Error()
	}
	if len(pods.Items) == 0 {
		return "no pod yet"
	}
	var states []string
	for _, p := range pods.Items {
		state := fmt.Sprintf("pod %s %s", p.Name, p.Status.Phase)
		for _, cs := range p.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil {
				state += fmt.Sprintf(", %s waiting: %s %s", cs.Name, w.Reason, w.Message)
			}
			if t := cs.LastTerminationState.Terminated; t != nil {
				state += fmt.Sprintf(", %s last exited %d: %s", cs.Name, t.ExitCode, strings.TrimSpace(t.Message))
			}
		}
		states = append(states, state)
	}
	return strings.Join(states, "; ")
}

// createOrReplace creates obj, or replaces an existing one that run-bundle made (carrying
// ManagedByLabel=ManagedBy); someone else's object of that name is an error.
func createOrReplace(ctx context.Context, c client.Client, obj client.Object) error {
	kind := kindOf(c, obj)
	err := c.Create(ctx, obj)
	if err == nil || !apierrors.IsAlreadyExists(err) {
		if err != nil {
			return fmt.Errorf("creating %s %s/%s: %w", kind, obj.GetNamespace(), obj.GetName(), err)
		}
		return nil
	}
	existing := obj.DeepCopyObject().(client.Object)
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), existing); err != nil {
		return fmt.Errorf("reading %s %s/%s: %w", kind, obj.GetNamespace(), obj.GetName(), err)
	}
	if existing.GetLabels()[ManagedByLabel] != ManagedBy {
		return fmt.Errorf("%s %s/%s exists and was not made by run-bundle: remove it or pick another name", kind, obj.GetNamespace(), obj.GetName())
	}
	obj.SetResourceVersion(existing.GetResourceVersion())
	if err := c.Update(ctx, obj); err != nil {
		return fmt.Errorf("updating %s %s/%s: %w", kind, obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// kindOf names obj's kind for messages.
func kindOf(c client.Client, obj client.Object) string {
	if gvk, err := c.GroupVersionKindFor(obj); err == nil {
		return gvk.Kind
	}
	return fmt.Sprintf("%T", obj)
}
