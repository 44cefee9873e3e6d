#!/usr/bin/env bash
# "make release VERSION=x.y.z": cuts a release of the committed tree into RELEASE_DIR
# (bin/release/<version>/). docs/release.md says what it does and how to verify the result.
#
#  1. Refuses a dirty work tree (tracked changes or untracked files), a VERSION that is not the
#     bundle's, the chart's or a semantic version, an existing RELEASE_DIR, and a tree where
#     "make verify" (RELEASE_VERIFY) fails or fuzzing finds a failing input (RELEASE_FUZZ).
#  2. Builds the images by digest: the operator (make operator-ref: the digest the CSV names),
#     Echo (make echo-ref), the bundle images of every bundle the catalog names (released and
#     this one, hack/olm/render-catalog.sh) and the catalog image (make catalog-build).
#  3. Pushes them to REGISTRY (default: image-tool's registry on 127.0.0.1, started here and
#     stopped at the end), each under its repository path with tag v<version>.
#  4. Makes the SBOMs (make release-sbom: make sbom) and attaches them to the pushed images as
#     OCI referrers; generates the release's key pair (RELEASE_DIR/cosign.key, encrypted with
#     $COSIGN_PASSWORD, and cosign.pub), unless COSIGN_KEY names an existing key; signs every
#     image and attests its provenance (commit, command), pushed next to each image and kept as
#     OCI layouts.
#  5. Packages the Helm chart, the kubectl-dbc archives with their checksums, exports the
#     OperatorHub layout (make operatorhub, into RELEASE_DIR/operatorhub), writes the release
#     notes and SHA256SUMS, and verifies every image from the registry and, offline, from
#     RELEASE_DIR.
#
# Inputs (environment, set by the Makefile): VERSION PREVIOUS_COMMIT REGISTRY RELEASE_DIR MAKE
# IMAGE_TOOL IMAGES_DIR IMAGE_REPO_BASE OPERATOR_REPO ECHO_REPO PACKAGE_NAME HELM_CHART
# RELEASE_VERIFY (default "$MAKE verify") RELEASE_FUZZ (default "$MAKE test-fuzz") COSIGN_KEY COSIGN_PUBLIC_KEY COSIGN_PASSWORD
# RELEASE_COMMAND, and render-catalog.sh's OPM CHANNEL DEPRECATED_CHANNELS RELEASED_BUNDLE_DIRS.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
: "${VERSION:?}" "${MAKE:=make}"
refuse() { echo "make release: refusing to release $VERSION: $*" >&2; exit 1; }

# 1. Preconditions, cheapest first; nothing is built before they hold.
# x.y.z, or a candidate of it, x.y.z-rc.N: a candidate ships the bundle of x.y.z (its CSV is
# x.y.z) under tags of its own, and the final release pushes the same digests again.
[[ $VERSION =~ ^([0-9]+\.[0-9]+\.[0-9]+)(-rc\.[0-9]+)?$ ]] || refuse "VERSION must be x.y.z or x.y.z-rc.N"
core=${BASH_REMATCH[1]}
dirty=$(git status --porcelain)
[[ -z $dirty ]] || refuse "the work tree is dirty (commit or remove these first):
$dirty"
csv=bundle/manifests/${PACKAGE_NAME:-database-operator}.clusterserviceversion.yaml
bundle_version=$(sed -n 's/^  version: \([0-9][^ ]*\)$/\1/p' "$csv" | tail -1)
[[ $bundle_version == "$core" ]] || refuse "bundle/ is version $bundle_version: run 'make bundle catalog VERSION=$core' (and set PREVIOUS_VERSION) and commit first"
: "${RELEASE_DIR:=$root/bin/release/$VERSION}"
[[ ! -e $RELEASE_DIR ]] || refuse "$RELEASE_DIR exists: a release directory is written once (remove it to cut the release again)"
echo "== make verify"
${RELEASE_VERIFY:-$MAKE --no-print-directory verify} || refuse "make verify failed"
# make verify must leave the tree as it was (it regenerates files): check again.
[[ -z $(git status --porcelain) ]] || refuse "make verify changed the tree:
$(git status --porcelain)"
echo "== make test-fuzz"
${RELEASE_FUZZ:-$MAKE --no-print-directory test-fuzz} || refuse "fuzzing failed (a failing input is in the package's testdata/fuzz/)"

: "${IMAGE_TOOL:?}" "${IMAGES_DIR:?}" "${IMAGE_REPO_BASE:?}" "${OPERATOR_REPO:?}" "${ECHO_REPO:?}" "${PREVIOUS_COMMIT:?}"
package=${PACKAGE_NAME:-database-operator}
commit=$(git rev-parse HEAD)
started=$(date +%s)
command=${RELEASE_COMMAND:-make release VERSION=$VERSION}
mkdir -p "$RELEASE_DIR"
dir=$(cd "$RELEASE_DIR" && pwd)
mkdir -p "$dir/images"
echo "Releasing $VERSION from $commit into $dir"

# 2. Images, as OCI layouts copied into the release directory.
echo "== images"
$MAKE --no-print-directory "$IMAGE_TOOL" "${OPM:?}" operator-ref echo-ref
list=$dir/images.txt
: > "$list"
# add LAYOUT NAME REF: copy the layout into images/NAME and list it as REF (repo:tag).
add() {
  rm -rf "$dir/images/$2"
  cp -r "$1" "$dir/images/$2"
  echo "images/$2 $3 ${3%:*}@$("$IMAGE_TOOL" digest --from "$dir/images/$2")" >> "$list"
}
add "$IMAGES_DIR/operator-release" operator "$OPERATOR_REPO:v$VERSION"
add "$IMAGES_DIR/echo" echo "$ECHO_REPO:v$VERSION"
operator=$(awk 'NR == 1 {print $3}' "$list")
grep -qF "$operator" "$csv" || refuse "bundle/'s CSV does not name the operator image this tree builds, $operator"
# The bundle images of the catalog, rendered as make catalog-check renders them (so their
# digests are the ones catalog/ names; make verify checked that). The Makefile exports
# render-catalog.sh's inputs (OPM, CHANNEL, RELEASED_BUNDLE_DIRS, ...).
render=$(mktemp -d)
trap 'rm -rf "$render"' EXIT
PACKAGE=$package hack/olm/render-catalog.sh "$render/catalog" "$render/layouts" > "$render/bundles"
diff -r catalog "$render/catalog" > /dev/null || refuse "catalog/ is not what the bundle images render to"
while read -r layout tag _; do
  add "$layout" "$(basename "$layout")" "$tag"
done < "$render/bundles"
catalog_img=$IMAGE_REPO_BASE/$package-catalog:v$VERSION
$MAKE --no-print-directory catalog-build CATALOG_IMG="$catalog_img"
add "$IMAGES_DIR/catalog" catalog "$catalog_img"

# 3. The registry.
registry_pid=
stop_registry() { [[ -z $registry_pid ]] || kill "$registry_pid" 2>/dev/null || true; rm -rf "$render"; }
trap stop_registry EXIT
if [[ -z ${REGISTRY:-} ]]; then
  "$IMAGE_TOOL" registry --addr 127.0.0.1:0 --ready "$render/registry" --log "$dir/registry.log" &
  registry_pid=$!
  for _ in $(seq 100); do [[ -s $render/registry ]] && break; sleep 0.1; done
  REGISTRY=$(head -1 "$render/registry")
  [[ -n $REGISTRY ]] || refuse "the local registry did not start"
  echo "== local registry on $REGISTRY (image-tool registry; stops with this release)"
fi
insecure=()
[[ -z ${REGISTRY_INSECURE:-} ]] || insecure=(--insecure)
echo "== push to $REGISTRY"
while read -r layout tag _; do
  "$IMAGE_TOOL" push --from "$dir/$layout" --push "$REGISTRY/${tag#*/}" "${insecure[@]}"
done < "$list"

# 4. SBOMs (make sbom), attached to the pushed images as OCI referrers while the list holds the
# images only; then the key pair, signatures and provenance.
echo "== SBOMs"
$MAKE --no-print-directory release-sbom VERSION="$VERSION" RELEASE_DIR="$dir" REGISTRY="$REGISTRY" RELEASE_IMAGES="$list"
echo "== sign"
key=${COSIGN_KEY:-}
if [[ -z $key ]]; then
  [[ -n ${COSIGN_PASSWORD:-} ]] || echo "warning: COSIGN_PASSWORD is empty: the release key is encrypted with an empty password" >&2
  "$IMAGE_TOOL" keygen --dir "$dir"
  key=$dir/cosign.key
else
  cp "${COSIGN_PUBLIC_KEY:?COSIGN_KEY needs COSIGN_PUBLIC_KEY}" "$dir/cosign.pub"
fi
"$IMAGE_TOOL" sign --key "$key" --list "$list" --registry "$REGISTRY" "${insecure[@]}" --out-dir "$dir/signatures" \
  --commit "$commit" --command "$command" --invocation "release-$VERSION-$started" --started "$started" \
  --param "VERSION=$VERSION" --param "REGISTRY=${REGISTRY}" | sed "s|^$dir/||" > "$dir/signatures.txt"
cat "$dir/signatures.txt" >> "$list"
rm "$dir/signatures.txt"

# 5. Chart, plugin archives, the OperatorHub layout (of the core version), notes, checksums.
echo "== Helm chart"
(cd hack/helm && GOWORK=off go run ./cmd/helm-package --version "$core" -d "$dir/chart" "$root/${HELM_CHART:-charts/database-operator}")
echo "== kubectl-dbc"
$MAKE --no-print-directory kubectl-dbc-release VERSION="$VERSION" KUBECTL_DBC_RELEASE_DIR="$dir/kubectl-dbc"
echo "== OperatorHub layout"
$MAKE --no-print-directory operatorhub VERSION="$core" OPERATORHUB_DIR="$dir/operatorhub"
echo "== release notes"
go run ./hack/release notes --version "$VERSION" --since "$PREVIOUS_COMMIT" --csv "$csv" \
  --annotations bundle/metadata/annotations.yaml --images "$list" --out "$dir/RELEASE_NOTES.md"
(cd "$dir" && find . -type f ! -name SHA256SUMS ! -name cosign.key ! -name registry.log ! -path './images/*' ! -path './signatures/*' \
  | sed 's|^\./||' | LC_ALL=C sort | xargs sha256sum > SHA256SUMS)

echo "== verify (from $REGISTRY, then offline from $dir)"
"$IMAGE_TOOL" verify --key "$dir/cosign.pub" --commit "$commit" --list "$list" --registry "$REGISTRY" "${insecure[@]}"
"$IMAGE_TOOL" verify --key "$dir/cosign.pub" --commit "$commit" --list "$list" --serve > /dev/null
echo "Release $VERSION written to $dir ($(wc -l < "$list") images and signatures; notes: $dir/RELEASE_NOTES.md)."
echo "Tag it: git tag -a v$VERSION $commit -m 'database-operator $VERSION' && git push origin v$VERSION"
