#!/usr/bin/env bash
# The fresh-machine check ("make test-fresh-machine"): clones the committed HEAD into a temporary
# directory and runs "make test" there, stage by stage, as a new machine would: with an empty Go
# module cache (GOMODCACHE), an empty build cache (GOCACHE), empty user caches (XDG_CACHE_HOME:
# golangci-lint, Helm) and an empty per-machine tools cache (the Makefile's CACHE_DIR: control
# plane, opm, OLM, real-node binaries). Prints the wall time of each stage and the peak disk use
# of the temporary caches, writes the same summary to LOG_DIR/summary.txt, and removes the
# temporary directory (FRESH_MACHINE_KEEP=1 keeps it and prints where it is).
#
# The host packages the project installs with apt-get (hack/node/install-host-packages.sh
# --list: containerd, runc, CNI plugins, iptables, iproute2, xfsprogs) are hidden too, the only way that
# leaves a new machine's state for real: as root, each one installed is purged with apt-get before
# the run (so its files are gone and dpkg says it is not installed) and installed again at exit
# if the run did not. A private mount namespace could hide the files but not dpkg's state, and
# apt-get inside it would write to the real /usr. A package whose purge would remove any other
# package is left alone, and the summary says so. Purging is safe to interrupt: make test
# installs whatever of them is missing (make host-packages). Not root: the packages stay and the
# summary says that the check did not hide them. Go itself is not made fresh.
#
# Run it before resolving any change to a build recipe, a pinned version or a tools module.
# Usage: hack/fresh-machine.sh [LOG_DIR]   (default LOG_DIR: bin/fresh-machine)
# FRESH_MACHINE_REF=<commit> checks that commit instead of HEAD (e.g. to show an old recipe
# failing); FRESH_MACHINE_STAGES="stage ..." runs only those stages of make test, in that order.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
log_dir=$(mkdir -p "${1:-$root/bin/fresh-machine}" && cd "${1:-$root/bin/fresh-machine}" && pwd)
base=$(mktemp -d "${TMPDIR:-/tmp}/fresh-machine.XXXXXX")
sampler=""
hidden=()

# installed PACKAGE: whether dpkg has PACKAGE installed.
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

# hide_host_packages PACKAGE...: purge those installed, one at a time, each only when its purge
# removes nothing else (runc goes after containerd, which depends on it: passes repeat while one
# purges something); prints one line a package, which the caller reads.
hide_host_packages() {
  local p others pass left=()
  for p in "$@"; do
    if installed "$p"; then left+=("$p"); else echo "host package $p: not installed"; fi
  done
  for pass in 1 2 3 4 5; do
    local still=() purged=0
    for p in "${left[@]}"; do
      others=$(apt-get -s purge "$p" 2>/dev/null | awk '/^(Purg|Remv) / {print $2}' | grep -vx "$p" | tr '\n' ' ' || true)
      if [[ -n $others ]]; then still+=("$p:$others"); continue; fi
      DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "$p" >/dev/null 2>&1
      echo "host package $p: purged for the run"
      purged=1
    done
    left=()
    for p in "${still[@]}"; do left+=("${p%%:*}"); done
    if [[ $purged == 0 || ${#left[@]} == 0 ]]; then
      for p in "${still[@]}"; do echo "host package ${p%%:*}: left installed (purging it would also remove: ${p#*:})"; done
      return 0
    fi
  done
}

# restore_host_packages: install again each hidden package the run did not install.
restore_host_packages() {
  local p missing=()
  for p in "${hidden[@]}"; do installed "$p" || missing+=("$p"); done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  echo "Restoring host packages: ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    echo "Restoring failed: run apt-get install ${missing[*]} (or make host-packages)"
}

cleanup() {
  [[ -n $sampler ]] && kill "$sampler" 2>/dev/null && wait "$sampler" 2>/dev/null
  restore_host_packages
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
[[ -z ${FRESH_MACHINE_REF:-} ]] || git -C "$base/src" checkout -q "$FRESH_MACHINE_REF"
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

stages=${FRESH_MACHINE_STAGES:-$(make -s -C "$base/src" print-test-stages)}
summary=$log_dir/summary.txt
# The project's host packages: as this tree lists them, and as the checked tree's script names
# them (a FRESH_MACHINE_REF from before --list: "missing+=(PACKAGE)"; busybox-static, say).
packages=$( { "$root/hack/node/install-host-packages.sh" --list
  grep -o 'missing+=([a-z0-9.+-]*)' "$base/src/hack/node/install-host-packages.sh" | sed 's/^missing+=(\(.*\))$/\1/' || true; } | sort -u)
if [[ $(id -u) -eq 0 ]]; then
  hide_host_packages $packages | tee "$log_dir/host-packages.log"
  hidden=($(awk '/: purged for the run$/ {sub(/:$/, "", $3); print $3}' "$log_dir/host-packages.log"))
  host_line="host packages purged for the run: ${hidden[*]:-none}; absent before: $(awk '/: not installed$/ {sub(/:$/, "", $3); printf "%s ", $3}' "$log_dir/host-packages.log")"
  host_line+=$(awk '/left installed/ {sub(/^host package /, ""); printf "; NOT hidden: %s", $0}' "$log_dir/host-packages.log")
else
  host_line="host packages NOT hidden (not root): $(echo $packages)"
fi
{
  echo "Fresh-machine check of $commit on $(hostname), $(nproc) cores, $(date -u +%FT%TZ)"
  echo "GOMODCACHE=$GOMODCACHE GOCACHE=$GOCACHE CACHE_DIR=$CACHE_DIR"
  echo "$host_line"
  [[ -z ${FRESH_MACHINE_STAGES:-} ]] || echo "stages (FRESH_MACHINE_STAGES): $stages"
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
