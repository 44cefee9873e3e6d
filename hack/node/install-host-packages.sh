#!/usr/bin/env bash
# Installs the host packages of the real-node tier from Debian when one is missing: containerd
# (with its runc shim), runc and the CNI plugins (bridge, host-local, portmap, loopback in
# /usr/lib/cni), and busybox-static (its /bin/busybox is the cp of OLM's util image, see
# hack/node/build-images.sh). Needs root; prints why and exits 0 when not root, so that "make test-env-node"
# can run anywhere. Used by the Makefile (test-env-node).
set -euo pipefail
missing=()
command -v containerd >/dev/null || missing+=(containerd)
command -v runc >/dev/null || missing+=(runc)
command -v iptables-restore >/dev/null || missing+=(iptables)
[[ -x /usr/lib/cni/bridge ]] || missing+=(containernetworking-plugins)
[[ -x /bin/busybox ]] || missing+=(busybox-static)
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "Host packages present: $(containerd --version | awk '{print $3}') containerd, $(runc --version | awk 'NR==1{print $3}') runc, CNI plugins in /usr/lib/cni"
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "Real-node tier skipped: ${missing[*]} missing and installing them needs root (running as $(id -un))."
  exit 0
fi
echo "Installing ${missing[*]} with apt-get"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "Installed: $(containerd --version | awk '{print $3}') containerd, $(runc --version | awk 'NR==1{print $3}') runc, CNI plugins in /usr/lib/cni"
