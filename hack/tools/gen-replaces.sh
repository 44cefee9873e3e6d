#!/usr/bin/env bash
# Prints the replace block a tools module that requires k8s.io/kubernetes needs (hack/tools,
# hack/node): k8s.io/kubernetes requires each of its staging repositories as v0.0.0 and replaces
# them with ./staging paths, which do not exist in a module download. We pin every staging
# repository to the matching published v0.X.Y instead. The list is read from the kubernetes .mod
# file so that new staging repos (they appear between minors) are picked up.
# Usage: hack/tools/gen-replaces.sh v1.37.1 >> go.mod (before "go get"; regenerate the block when
# moving to a new Kubernetes version).
set -euo pipefail
kube_version=${1:?kubernetes version, e.g. v1.37.1}
staging_version="v0.${kube_version#v1.}"
mod=$(GOWORK=off GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@${kube_version}" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
echo "replace ("
awk '/^replace \(/{in_block=1; next} in_block && /^\)/{in_block=0} in_block && /=> .\/staging/{print $1}' "$mod" |
  while read -r repo; do echo "	${repo} => ${repo} ${staging_version}"; done
echo ")"
