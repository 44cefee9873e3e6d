#!/usr/bin/env bash
# Checks that the node images really import and run: starts a throwaway containerd (its own root,
# state, sockets and opt dir under a temp dir; the CRI plugin off: nothing but ctr talks to it),
# imports every tarball of IMAGES_DIR/images.txt with "ctr -n k8s.io images import", then runs:
#   - pause:v1 with its entrypoint as user 65535, stopped by SIGTERM with exit status 0;
#   - testdb:v1 as user 65532 on a bind-mounted data dir: PUT/GET/COUNT over TCP on 127.0.0.1,
#     SIGTERM exits 0, a second container on the same dir loads the key back;
#   - the upstream-reference etcd (config/samples' etcd sample) and etcd:v2 --version, coredns:v1 -version, database-operator PREVIOUS_VERSION and VERSION --help.
# Then it stops containerd and removes the temp dir and any mount left under it.
# Skips (exit 0) with a message when not root; fails when containerd, ctr or runc are missing.
#
# Usage: hack/node/images-test.sh IMAGES_DIR
set -euo pipefail
images_dir=${1:?images directory (with images.txt)}
list="$images_dir/images.txt"
[[ -f $list ]] || { echo "FAIL: $list not found (make node-images)"; exit 1; }
if [[ $(id -u) -ne 0 ]]; then
  echo "node-images-test skipped: running containerd needs root (running as $(id -un))."
  exit 0
fi
# As root the Makefile has run "make host-packages" first: a missing program is a failure, not a
# reason to skip (a new machine skipped this check silently before its packages were installed).
for b in containerd ctr runc containerd-shim-runc-v2; do
  if ! command -v "$b" >/dev/null; then
    echo "FAIL: $b is missing: install Debian's containerd and runc (make host-packages, or apt-get install containerd runc)."
    exit 1
  fi
done

tmp=$(mktemp -d /tmp/node-images-test.XXXXXX)
sock="$tmp/containerd.sock"
ctr=(ctr --address "$sock" -n k8s.io)
# ctr's stdio FIFOs and the shim's runc state default to /run/containerd/{fifo,runc}: keep them
# here too. (The shims' sockets go to /run/containerd/s whatever the config: containerd 1.6
# hard-codes that directory; they are removed when the shims exit.)
run_flags=(--fifo-dir "$tmp/fifo" --runc-root "$tmp/runc")
made_run_dir=""
[[ -e /run/containerd ]] || made_run_dir=1
containerd_pid=""
background=()

cleanup() {
  set +e
  for p in "${background[@]}"; do kill "$p" 2>/dev/null; done
  if [[ -n $containerd_pid ]]; then
    # Containers left by a failed check: kill their tasks so the shims exit and unmount.
    for id in $("${ctr[@]}" containers ls -q 2>/dev/null); do
      "${ctr[@]}" task kill -s SIGKILL "$id" >/dev/null 2>&1
      "${ctr[@]}" task delete -f "$id" >/dev/null 2>&1
      "${ctr[@]}" containers delete "$id" >/dev/null 2>&1
    done
    kill "$containerd_pid" 2>/dev/null
    wait "$containerd_pid" 2>/dev/null
  fi
  # Deepest first: snapshots and rootfs mounts under our root/state, if any survived.
  awk -v p="$tmp" 'index($2, p) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do umount -l "$m"; done
  rm -rf "$tmp"
  [[ -z $made_run_dir ]] || rmdir /run/containerd/s /run/containerd 2>/dev/null
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*"
  [[ -f $tmp/containerd.log ]] && { echo "--- containerd log (last 30 lines)"; tail -30 "$tmp/containerd.log"; }
  exit 1
}

cat > "$tmp/config.toml" <<EOF
version = 2
root = "$tmp/root"
state = "$tmp/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$sock"
[ttrpc]
  address = "$sock.ttrpc"
[debug]
  address = "$tmp/debug.sock"
[plugins."io.containerd.internal.v1.opt"]
  path = "$tmp/opt"
EOF
containerd --config "$tmp/config.toml" >"$tmp/containerd.log" 2>&1 &
containerd_pid=$!
for _ in $(seq 100); do
  "${ctr[@]}" version >/dev/null 2>&1 && break
  kill -0 "$containerd_pid" 2>/dev/null || fail "containerd exited"
  sleep 0.1
done
"${ctr[@]}" version >/dev/null || fail "containerd did not answer on $sock"
echo "containerd $(containerd --version | awk '{print $3}') up on $sock"

# containerd names images like the CRI does: a name without a registry is docker.io/library/NAME.
normalize() {
  local ref=$1 first=${1%%/*}
  if [[ $ref != */* ]]; then
    echo "docker.io/library/$ref"
  elif [[ $first == *.* || $first == *:* || $first == localhost ]]; then
    echo "$ref"
  else
    echo "docker.io/$ref"
  fi
}

declare -A ref_of
n=0
while read -r tarball ref; do
  [[ -n $tarball ]] || continue
  "${ctr[@]}" images import "$tarball" >/dev/null || fail "import $tarball"
  # Listed into a variable first: "ctr images ls -q | grep -q" fails now and then under pipefail,
  # since grep -q exits at the first match and ctr dies of SIGPIPE writing the next line.
  listed=$("${ctr[@]}" images ls -q) || fail "ctr images ls"
  grep -qxF "$(normalize "$ref")" <<<"$listed" || fail "$ref not listed after importing $tarball: $listed"
  ref_of[$ref]=$(normalize "$ref")
  n=$((n + 1))
done <"$list"
echo "imported $n images: ${!ref_of[*]}"
root=$(cd "$(dirname "$0")/../.." && pwd)
etcd_upstream=gcr.io/etcd-development/etcd:$(awk '$1 == "go.etcd.io/etcd/server/v3" && $2 ~ /^v/ {print $2}' "$root/hack/node/go.mod")
for want in database-operator.test/pause:v1 "$etcd_upstream" database-operator.test/etcd:v2 \
  database-operator.test/testdb:v1 database-operator.test/coredns:v1 "database-operator:${PREVIOUS_VERSION:?}" "database-operator:${VERSION:?}"; do
  [[ -n ${ref_of[$want]:-} ]] || fail "$want is not in $list"
done

# run_out ID IMAGE ARGS...: runs a container to completion and prints its output; its exit code.
run_out() {
  local id=$1 image=$2
  shift 2
  "${ctr[@]}" run "${run_flags[@]}" --rm "${ref_of[$image]}" "$id" "$@" 2>&1
}

# task_pid ID: the host PID of a running container's init process.
task_pid() {
  "${ctr[@]}" task ls | awk -v id="$1" '$1 == id && $3 == "RUNNING" {print $2}'
}

# running ID: whether the container's task is running.
running() {
  [[ -n $(task_pid "$1") ]]
}

# wait_for COMMAND...: retries for 10 s.
wait_for() {
  for _ in $(seq 100); do "$@" && return 0; sleep 0.1; done
  return 1
}

# stop ID CTR_PID: SIGTERM to the container, expects "ctr run" (its exit code) to end with 0.
stop() {
  "${ctr[@]}" task kill -s SIGTERM "$1" || fail "kill $1"
  local rc=0
  wait "$2" || rc=$?
  [[ $rc -eq 0 ]] || fail "$1 exited with $rc after SIGTERM, want 0"
}

# pause: the entrypoint runs as 65535 and exits 0 on SIGTERM (PID 1 needs its own handler).
"${ctr[@]}" run "${run_flags[@]}" --rm "${ref_of[database-operator.test/pause:v1]}" pause-check >"$tmp/pause.log" 2>&1 &
ctr_pid=$!
background+=("$ctr_pid")
wait_for running pause-check || fail "pause did not start: $(cat "$tmp/pause.log")"
uid=$(awk '/^Uid:/{print $2}' "/proc/$(task_pid pause-check)/status")
[[ $uid == 65535 ]] || fail "pause runs as uid $uid, want 65535"
stop pause-check "$ctr_pid"
echo "pause:v1 ran as uid 65535 and exited 0 on SIGTERM"

# testdb: as 65532 on a bind-mounted data dir (the default --data-dir), twice.
data="$tmp/testdb-data"
mkdir -p "$data" && chown 65532:65532 "$data"
testdb_run() { # testdb_run N: starts the container, sets port and ctr_pid
  "${ctr[@]}" run "${run_flags[@]}" --rm --net-host \
    --mount "type=bind,src=$data,dst=/var/lib/database,options=rbind:rw" \
    "${ref_of[database-operator.test/testdb:v1]}" "testdb-check-$1" /testdb --listen 127.0.0.1:0 \
    >"$tmp/testdb-$1.log" 2>&1 &
  ctr_pid=$!
  background+=("$ctr_pid")
  wait_for grep -q "Listening on" "$tmp/testdb-$1.log" || fail "testdb did not listen: $(cat "$tmp/testdb-$1.log")"
  port=$(sed -n 's/.*Listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$tmp/testdb-$1.log")
}
# ask REQUEST...: sends the requests on one connection and prints the answers.
ask() {
  exec 3<>"/dev/tcp/127.0.0.1/$port"
  printf '%s\n' "$@" >&3
  local line
  for _ in "$@"; do read -r -t 5 line <&3 && echo "$line"; done
  exec 3>&-
}
testdb_run 1
uid=$(awk '/^Uid:/{print $2}' "/proc/$(task_pid testdb-check-1)/status")
[[ $uid == 65532 ]] || fail "testdb runs as uid $uid, want 65532"
got=$(ask "PUT greeting hello node" "GET greeting" "COUNT" "PING" | tr '\n' '|')
[[ $got == "OK|VALUE hello node|COUNT 1|PONG|" ]] || fail "testdb answered $got"
stop testdb-check-1 "$ctr_pid"
testdb_run 2
grep -q "Loaded 1 keys" "$tmp/testdb-2.log" || fail "restart log: $(cat "$tmp/testdb-2.log")"
got=$(ask "GET greeting")
[[ $got == "VALUE hello node" ]] || fail "after restart GET answered $got"
stop testdb-check-2 "$ctr_pid"
echo "testdb:v1 ran as uid 65532, served PUT/GET/COUNT/PING, exited 0 on SIGTERM, loaded its key back after a restart"

for image in "$etcd_upstream" database-operator.test/etcd:v2; do
  out=$(run_out "etcd-check" "$image" /usr/local/bin/etcd --version) || fail "$image: $out"
  grep -q "etcd Version: 3.7" <<<"$out" || fail "$image --version: $out"
done
echo "$etcd_upstream, etcd:v2: $(head -1 <<<"$out")"
out=$(run_out coredns-check database-operator.test/coredns:v1 /coredns -version) || fail "coredns: $out"
grep -q "CoreDNS-1.15" <<<"$out" || fail "coredns -version: $out"
echo "coredns:v1: $(head -1 <<<"$out")"
for version in "$PREVIOUS_VERSION" "$VERSION"; do
  out=$(run_out "operator-${version//./-}" "database-operator:$version" /manager --help) || fail "operator $version: $out"
  grep -q -- "-leader-elect" <<<"$out" || fail "database-operator:$version --help: $out"
done
echo "database-operator:$PREVIOUS_VERSION, $VERSION: /manager --help runs"
echo "node images: $n imported and run"
