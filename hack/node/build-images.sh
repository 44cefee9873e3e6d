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
#                                       manager-previous); images-test.sh runs it
#   database-operator:VERSION           the operator image of MANAGER_BIN (today's code): bundle/
#
# And the images the node pulls from the test registry, by digest, as OCI layouts in
# OUT_DIR/layouts with OUT_DIR/registry.txt, one "<layout> <ref:tag> <ref@sha256:digest>" per line
# (the harness pushes each layout to the registry as ref:tag, minus the host):
#   OPM_IMAGE (quay.io/operator-framework/opm)  OPM_LAYOUT, "make opm-image": the static opm at
#                                       /bin/opm and grpc_health_probe, user 1001, ENTRYPOINT /bin/opm:
#                                       OLM's opm image (bundle extraction) and the catalog's base
#   ECHO_IMAGE (IMAGE_REPO_BASE/database-operator-echo:vVERSION)
#                                       ECHO_LAYOUT, "make echo-ref": hack/echo's shell as /bin/sh,
#                                       the image the Jobs of Echo and ScheduledEcho run (the
#                                       manifests name it by this digest, make echo-image-check)
#   POSTGRES_IMAGE (IMAGE_REPO_BASE/database-operator-postgres:15)
#                                       POSTGRES_LAYOUT, "make postgres-image": Debian's PostgreSQL 15
#                                       packages and hack/postgres's entrypoint, user 65532, the image
#                                       config/samples' PostgreSQL sample names (not Docker Hub's)
#   OLM_IMAGE (.../olm)                 OLM's image, user 1001, as upstream's: its two controllers
#                                       /bin/olm and /bin/catalog (OLM_BIN_DIR, make olm-runtime),
#                                       which OLM's Deployments run, and its util image for bundle
#                                       unpacking: CPB at /bin/cpb and OLM_CP (hack/olm/cmd/cp) as /bin/cp,
#                                       which the unpack Job runs
#   OPERATOR_REPO:vVERSION              the operator image of MANAGER_BIN, the one bundle/'s CSV names
#                                       by digest (make operator-ref builds the same image)
#   OPERATOR_REPO:vPREVIOUS_VERSION     the operator image of PREVIOUS_MANAGER_BIN, when the released
#                                       CSV (PREVIOUS_BUNDLE_DIR) names its operator by digest: only
#                                       if the rebuilt image has exactly that digest (released_operator)
#   IMAGE_REPO_BASE/database-operator-bundle:v<version>
#                                       the bundle images of RELEASED_BUNDLE_DIRS and bundle/
#   CATALOG_IMAGE (IMAGE_REPO_BASE/database-operator-catalog:vVERSION)
#                                       CATALOG_LAYOUT, "make catalog-build": catalog/ (each bundle
#                                       by digest) under /configs, on the opm image, with its serve
#                                       cache pre-built
#
# Each of them is signed with OUT_DIR/cosign.key (generated once) and has a provenance
# attestation: OUT_DIR/signatures, listed in registry.txt too (see the end of this script).
#
# Usage: IMAGE_TOOL=bin/image-tool NODE_ENV_DIR=... MANAGER_BIN=... PREVIOUS_MANAGER_BIN=... \
#          OPM=... CPB=... OLM_BIN_DIR=... OLM_CP=... OPM_LAYOUT=... CATALOG_LAYOUT=... ECHO_LAYOUT=... ECHO_IMAGE=... POSTGRES_LAYOUT=... POSTGRES_IMAGE=... OPM_IMAGE=... OLM_IMAGE=... CATALOG_IMAGE=... \
#          IMAGE_REPO_BASE=quay.io/seed1b407122 PREVIOUS_BUNDLE_DIR=hack/olm/released/0.3.0 \
#          RELEASED_BUNDLE_DIRS="hack/olm/released/0.2.0 hack/olm/released/0.3.0" \
#          VERSION=0.4.0 PREVIOUS_VERSION=0.3.0 ARCH=amd64 hack/node/build-images.sh OUT_DIR
set -euo pipefail
out=${1:?output directory}
: "${IMAGE_TOOL:?}" "${NODE_ENV_DIR:?}" "${MANAGER_BIN:?}" "${PREVIOUS_MANAGER_BIN:?}" "${VERSION:?}" "${PREVIOUS_VERSION:?}"
arch=${ARCH:-amd64}
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out/bin"
out=$(cd "$out" && pwd)

# released_dockerfile: the release commit's Dockerfile, which hack/build-previous-manager.sh puts
# next to the binary; today's for a binary built before it did.
released_dockerfile() {
  local f
  f=$(dirname "$PREVIOUS_MANAGER_BIN")/Dockerfile
  [[ -f $f ]] || f=$root/Dockerfile
  echo "$f"
}

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
  --binary "$PREVIOUS_MANAGER_BIN" --dockerfile "$(released_dockerfile)"
image "database-operator-$VERSION.tar" "database-operator:$VERSION" operator \
  --binary "$MANAGER_BIN" --dockerfile "$root/Dockerfile"
mv "$list" "$out/images.txt"
echo "Node images in $out (list: $out/images.txt)"

: "${OPM:?}" "${CPB:?}" "${OLM_BIN_DIR:?}" "${OLM_CP:?}" "${OPM_LAYOUT:?}" "${CATALOG_LAYOUT:?}" "${ECHO_LAYOUT:?}" "${ECHO_IMAGE:?}" "${OPM_IMAGE:?}" "${OLM_IMAGE:?}" "${CATALOG_IMAGE:?}" "${IMAGE_REPO_BASE:?}" "${PREVIOUS_BUNDLE_DIR:?}"
package=${PACKAGE:-database-operator}
reg="$out/registry.txt.tmp"
: > "$reg"
rm -rf "$out/layouts"
# record LAYOUT REF: registry.txt's line of an OCI layout built elsewhere (make opm-image,
# catalog-build), pushed as REF (a tag).
record() {
  local digest
  digest=$("$IMAGE_TOOL" digest --from "$1")
  echo "$1 $2 ${2%:*}@$digest" >> "$reg"
}
# layout NAME REF ARGS...: one image-tool call into OUT_DIR/layouts/NAME, recorded in
# registry.txt.
layout() {
  local dir=$out/layouts/$1 ref=$2
  shift 2
  "$IMAGE_TOOL" "$@" --tag "$ref" --layout "$dir" >/dev/null
  record "$dir" "$ref"
}
# released_operator: the released CSV (PREVIOUS_BUNDLE_DIR) names the operator image it runs. By
# tag (0.2.0: database-operator:0.2.0), the node imports the tarball above. By digest (0.3.0 on),
# the node pulls it from the registry, as a user's cluster pulls it from quay.io: the image of
# PREVIOUS_MANAGER_BIN, rebuilt from the release commit, is served only if it has exactly that
# digest, so the upgrade tests run the released image's content and nothing else.
released_operator() {
  local csv want dir=$out/layouts/operator-$PREVIOUS_VERSION repo=${OPERATOR_REPO:-$IMAGE_REPO_BASE/$package} got
  csv=$(echo "$root/$PREVIOUS_BUNDLE_DIR"/manifests/*.clusterserviceversion.yaml)
  want=$(awk '$1 == "containerImage:" {print $2; exit}' "$csv")
  [[ $want == *@sha256:* ]] || return 0
  [[ ${want%@*} == "$repo" ]] || { echo "released CSV $csv names $want, not an image of $repo" >&2; exit 1; }
  "$IMAGE_TOOL" operator --arch "$arch" --binary "$PREVIOUS_MANAGER_BIN" --dockerfile "$(released_dockerfile)" \
    --tag "$repo:v$PREVIOUS_VERSION" --layout "$dir" >/dev/null
  got=$("$IMAGE_TOOL" digest --from "$dir")
  if [[ $got != "${want#*@}" ]]; then
    echo "the operator image rebuilt from the release commit of $PREVIOUS_VERSION is $repo@$got," >&2
    echo "  not $want, the one its CSV names: the released image does not reproduce from its source" >&2
    exit 1
  fi
  record "$dir" "$repo:v$PREVIOUS_VERSION"
}
record "$OPM_LAYOUT" "$OPM_IMAGE"
record "$CATALOG_LAYOUT" "$CATALOG_IMAGE"
record "$ECHO_LAYOUT" "$ECHO_IMAGE"
record "${POSTGRES_LAYOUT:?}" "${POSTGRES_IMAGE:?}"
layout "operator-$VERSION" "${OPERATOR_REPO:-$IMAGE_REPO_BASE/$package}:v$VERSION" operator --arch "$arch" \
  --binary "$MANAGER_BIN" --dockerfile "$root/Dockerfile"
released_operator
layout olm "$OLM_IMAGE" static --arch "$arch" --user 1001 --entrypoint /bin/cpb \
  --file "$OLM_BIN_DIR/olm:/bin/olm" --file "$OLM_BIN_DIR/catalog:/bin/catalog" \
  --file "$CPB:/bin/cpb" --file "$OLM_CP:/bin/cp"
# The bundle images, as hack/olm/render-catalog.sh builds them for "make catalog": the catalog
# image (catalog/, make catalog-build) names them by these digests ("make verify" checks that
# catalog/ is current).
IMAGE_TOOL=$IMAGE_TOOL OPM=$OPM IMAGE_REPO_BASE=$IMAGE_REPO_BASE PACKAGE=$package CHANNEL=${CHANNEL:?} DEPRECATED_CHANNELS=${DEPRECATED_CHANNELS:-} \
  VERSION=$VERSION RELEASED_BUNDLE_DIRS="${RELEASED_BUNDLE_DIRS:?}" \
  "$root/hack/olm/render-catalog.sh" "$out/catalog" "$out/layouts" >> "$reg"
if ! diff -r "$root/catalog" "$out/catalog" >/dev/null; then
  echo "catalog/ is not what the bundle images render to: run 'make catalog'" >&2
  exit 1
fi
# Every registry image is signed, as a release signs its images (docs/release.md): a key pair
# generated into OUT_DIR once (cosign.key with an empty password: a test key, never a release
# key; kept across runs), and next to each image its cosign signature (<repo>:sha256-HEX.sig)
# and SLSA provenance attestation (.att) naming this commit and "make node-images", as OCI
# layouts in OUT_DIR/signatures listed in registry.txt. The real-node tier verifies every image
# against OUT_DIR/cosign.pub before it installs anything (test/harness/realnode, verify.go).
rm -rf "$out/signatures"
COSIGN_PASSWORD='' "$IMAGE_TOOL" keygen --dir "$out" --keep
commit=$(git -C "$root" rev-parse HEAD)
dirty=false
[[ -z $(git -C "$root" status --porcelain) ]] || dirty=true
COSIGN_PASSWORD='' "$IMAGE_TOOL" sign --key "$out/cosign.key" --list "$reg" --out-dir "$out/signatures" \
  --commit "$commit" --command "make node-images" --invocation "node-images-$(date -u +%Y%m%dT%H%M%SZ)" \
  --param "VERSION=$VERSION" --param "dirty=$dirty" > "$reg.signatures"
cat "$reg.signatures" >> "$reg"
rm -f "$reg.signatures"
mv "$reg" "$out/registry.txt"
echo "Registry images (list: $out/registry.txt, signed with $out/cosign.key; public key $out/cosign.pub):"
cat "$out/registry.txt"
