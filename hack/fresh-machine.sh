#!/usr/bin/env bash
# The fresh-machine check ("make test-fresh-machine"): clones the committed HEAD into a temporary
# directory and runs "make test" there, stage by stage, as a new machine would: with an empty Go
# module cache (GOMODCACHE), an empty build cache (GOCACHE), empty user caches (XDG_CACHE_HOME:
# golangci-lint, Helm) and an empty per-machine tools cache (the Makefile's CACHE_DIR: control
# plane, opm, OLM, real-node binaries). Prints the wall time of each stage and the peak disk use
# of the temporary caches, writes the same summary to LOG_DIR/summary.txt, and removes the
# temporary directory (FRESH_MACHINE_KEEP=1 keeps it and prints where it is).
#
# What it cannot make fresh: the host packages the real-node tier installs with apt-get
# (containerd, runc, CNI plugins, iptables, busybox-static) and Go itself. Uncommitted changes are not tested.
#
# Run it before resolving any change to a build recipe, a pinned version or a tools module.
# Usage: hack/fresh-machine.sh [LOG_DIR]   (default LOG_DIR: bin/fresh-machine)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
log_dir=$(mkdir -p "${1:-$root/bin/fresh-machine}" && cd "${1:-$root/bin/fresh-machine}" && pwd)
base=$(mktemp -d "${TMPDIR:-/tmp}/fresh-machine.XXXXXX")
sampler=""

cleanup() {
  [[ -n $sampler ]] && kill "$sampler" 2>/dev/null && wait "$sampler" 2>/dev/null
  if [[ ${FRESH_MACHINE_KEEP:-} == 1 ]]; then
    echo "Kept $base (src, gomodcache, gocache, xdg-cache, tools-cache)"
  else
    chmod -R u+w "$base" 2>/dev/null || true # the module cache is read-only
    rm -rf "$base"
  fi
}
trap cleanup EXIT

export GOMODCACHE=$base/gomodcache GOCACHE=$base/gocache XDG_CACHE_HOME=$base/xdg-cache
export GOLANGCI_LINT_CACHE=$base/xdg-cache/golangci-lint
export CACHE_DIR=$base/tools-cache
unset GOFLAGS GOWORK
# The Makefile exports these per-machine paths to its recipes; run as "make test-fresh-machine",
# this script would inherit the warm ones, and the inner make would use them.
unset KUBEBUILDER_ASSETS SNAPSHOT_ENV_DIR NODE_ENV_DIR NODE_IMAGES_DIR
mkdir -p "$GOMODCACHE" "$GOCACHE" "$XDG_CACHE_HOME" "$CACHE_DIR"

git clone -q "$root" "$base/src"
commit=$(git -C "$base/src" rev-parse --short HEAD)
[[ -z $(git -C "$root" status --porcelain) ]] || echo "Note: uncommitted changes in $root are not part of this check."

# Disk use of the temporary caches, sampled every 30 s; the peak per directory goes to disk.log.
sample_disk() {
  while true; do
    du -sm "$GOMODCACHE" "$GOCACHE" "$XDG_CACHE_HOME" "$CACHE_DIR" "$base/src" 2>/dev/null |
      awk -v t="$(date +%s)" '{printf "%s %s %s\n", t, $1, $2}' >> "$log_dir/disk.log"
    sleep 30
  done
}
: > "$log_dir/disk.log"
sample_disk &
sampler=$!

stages=$(make -s -C "$base/src" print-test-stages)
summary=$log_dir/summary.txt
{
  echo "Fresh-machine check of $commit on $(hostname), $(nproc) cores, $(date -u +%FT%TZ)"
  echo "GOMODCACHE=$GOMODCACHE GOCACHE=$GOCACHE CACHE_DIR=$CACHE_DIR"
} > "$summary"
total_start=$(date +%s)
status=0
for stage in $stages; do
  start=$(date +%s)
  echo "=== $stage"
  if make -C "$base/src" "$stage" > "$log_dir/$stage.log" 2>&1; then result=ok; else result=FAILED; status=1; fi
  line=$(printf '%-20s %6ss  %s' "$stage" "$(( $(date +%s) - start ))" "$result")
  echo "$line" | tee -a "$summary"
  if [[ $result == FAILED ]]; then tail -40 "$log_dir/$stage.log"; break; fi
done
total=$(( $(date +%s) - total_start ))
printf '%-20s %6ss  (%d min %d s)\n' total "$total" $((total / 60)) $((total % 60)) | tee -a "$summary"

kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true; sampler=""
du -sm "$GOMODCACHE" "$GOCACHE" "$XDG_CACHE_HOME" "$CACHE_DIR" "$base/src" 2>/dev/null |
  awk -v t="$(date +%s)" '{printf "%s %s %s\n", t, $1, $2}' >> "$log_dir/disk.log"
{
  echo "Peak disk use (MiB, sampled every 30 s):"
  awk '{n=$3; sub(".*/", "", n); if ($2 > peak[n]) peak[n] = $2} END {for (n in peak) printf "  %-12s %6d\n", n, peak[n]}' "$log_dir/disk.log" | sort
  awk '{s[$1] += $2} END {for (t in s) if (s[t] > m) m = s[t]; printf "  %-12s %6d\n", "all (peak)", m}' "$log_dir/disk.log"
  if [[ $status == 0 ]]; then echo "PASSED"; else echo "FAILED (log: $log_dir)"; fi
} | tee -a "$summary"
exit $status
