#!/usr/bin/env bash
# Builds promtool (only that binary) from the pinned tools module (hack/prometheus/go.mod:
# github.com/prometheus/prometheus from the Go module proxy; nothing from release pages).
#
# Usage: hack/prometheus/build.sh OUTPUT_DIR
# The output directory is per machine (PROMETHEUS_ENV_DIR in the Makefile, keyed by go.sum); a
# stamp file records a complete build so that later runs cost nothing.
set -euo pipefail
out=${1:?output directory}
stamp="$out/.stamp"
if [[ -f "$stamp" ]]; then
  exit 0
fi
cd "$(dirname "$0")"
export GOWORK=off
start=$(date +%s)
mod=github.com/prometheus/prometheus
version=$(go list -m -f '{{.Version}}' "$mod")
echo "Building promtool $version into $out (cold: ~3 CPU-min, 155 s measured on 2 busy cores)"
rm -rf "$out.tmp"
mkdir -p "$out.tmp"
# The module's v0.3XY.Z is Prometheus 3.XY.Z.
release=${version#v0.}
release="${release:0:1}.${release:1}"
# remove_all_sd: without the service discovery plugins (AWS, Azure, GCE, ...), which only
# "promtool check service-discovery" uses; make test-rules needs "check rules" and "test rules".
go build -tags remove_all_sd -ldflags "-s -w -X github.com/prometheus/common/version.Version=$release" \
  -o "$out.tmp/promtool" "$mod/cmd/promtool"
echo "promtool $version built in $(( $(date +%s) - start ))s" > "$out.tmp/.stamp"
rm -rf "$out"
mv "$out.tmp" "$out"
cat "$stamp"
