#!/usr/bin/env bash
# Fails when hack/node/go.mod and hack/tools/go.mod build a module they share at different
# versions. kubelet and kube-proxy (hack/node) then share the Go build cache with the control
# plane (hack/tools): one differing module low in the graph (golang.org/x/sys, say) makes every
# package above it compile twice, ~7 min cold on 2 cores. etcd's modules are exempt: hack/node's
# etcd is the operand, at the version config/samples' etcd sample names.
#
# Usage: hack/node/modules-check.sh   (run by make verify; needs only the module cache or proxy)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
export GOWORK=off GOFLAGS=-mod=mod
modules() { # modules providing the packages of the named commands, as "path version"
  (cd "$here/$1" && shift && go list -deps -f '{{with .Module}}{{if not .Main}}{{.Path}} {{with .Replace}}{{.Version}}{{else}}{{.Version}}{{end}}{{end}}{{end}}' "$@") | sort -u
}
node=$(modules node k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy)
tools=$(modules tools k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler)
drift=$(join <(echo "$tools") <(echo "$node") | awk '$2 != $3 && $1 !~ /^go\.etcd\.io\/etcd\// {print "  " $1 ": hack/tools " $2 ", hack/node " $3}')
if [[ -n "$drift" ]]; then
  echo "hack/node and hack/tools build shared modules at different versions (kubelet would not share the control plane's build cache):" >&2
  echo "$drift" >&2
  echo "Align them: cd hack/node && GOWORK=off go get <module>@<hack/tools' version> && go mod tidy" >&2
  exit 1
fi
echo "hack/node and hack/tools agree on the $(join <(echo "$tools") <(echo "$node") | wc -l) modules they share"
