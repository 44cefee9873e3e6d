#!/usr/bin/env bash
# Renders the file-based catalog of the package as OLM on a cluster uses it: each bundle named by
# its image, by digest. It builds the bundle images of RELEASED_BUNDLE_DIRS (the released bundles,
# hack/olm/released/<version>, each kept so that its subscribers keep an upgrade path) and bundle/
# (image-tool bundle, reproducible) as OCI layouts in LAYOUT_DIR, pushes them to a
# throwaway registry on 127.0.0.1 (image-tool registry) and runs catalog-gen, which renders each
# with "opm render <image> --use-http" and names it IMAGE_REPO_BASE/PACKAGE-bundle@sha256:....
# Writes OUT_DIR/PACKAGE/index.yaml and prints "<layout> <ref:tag> <ref@digest>" per bundle.
#
# Used by "make catalog" (OUT_DIR catalog/), "make catalog-check" (a temporary OUT_DIR, compared
# with catalog/) and hack/node/build-images.sh.
#
# Usage: IMAGE_TOOL=... OPM=... IMAGE_REPO_BASE=quay.io/seed1b407122 PACKAGE=database-operator \
#          CHANNEL=candidate-v0 DEPRECATED_CHANNELS=stable VERSION=0.4.0 \
#          RELEASED_BUNDLE_DIRS="hack/olm/released/0.2.0 hack/olm/released/0.3.0" \
#          hack/olm/render-catalog.sh OUT_DIR LAYOUT_DIR
set -euo pipefail
out=${1:?output directory}
layouts=${2:?layout directory}
: "${IMAGE_TOOL:?}" "${OPM:?}" "${CHANNEL:?}" "${IMAGE_REPO_BASE:?}" "${VERSION:?}" "${RELEASED_BUNDLE_DIRS:?}"
package=${PACKAGE:-database-operator}
root=$(cd "$(dirname "$0")/../.." && pwd)
repo=$IMAGE_REPO_BASE/$package-bundle
host=${IMAGE_REPO_BASE%%/*}
mkdir -p "$out/$package" "$layouts"

# opm pulls with containers/image, which wants a signature policy: podman's default one (accept
# anything), in a HOME of its own.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/.config/containers"
echo '{"default": [{"type": "insecureAcceptAnything"}]}' > "$work/.config/containers/policy.json"
# Built as every hack/olm build of the Makefile (OLM_GO_ENV): static, -trimpath, sharing their cache.
(cd "$root/hack/olm" && GOWORK=off CGO_ENABLED=0 GOFLAGS=-trimpath go build -o "$work/catalog-gen" ./cmd/catalog-gen)

# Each released bundle's version is its directory's name (hack/olm/released/<version>).
pairs=()
for dir in $RELEASED_BUNDLE_DIRS; do
  version=$(basename "$dir")
  [[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "released bundle $dir: want a directory named by its version" >&2; exit 1; }
  pairs+=("$version=$dir")
done
args=() pushes=() listing=()
for pair in "${pairs[@]}" "$VERSION=bundle"; do
  version=${pair%%=*} dir=$root/${pair#*=}
  layout=$layouts/bundle-$version
  digest=$("$IMAGE_TOOL" bundle --dir "$dir" --tag "$repo:v$version" --layout "$layout" | awk 'NR == 1 {print $2}')
  [[ $digest == sha256:* ]] || { echo "no digest for the bundle image of $dir" >&2; exit 1; }
  args+=("$dir=$repo@$digest")
  pushes+=(--push "$layout=${repo#*/}:v$version")
  listing+=("$layout $repo:v$version $repo@$digest")
done
"$IMAGE_TOOL" registry "${pushes[@]}" -- env HOME="$work" bash -c \
  '"$0" --opm "$1" --package "$2" --channel "$3" --deprecated-channels "$4" --mirror "$5=$REGISTRY" --output "$6" "${@:7}"' \
  "$work/catalog-gen" "$OPM" "$package" "${CHANNEL:?}" "${DEPRECATED_CHANNELS:-}" "$host" "$out/$package/index.yaml" "${args[@]}" >&2
printf '%s\n' "${listing[@]}"
