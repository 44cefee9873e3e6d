#!/usr/bin/env bash
# Prints the -X linker flags that give Kubernetes binaries built from a module (not from the
# kubernetes repository with its hack/lib/version.sh) their version. Without them they report
# v0.0.0, which breaks kwokctl's and kubectl's version checks and the kubelet's node status.
# Used by hack/build-test-env.sh and hack/build-node-env.sh. Usage: hack/kube-ldflags.sh v1.37.1
set -euo pipefail
kube_version=${1:?kubernetes version, e.g. v1.37.1}
minor=${kube_version#v1.}; minor=${minor%%.*}
flags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  flags+=" -X ${pkg}.gitVersion=${kube_version} -X ${pkg}.gitMajor=1 -X ${pkg}.gitMinor=${minor}"
  flags+=" -X ${pkg}.gitTreeState=clean -X ${pkg}.buildDate=1970-01-01T00:00:00Z"
done
echo "${flags# }"
