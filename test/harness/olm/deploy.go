package olm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The names of OLM's objects, as upstream's manifests (deploy/chart of OLM's module) name them.
const (
	OLMOperatorName     = "olm-operator"
	CatalogOperatorName = "catalog-operator"
	olmServiceAccount   = "olm-operator-serviceaccount"
	olmClusterRole      = "system:controller:operator-lifecycle-manager"
	olmHealthPort       = 8080
	olmUser             = 1001
	// appLabel selects the pods of each of OLM's Deployments (app=<its name>).
	appLabel      = "app"
	namespaceFlag = "--namespace"
	verbCreate    = "create"
)

// DeployOptions say what DeployOLM runs.
type DeployOptions struct {
	// CRDDir holds OLM's CRDs (the crds/ of "make olm-runtime").
	CRDDir string
	// Namespace OLM runs in and for (its global catalog namespace; default "olm").
	Namespace string
	// Image is OLM's image: /bin/olm and /bin/catalog, run as a non-root user (make node-images
	// builds it with the util image's /bin/cpb, as upstream's image holds all three).
	Image string
	// DisableCopiedCSVs sets OLMConfig's spec.features.disableCopiedCSVs (see RuntimeOptions).
	DisableCopiedCSVs bool
	// CatalogArgs are added to the catalog operator's arguments, e.g. --util-image and
	// --opmImage for bundle unpacking.
	CatalogArgs []string
}

// Deployed is the Operator Lifecycle Manager as a cluster runs it: its two controllers in
// Deployments of its namespace, as OLM's ServiceAccount, with in-cluster credentials. The
// catalog operator dials registry pods by their Service names through the cluster's DNS.
type Deployed struct {
	// Namespace is OLM's namespace.
	Namespace string
	c         client.Client
}

// BuildOLMDeployment returns the objects of OLM's controllers, as upstream's manifests have them
// without TLS or cert-manager: the ServiceAccount, the cluster role OLM's controllers hold
// (every verb on every resource: OLM grants operators any RBAC their CSVs ask for, so it must
// hold it), its binding, and the Deployments olm-operator (/bin/olm) and catalog-operator
// (/bin/catalog) of image, restricted, health on :8080. The catalog operator sets the user id of
// the registry pods and unpack Jobs it starts (--set-workload-user-id=true, upstream's default).
func BuildOLMDeployment(namespace, image string, catalogArgs []string) []client.Object {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: olmServiceAccount}}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: olmClusterRole},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"watch", "list", "get", verbCreate, "update", "patch", "delete", "deletecollection", "escalate", "bind"}},
			{NonResourceURLs: []string{"*"}, Verbs: []string{"*"}},
			{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{verbCreate}},
			{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{verbCreate}},
		},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "olm-operator-binding-" + namespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: olmClusterRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: olmServiceAccount}},
	}
	olmArgs := []string{namespaceFlag, "$(OPERATOR_NAMESPACE)"}
	olmEnv := []corev1.EnvVar{
		{Name: "OPERATOR_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
		{Name: "OPERATOR_NAME", Value: OLMOperatorName},
	}
	catalogArgs = append([]string{namespaceFlag, namespace}, append(catalogArgs, "--set-workload-user-id=true")...)
	return []client.Object{
		sa, role, binding,
		olmController(namespace, OLMOperatorName, image, "/bin/olm", olmArgs, olmEnv),
		olmController(namespace, CatalogOperatorName, image, "/bin/catalog", catalogArgs, nil),
	}
}

// olmController is the Deployment of one of OLM's controllers: one replica, recreated (never two
// at once), restricted, /tmp writable, health probed on :8080.
func olmController(namespace, name, image, command string, args []string, env []corev1.EnvVar) *appsv1.Deployment {
	labels := map[string]string{appLabel: name}
	health := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
		Path: "/healthz", Port: intstr.FromInt32(olmHealthPort), Scheme: corev1.URISchemeHTTP,
	}}}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: olmServiceAccount,
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						RunAsUser:      ptr.To[int64](olmUser),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Volumes: []corev1.Volume{{Name: "tmpfs", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
					Containers: []corev1.Container{{
						Name: name, Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
						Command: []string{command}, Args: args, Env: env,
						Ports:          []corev1.ContainerPort{{Name: "metrics", ContainerPort: olmHealthPort}},
						LivenessProbe:  health,
						ReadinessProbe: health,
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false),
							ReadOnlyRootFilesystem:   ptr.To(true),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
						VolumeMounts:             []corev1.VolumeMount{{Name: "tmpfs", MountPath: "/tmp"}},
						TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
					}},
				},
			},
		},
	}
}

// DeployOLM installs OLM's CRDs, namespace and OLMConfig (as StartOLM does), creates the objects
// of BuildOLMDeployment and waits until both Deployments are available, that is, their pods
// passed their health probes on a node. Objects of those names that exist already are an error:
// the cluster has an OLM.
func DeployOLM(ctx context.Context, c client.Client, opts DeployOptions) (*Deployed, error) {
	if opts.Namespace == "" {
		opts.Namespace = "olm"
	}
	if err := prepareOLM(ctx, c, opts.CRDDir, opts.Namespace, opts.DisableCopiedCSVs); err != nil {
		return nil, err
	}
	for _, obj := range BuildOLMDeployment(opts.Namespace, opts.Image, opts.CatalogArgs) {
		if err := c.Create(ctx, obj); err != nil {
			return nil, fmt.Errorf("creating %s %s: %w", kindOf(c, obj), client.ObjectKeyFromObject(obj), err)
		}
	}
	d := &Deployed{Namespace: opts.Namespace, c: c}
	for _, name := range d.controllers() {
		dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: opts.Namespace, Name: name}}
		if err := waitDeploymentAvailable(ctx, c, dep, "Deployment"); err != nil {
			return d, err
		}
	}
	return d, nil
}

func (d *Deployed) controllers() []string { return []string{OLMOperatorName, CatalogOperatorName} }

// pods lists the pods of OLM's controllers (app=olm-operator or app=catalog-operator).
func (d *Deployed) pods(ctx context.Context) ([]corev1.Pod, error) {
	selector, err := labels.Parse(appLabel + " in (" + strings.Join(d.controllers(), ",") + ")")
	if err != nil {
		return nil, err
	}
	var pods corev1.PodList
	if err := d.c.List(ctx, &pods, client.InNamespace(d.Namespace), client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return nil, fmt.Errorf("listing the pods of OLM's controllers: %w", err)
	}
	return pods.Items, nil
}

// Within bounds a wait on OLM: it ends after timeout, and as soon as a container of OLM's
// controllers has terminated or restarted (the wait then fails saying which and how it exited,
// instead of timing out).
func (d *Deployed) Within(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancelTimeout := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("timed out after %s", timeout))
	ctx, cancelCause := context.WithCancelCause(ctx)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			if failed := d.failedContainers(ctx); failed != "" {
				cancelCause(errors.New("OLM stopped: " + failed))
				return
			}
		}
	}()
	return ctx, func() { cancelCause(context.Canceled); cancelTimeout() }
}

// failedContainers names the containers of OLM's controllers that have terminated or restarted,
// with their last exit; "" while they all run (or cannot be listed).
func (d *Deployed) failedContainers(ctx context.Context) string {
	pods, err := d.pods(ctx)
	if err != nil {
		return ""
	}
	var failed []string
	for _, p := range pods {
		failed = append(failed, containerFailures(p)...)
	}
	return strings.Join(failed, "; ")
}

// containerFailures describes each container of p that has terminated or restarted.
func containerFailures(p corev1.Pod) []string {
	var failed []string
	for _, cs := range p.Status.ContainerStatuses {
		last := cs.State.Terminated
		if last == nil && cs.RestartCount > 0 {
			last = cs.LastTerminationState.Terminated
		}
		if last == nil && cs.RestartCount == 0 {
			continue
		}
		state := fmt.Sprintf("pod %s container %s restarted %d times", p.Name, cs.Name, cs.RestartCount)
		if last != nil {
			state += fmt.Sprintf(", exited %d (%s): %s", last.ExitCode, last.Reason, strings.TrimSpace(last.Message))
		}
		failed = append(failed, state)
	}
	return failed
}

// SaveLogs writes the log of each of OLM's controllers into dir as NAME.log (olm-operator.log,
// catalog-operator.log), read from the kubelet through the API server.
func (d *Deployed) SaveLogs(ctx context.Context, cs kubernetes.Interface, dir string) error {
	pods, err := d.pods(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range d.controllers() {
		errs = append(errs, d.saveLog(ctx, cs, pods, name, filepath.Join(dir, name+".log")))
	}
	return errors.Join(errs...)
}

// saveLog writes the log of container name of each of pods labelled app=name into path.
func (d *Deployed) saveLog(ctx context.Context, cs kubernetes.Interface, pods []corev1.Pod, name, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	for _, p := range pods {
		if p.Labels[appLabel] != name {
			continue
		}
		stream, err := cs.CoreV1().Pods(d.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: name}).Stream(ctx)
		if err != nil {
			return fmt.Errorf("reading the log of pod %s: %w", p.Name, err)
		}
		_, err = io.Copy(f, stream)
		_ = stream.Close()
		if err != nil {
			return fmt.Errorf("reading the log of pod %s: %w", p.Name, err)
		}
	}
	return nil
}

// Remove deletes OLM's Deployments and waits until their pods are gone, so that OLM stops
// before the cluster does (it would only retry against a stopped API server). The CRDs, the
// namespace and the RBAC stay, like the objects OLM manages.
func (d *Deployed) Remove(ctx context.Context) error {
	if d == nil {
		return nil
	}
	for _, name := range d.controllers() {
		dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, Name: name}}
		err := d.c.Delete(ctx, dep, client.PropagationPolicy(metav1.DeletePropagationForeground))
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting Deployment %s/%s: %w", d.Namespace, name, err)
		}
	}
	return poll(ctx, "the pods of OLM's controllers to be gone", func(ctx context.Context) (bool, string, error) {
		pods, err := d.pods(ctx)
		if err != nil {
			return false, err.Error(), nil
		}
		var left []string
		for _, p := range pods {
			left = append(left, p.Name)
		}
		return len(left) == 0, "left: " + strings.Join(left, ", "), nil
	})
}
