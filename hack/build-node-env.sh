#!/usr/bin/env bash
# Builds the host binaries of the real-node tier from pinned Go modules: kubelet and kube-proxy
# (hack/node/go.mod, k8s.io/kubernetes), etcd (hack/node/go.mod, the operand of the node tests)
# and coredns (hack/coredns/go.mod, the cluster DNS). Nothing is downloaded from release pages;
# everything comes from the Go module proxy.
#
# Usage: hack/build-node-env.sh OUTPUT_DIR
# The output directory is per machine (NODE_ENV_DIR in the Makefile); a stamp file records a
# complete build so that later runs cost nothing.
#
# Everything is static (CGO_ENABLED=0) and -trimpath: etcd and coredns go into images with an
# empty base (make node-images), and kubelet (static upstream since Kubernetes 1.36) and kube-proxy
# run on the host and are built exactly like the control plane of hack/build-test-env.sh (the same
# flags and ldflags), and
# hack/node/go.mod requires the same versions as hack/tools/go.mod for every module both use
# (etcd's excepted: the operand's version is the sample's), so the two builds share the Go build
# cache: after the control plane, kubelet and kube-proxy cost under a minute instead of ~7.
# hack/node/modules-check.sh (make verify) fails when the two drift apart. coredns is hack/coredns's main
# package: CoreDNS with only the plugins the node's Corefile uses.
set -euo pipefail
out=${1:?output directory}
here=$(cd "$(dirname "$0")" && pwd)
stamp="$out/.stamp"
if [[ -f "$stamp" ]]; then
  exit 0
fi
mkdir -p "$out"
# Static and -trimpath, as every build of the Makefile (see its top), so that the control plane,
# the real node, the snapshot-controller and promtool share compiled packages.
export GOWORK=off CGO_ENABLED=0 GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=mod -trimpath"
kube_version=$(cd "$here/node" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
coredns_version=$(cd "$here/coredns" && go list -m -f '{{.Version}}' github.com/coredns/coredns)
ldflags="-s -w $("$here/kube-ldflags.sh" "$kube_version")"
start=$(date +%s)
echo "Building kubelet, kube-proxy ${kube_version}, etcd, coredns ${coredns_version} into $out (cold, after the control plane: ~3 min on 2 cores)"
cd "$here/node"
go build -ldflags "$ldflags" -o "$out/" k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy
# The etcd main package is go.etcd.io/etcd/server/v3: "go build -o DIR/" would name it "server".
go build -ldflags "-s -w" -o "$out/etcd" go.etcd.io/etcd/server/v3
cd "$here/coredns"
go build -ldflags "-s -w" -o "$out/coredns" .
{
  echo "kubelet, kube-proxy ${kube_version}, etcd, coredns ${coredns_version} built in $(( $(date +%s) - start ))s"
  for b in kubelet kube-proxy etcd coredns; do sha256sum "$out/$b"; done
} > "$stamp.tmp"
mv "$stamp.tmp" "$stamp"
cat "$stamp"
