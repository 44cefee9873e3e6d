//go:build linux

package realnode

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// NodeName is the name the kubelet registers (and its identity, system:node:<NodeName>).
const NodeName = "realnode-0"

// kubeletConfig is the kubelet's configuration: the node's address only, no read-only port,
// health on loopback, cgroupfs on cgroup v1, no swap check, image GC off (an imported image
// cannot be pulled back), cluster DNS, and every directory inside dir.
func kubeletConfig(dir, clientCA, runtimeSocket string, port, healthzPort int) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %[1]s
port: %[2]d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %[3]d
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: %[4]q}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://%[5]s
clusterDNS: [%[6]s]
clusterDomain: cluster.local
resolvConf: %[7]q
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%%", imagefs.available: "1%%", nodefs.inodesFree: "1%%"}
podLogsDir: %[8]q
volumePluginDir: %[9]q
rotateCertificates: false
serializeImagePulls: false
registerNode: true
maxPods: 60
syncFrequency: 10s
nodeStatusUpdateFrequency: 5s
shutdownGracePeriod: 0s
protectKernelDefaults: false
localStorageCapacityIsolation: false
`, NodeIP, port, healthzPort, clientCA, runtimeSocket, DNSServiceIP,
		filepath.Join(dir, "resolv.conf"), filepath.Join(dir, "pod-logs"), filepath.Join(dir, "volume-plugins"))
}

// writeKubeletFiles writes the kubelet's configuration and an empty resolv.conf (pods get the
// cluster DNS only; the host's resolvers are unreachable anyway) into dir.
func writeKubeletFiles(dir, clientCA, runtimeSocket string, port, healthzPort int) (string, error) {
	for _, d := range []string{dir, filepath.Join(dir, "pod-logs"), filepath.Join(dir, "volume-plugins"), filepath.Join(dir, "root"), filepath.Join(dir, "pki")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", fmt.Errorf("creating %s: %w", d, err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "resolv.conf"), nil, 0o644); err != nil {
		return "", fmt.Errorf("writing resolv.conf: %w", err)
	}
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(kubeletConfig(dir, clientCA, runtimeSocket, port, healthzPort)), 0o644); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return path, nil
}

// kubeletArgs are the kubelet's flags besides its configuration file.
func kubeletArgs(dir, config, kubeconfig string) []string {
	return []string{
		"--config=" + config,
		"--kubeconfig=" + kubeconfig,
		"--root-dir=" + filepath.Join(dir, "root"),
		"--cert-dir=" + filepath.Join(dir, "pki"),
		"--hostname-override=" + NodeName,
		"--node-ip=" + NodeIP,
		"--v=2",
	}
}

// kubeProxyConfig is kube-proxy in iptables mode, serving on loopback only, leaving the host's
// conntrack settings alone, no NodePorts on loopback, and masquerading all Service traffic so
// that a pod reaching a Service backed by a pod on the same bridge gets the reply back through
// the host.
func kubeProxyConfig(kubeconfig string, healthzPort, metricsPort int) string {
	return fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection: {kubeconfig: %[1]q}
hostnameOverride: %[2]s
bindAddress: %[3]s
healthzBindAddress: 127.0.0.1:%[4]d
metricsBindAddress: 127.0.0.1:%[5]d
clusterCIDR: %[6]s
nodePortAddresses: [%[3]s/32]
iptables:
  masqueradeAll: true
  localhostNodePorts: false
  syncPeriod: 30s
  minSyncPeriod: 0s
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
`, kubeconfig, NodeName, NodeIP, healthzPort, metricsPort, PodSubnet)
}

func itoa(i int) string { return strconv.Itoa(i) }
