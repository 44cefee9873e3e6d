#!/usr/bin/env bash
# Builds the images of the real-node tier as docker-archive tarballs that
# "ctr -n k8s.io images import FILE" accepts, and OUT_DIR/images.txt, one "<tarball> <image ref>"
# per line (absolute tarball paths). Nothing is pulled: every image is static binaries on an
# empty base, assembled by image-tool (hack/images); the same inputs give the same digests.
#
#   database-operator.test/pause:v1     the CRI sandbox image (test/harness/operands/images/pause), user 65535
#   database-operator.test/etcd:v2      the static etcd of NODE_ENV_DIR at /usr/local/bin/etcd, user 65532
#                                       (label org.opencontainers.image.version=v2): the roll target
#   gcr.io/etcd-development/etcd:vX.Y.Z the same static etcd under the upstream image reference of the
#                                       etcd version hack/node/go.mod builds (the one config/samples'
#                                       etcd sample names), built as upstream's Dockerfile does: no
#                                       USER (root: the sample's spec.securityContext sets the uid),
#                                       no ENTRYPOINT, CMD ["/usr/local/bin/etcd"]
#   database-operator.test/testdb:v1    the test database (test/harness/operands/images/testdb), user 65532
#   database-operator.test/coredns:v1   CoreDNS at /coredns, user 65532 without capabilities: it
#                                       cannot bind port 53, so its Corefile must listen on a high
#                                       port (e.g. 1053) behind a Service mapping 53 -> 1053
#   database-operator:PREVIOUS_VERSION  the operator image (image-tool operator) of PREVIOUS_MANAGER_BIN,
#                                       the released manager built from its own commit (make
#                                       manager-previous): the older bundle of catalog/ names it
#   database-operator:VERSION           the operator image of MANAGER_BIN (today's code): bundle/
#
# Usage: IMAGE_TOOL=bin/image-tool NODE_ENV_DIR=... MANAGER_BIN=... PREVIOUS_MANAGER_BIN=... \
#          VERSION=0.3.0 PREVIOUS_VERSION=0.2.0 ARCH=amd64 hack/node/build-images.sh OUT_DIR
set -euo pipefail
out=${1:?output directory}
: "${IMAGE_TOOL:?}" "${NODE_ENV_DIR:?}" "${MANAGER_BIN:?}" "${PREVIOUS_MANAGER_BIN:?}" "${VERSION:?}" "${PREVIOUS_VERSION:?}"
arch=${ARCH:-amd64}
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out/bin"
out=$(cd "$out" && pwd)

# The programs written for the tests, static like every binary of these images.
(cd "$root" && CGO_ENABLED=0 GOOS=linux GOARCH="$arch" go build -trimpath -ldflags="-s -w" -o "$out/bin/" \
  ./test/harness/operands/images/pause ./test/harness/operands/images/testdb)

list="$out/images.txt.tmp"
: > "$list"
# image FILE REF ARGS...: one image-tool call, recorded in images.txt.
image() {
  local file=$out/$1 ref=$2
  shift 2
  "$IMAGE_TOOL" "$@" --arch "$arch" --tag "$ref" --tarball "$file"
  echo "$file $ref" >> "$list"
}
image pause-v1.tar database-operator.test/pause:v1 static \
  --file "$out/bin/pause:/pause" --user 65535:65535
# The same binary under another reference for the roll sample -> v2 -> sample; its config (user,
# ENTRYPOINT, label) gives it its own digest, so the kubelet reports a different imageID after the
# roll, as with a real new release.
image etcd-v2.tar database-operator.test/etcd:v2 static \
  --file "$NODE_ENV_DIR/etcd:/usr/local/bin/etcd" --user 65532:65532 \
  --label "org.opencontainers.image.version=v2"
# The sample's image: the reference config/samples names, the version of hack/node/go.mod.
etcd_version=$(awk '$1 == "go.etcd.io/etcd/server/v3" && $2 ~ /^v/ {print $2}' "$root/hack/node/go.mod")
image etcd-upstream.tar "gcr.io/etcd-development/etcd:$etcd_version" static \
  --file "$NODE_ENV_DIR/etcd:/usr/local/bin/etcd" --user 0 --cmd /usr/local/bin/etcd
image testdb-v1.tar database-operator.test/testdb:v1 static \
  --file "$out/bin/testdb:/testdb" --user 65532:65532
image coredns-v1.tar database-operator.test/coredns:v1 static \
  --file "$NODE_ENV_DIR/coredns:/coredns" --user 65532:65532
image "database-operator-$PREVIOUS_VERSION.tar" "database-operator:$PREVIOUS_VERSION" operator \
  --binary "$PREVIOUS_MANAGER_BIN" --dockerfile "$root/Dockerfile"
image "database-operator-$VERSION.tar" "database-operator:$VERSION" operator \
  --binary "$MANAGER_BIN" --dockerfile "$root/Dockerfile"
mv "$list" "$out/images.txt"
echo "Node images in $out (list: $out/images.txt)"
