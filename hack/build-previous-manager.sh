#!/usr/bin/env bash
# Builds the manager of a released version from that release's commit, as manager-static builds
# today's: static (CGO_ENABLED=0), -trimpath, linux/ARCH. The source comes from this clone's
# history (git archive COMMIT), so an upgrade test runs the old operator's own code, not today's
# under an old tag. Built once per machine: OUT is keyed by the commit (make manager-previous).
# The commit's Dockerfile goes next to OUT: the released operator image is that binary on that
# Dockerfile (hack/node/build-images.sh rebuilds it and checks its digest).
#
# Usage: hack/build-previous-manager.sh COMMIT ARCH OUT
set -euo pipefail
commit=${1:?commit} arch=${2:?arch} out=${3:?output binary}
root=$(cd "$(dirname "$0")/.." && pwd)
if ! git -C "$root" cat-file -e "$commit^{commit}" 2>/dev/null; then
  echo "build-previous-manager: commit $commit is not in this clone's history;" >&2
  echo "  the upgrade tests build the released manager from it. Clone without --depth" >&2
  echo "  (or run: git fetch --unshallow)." >&2
  exit 1
fi
start=$(date +%s)
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
git -C "$root" archive "$commit" | tar -x -C "$src"
mkdir -p "$(dirname "$out")"
echo "Building the manager of $commit into $out"
(cd "$src" && GOWORK=off CGO_ENABLED=0 GOOS=linux GOARCH="$arch" go build -trimpath -ldflags="-s -w" -o "$out.tmp" .)
cp "$src/Dockerfile" "$(dirname "$out")/Dockerfile"
mv "$out.tmp" "$out"
echo "manager of ${commit:0:12} built in $(( $(date +%s) - start ))s"
