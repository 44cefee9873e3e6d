#!/usr/bin/env bash
# Builds the snapshot parts of the local control plane from the pinned tools module
# (hack/snapshot/go.mod): external-snapshotter's snapshot-controller (only that binary), and
# copies the three VolumeSnapshot CRDs (snapshot.storage.k8s.io: volumesnapshotclasses,
# volumesnapshotcontents, volumesnapshots) from the client module's config/crd into OUTPUT_DIR/crds,
# so that the CRDs always match the controller. Nothing is downloaded from release pages.
#
# Usage: hack/snapshot/build.sh OUTPUT_DIR
# The output directory is per machine (SNAPSHOT_ENV_DIR in the Makefile); a stamp file records a
# complete build so that later runs cost nothing.
set -euo pipefail
out=${1:?output directory}
stamp="$out/.stamp"
if [[ -f "$stamp" ]]; then
  exit 0
fi
cd "$(dirname "$0")"
# Static and -trimpath, as every build of the Makefile (see its top).
export GOWORK=off CGO_ENABLED=0 GOFLAGS="${GOFLAGS:+$GOFLAGS }-trimpath"
start=$(date +%s)
main=github.com/kubernetes-csi/external-snapshotter/v8
client=github.com/kubernetes-csi/external-snapshotter/client/v8
version=$(go list -m -f '{{.Version}}' "$main")
# "go mod download -json" fetches the module and prints its Dir; "go list -m -f {{.Dir}}" prints
# an empty Dir while the module is not yet in the module cache (a fresh machine).
src=$(go mod download -json "$client" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
test -f "$src/config/crd/snapshot.storage.k8s.io_volumesnapshots.yaml" ||
  { echo "client module of external-snapshotter not downloaded (Dir='$src')" >&2; exit 1; }
echo "Building snapshot-controller $version into $out (cold: ~5 CPU-minutes, 1.5 GB RAM)"
rm -rf "$out.tmp"
mkdir -p "$out.tmp/crds"
go build -ldflags "-s -w -X main.version=$version" -o "$out.tmp/snapshot-controller" "$main/cmd/snapshot-controller"
cp "$src"/config/crd/snapshot.storage.k8s.io_volumesnapshot{classes,contents,s}.yaml "$out.tmp/crds/"
chmod -R u+w "$out.tmp"
echo "snapshot-controller $version built in $(( $(date +%s) - start ))s" > "$out.tmp/.stamp"
rm -rf "$out"
mv "$out.tmp" "$out"
cat "$stamp"
