package controlplane

import (
	"github.com/seed1b407122/database-operator/test/harness/proc"

	"bytes"
	"context"
	"crypto/tls"
	"embed"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Node and pod addresses kwok hands out. They stay clear of envtest's service range
// (10.0.0.0/24), so no pod shares an address with a Service.
const (
	kwokNodeIP  = "10.240.0.1"
	kwokPodCIDR = "10.244.0.1/16"
)

// stages are kwok's default "fast" stages (node-initialize, node-heartbeat-with-lease,
// pod-ready, pod-complete, pod-delete), copied from kwok v0.8.0's kustomize/stage directory.
//
//go:embed stages/*.yaml
var stages embed.FS

// component is a child process of the cluster other than the API server and etcd.
type component struct {
	name string
	args []string
	env  []string
	// dir holds the binary <name> (default: Options.BinDir).
	dir string
}

// writeUserKubeconfig provisions a system:masters user named after a component and writes
// its kubeconfig to workDir/<name>.kubeconfig.
func writeUserKubeconfig(env *envtest.Environment, workDir, name string) (string, error) {
	user, err := env.AddUser(envtest.User{Name: name, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", fmt.Errorf("provisioning the %s user: %w", name, err)
	}
	data, err := user.KubeConfig()
	if err != nil {
		return "", fmt.Errorf("rendering the %s kubeconfig: %w", name, err)
	}
	path := filepath.Join(workDir, name+".kubeconfig")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return path, nil
}

// controllerManager runs every default controller (garbage collector, StatefulSet, Job,
// CronJob, EndpointSlice, PV binder, attach/detach, expander, ...). It serves nothing
// (--secure-port=0), so it holds no port; the ServiceAccount it creates in "default" shows it
// is working.
func controllerManager(kubeconfig, saKeyFile string) component {
	return component{name: "kube-controller-manager", args: []string{
		"--kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		// 1.37 controller names end in "-controller"; an unknown name is fatal.
		"--controllers=*",
		"--secure-port=0",
		"--use-service-account-credentials=false",
		// Pending claims are otherwise re-examined every 15 s only.
		"--pvclaimbinder-sync-period=1s",
		// The key envtest's API server signs and verifies ServiceAccount tokens with.
		"--service-account-private-key-file=" + saKeyFile,
		"--kube-api-qps=1000",
		"--kube-api-burst=2000",
	}}
}

// scheduler serves its health endpoint on 127.0.0.1:port. It gets no authentication
// kubeconfig: envtest's API server has no request-header CA, and delegated authentication
// would log an error about it every few seconds; /healthz needs no authentication.
func scheduler(kubeconfig string, port int) component {
	return component{name: "kube-scheduler", args: []string{
		"--kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
	}}
}

// kwok simulates the kubelet of every node annotated kwok.x-k8s.io/node=fake, driven by the
// stages in configPath. KWOK_WORKDIR keeps it from reading ~/.kwok/kwok.yaml.
func kwok(kubeconfig, configPath, workDir string, port int) component {
	return component{
		name: "kwok",
		args: []string{
			"--kubeconfig=" + kubeconfig,
			"--config=" + configPath,
			"--manage-all-nodes=false",
			"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
			"--manage-nodes-with-label-selector=",
			"--disregard-status-with-annotation-selector=kwok.x-k8s.io/status=custom",
			"--cidr=" + kwokPodCIDR,
			"--node-ip=" + kwokNodeIP,
			// Renew a Lease per node, as a kubelet does. Without the flag kwok v0.8.0 keeps no
			// leases, and the node lifecycle controller marks the nodes NotReady after 50 s.
			"--node-lease-duration-seconds=40",
			"--server-address=127.0.0.1:" + strconv.Itoa(port),
		},
		env: []string{"KWOK_WORKDIR=" + workDir},
	}
}

// writeKwokConfig writes the embedded stages as one multi-document kwok configuration.
func writeKwokConfig(workDir string) (string, error) {
	files, err := fs.Glob(stages, "stages/*.yaml")
	if err != nil {
		return "", fmt.Errorf("listing the embedded stages: %w", err)
	}
	var buf bytes.Buffer
	for _, name := range files {
		data, err := stages.ReadFile(name)
		if err != nil {
			return "", fmt.Errorf("reading %s: %w", name, err)
		}
		buf.WriteString("---\n")
		buf.Write(data)
	}
	path := filepath.Join(workDir, "kwok.yaml")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return path, nil
}

// healthy reports whether https://127.0.0.1:port/healthz answers 200. The components serve
// self-signed certificates, hence no verification.
func healthy(ctx context.Context, port int) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	url := fmt.Sprintf("https://127.0.0.1:%d/healthz", port)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	client := &http.Client{Transport: &http.Transport{
		DisableKeepAlives: true,
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // local self-signed endpoint
	}}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// startChild starts one of the cluster's components, its output appended to workDir/<name>.log.
func startChild(name, bin string, args []string, workDir string, env []string) (*proc.Process, error) {
	return proc.Start(name, bin, args, proc.Options{LogPath: filepath.Join(workDir, name+".log"), Append: true, Env: env})
}
