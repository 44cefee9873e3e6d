#!/usr/bin/env bash
# Builds promtool and the Prometheus server from the pinned tools module (hack/prometheus/go.mod:
# github.com/prometheus/prometheus from the Go module proxy; nothing from release pages):
# promtool checks and tests the alerting rules (make test-rules); the server scrapes the
# operator and the etcd members on the real node and evaluates the alerts (make test-node).
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
# Static and -trimpath, as every build of the Makefile (see its top).
export GOWORK=off CGO_ENABLED=0 GOFLAGS="${GOFLAGS:+$GOFLAGS }-trimpath"
start=$(date +%s)
mod=github.com/prometheus/prometheus
version=$(go list -m -f '{{.Version}}' "$mod")
echo "Building promtool and prometheus $version into $out (cold: promtool ~3 CPU-min, 155 s measured on 2 busy cores; the server more)"
rm -rf "$out.tmp"
mkdir -p "$out.tmp"
# The module's v0.3XY.Z is Prometheus 3.XY.Z.
release=${version#v0.}
release="${release:0:1}.${release:1}"
# remove_all_sd: without the service discovery plugins (AWS, Azure, GCE, Kubernetes, ...):
# make test-rules needs "check rules" and "test rules", and the real node's Prometheus is given
# static targets rendered from the ServiceMonitor and PodMonitor objects (package
# test/harness/promserver).
go build -tags remove_all_sd -ldflags "-s -w -X github.com/prometheus/common/version.Version=$release" \
  -o "$out.tmp/" "$mod/cmd/promtool" "$mod/cmd/prometheus"
echo "promtool and prometheus $version built in $(( $(date +%s) - start ))s" > "$out.tmp/.stamp"
rm -rf "$out"
mv "$out.tmp" "$out"
cat "$stamp"
