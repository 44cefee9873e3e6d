#!/usr/bin/env bash
# Builds the binaries of the local control plane from the pinned tools module (hack/tools/go.mod):
# kube-apiserver, kube-controller-manager, kube-scheduler, etcd and kwok (only the binaries the
# harness runs: kwokctl is not one). Nothing is
# downloaded from release pages; everything comes from the Go module proxy.
#
# Usage: hack/build-test-env.sh OUTPUT_DIR
# The output directory is per machine (see TEST_ENV_DIR in the Makefile); a stamp file records a
# complete build so that later runs cost nothing.
set -euo pipefail
out=${1:?output directory}
here=$(cd "$(dirname "$0")" && pwd)
kube_version=v1.37.1
stamp="$out/.stamp"
if [[ -f "$stamp" ]]; then
  exit 0
fi
mkdir -p "$out"
# Without the version flags the binaries report v0.0.0 (see hack/kube-ldflags.sh).
ldflags="-s -w $("$here/kube-ldflags.sh" "$kube_version")"
cd "$here/tools"
# Static and -trimpath, as every build of the Makefile (see its top), so that the control plane,
# the real node, the snapshot-controller and promtool share compiled packages.
export GOWORK=off CGO_ENABLED=0 GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=mod -trimpath"
start=$(date +%s)
echo "Building the local control plane ${kube_version} into $out (cold: ~10-14 min, ~3 GB RAM)"
go build -ldflags "$ldflags" -o "$out/" \
  k8s.io/kubernetes/cmd/kube-apiserver \
  k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler \
  sigs.k8s.io/kwok/cmd/kwok
# The etcd main package is go.etcd.io/etcd/server/v3: "go build -o DIR/" would name it "server".
go build -ldflags "-s -w" -o "$out/etcd" go.etcd.io/etcd/server/v3
echo "${kube_version} built in $(( $(date +%s) - start ))s" > "$stamp"
cat "$stamp"
