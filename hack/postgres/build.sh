#!/usr/bin/env bash
# Builds the project's PostgreSQL image, which config/samples' PostgreSQL sample names
# (IMAGE_REPO_BASE/database-operator-postgres:15): Debian bookworm's PostgreSQL 15 packages
# (packages.txt) unpacked with dpkg-deb -x, no Docker engine, no base image, no package scripts
# run. It is NOT the Docker Hub image (docker.io/library/postgres), which docs/usage.md shows as
# a variant. It holds:
#   - the packages of packages.txt, downloaded once per machine with apt-get download into
#     POSTGRES_DEBS_DIR (the per-machine cache, keyed by packages.txt), without their docs, man
#     pages and translations (each package's copyright file stays); /var/lib/dpkg/status lists
#     them with their versions, so that image scanners see what is inside;
#   - /usr/local/bin/entrypoint, the static program of hack/postgres/entrypoint (initdb on the
#     first start with the credentials of spec.credentials, then postgres; SIGTERM as a fast
#     shutdown; with DATABASE_ROLE_DIR, a replica cloned with pg_basebackup or rewound with
#     pg_rewind first);
#   - distroless' /etc/passwd and /etc/group (user nonroot, 65532: initdb and postgres refuse a
#     uid without an account) and /tmp (1777), where the sample puts the server's socket.
# USER 65532:65532, ENTRYPOINT ["/usr/local/bin/entrypoint"], CMD ["postgres"], PATH with
# /usr/lib/postgresql/15/bin, PGDATA=/var/lib/database/pgdata. Every program is run once in the
# unpacked tree (chroot) before the image is written: a library missing from packages.txt fails
# the build, not the pod. Reproducible for the same .debs (image-tool: fixed timestamps, root
# owner, sorted entries).
#
# Usage: IMAGE_TOOL=bin/image-tool POSTGRES_DEBS_DIR=~/.cache/database-operator/postgres-debs-HASH \
#          hack/postgres/build.sh WORK_DIR LAYOUT_DIR REF [ARCH]
set -euo pipefail
work=${1:?work directory} layout=${2:?layout directory} ref=${3:?image reference} arch=${4:-amd64}
: "${IMAGE_TOOL:?}" "${POSTGRES_DEBS_DIR:?}"
root=$(cd "$(dirname "$0")/../.." && pwd)
mapfile -t packages < <(grep -v -e '^#' -e '^$' "$root/hack/postgres/packages.txt")
major=15

# The .debs, once per machine. apt-get download needs the package lists: a machine that has
# none gets them once (root).
debs=$POSTGRES_DEBS_DIR
if [ ! -f "$debs/.stamp" ]; then
  started=$(date +%s)
  rm -rf "$debs.tmp" && mkdir -p "$debs.tmp"
  # As root, apt-get warns that it cannot drop to its _apt user for a directory of root's.
  download() { (cd "$debs.tmp" && apt-get download "${packages[@]}" 2>&1) | { grep -v '^W: Download is performed unsandboxed' || true; }; }
  if ! download; then
    [ "$(id -u)" = 0 ] || { echo "apt-get download failed; as root this script would run apt-get update first" >&2; exit 1; }
    apt-get update -qq
    download
  fi
  [ "$(ls "$debs.tmp"/*.deb | wc -l)" = "${#packages[@]}" ] || { echo "expected ${#packages[@]} .debs in $debs.tmp" >&2; exit 1; }
  echo "downloaded ${#packages[@]} packages ($(du -sh "$debs.tmp" | cut -f1)) in $(( $(date +%s) - started ))s" > "$debs.tmp/.stamp"
  rm -rf "$debs" && mv "$debs.tmp" "$debs"
fi
cat "$debs/.stamp"

rm -rf "$work" && mkdir -p "$work/rootfs/var/lib/dpkg"
rootfs=$work/rootfs
status=$rootfs/var/lib/dpkg/status
for deb in "$debs"/*.deb; do
  dpkg-deb -x "$deb" "$rootfs"
  { dpkg-deb -f "$deb" Package Version Architecture Source Maintainer Description | sed -n '1,/^Description/p' | sed '/^Description/q'
    echo "Status: install ok installed"; echo; } >> "$status"
done
# Docs, man pages, translations and lintian overrides: not needed to run; copyrights stay.
find "$rootfs/usr/share/doc" -type f ! -name copyright -delete
find "$rootfs/usr/share/doc" -depth -type d -empty -delete
rm -rf "$rootfs/usr/share/man" "$rootfs/usr/share/locale" "$rootfs/usr/share/lintian" "$rootfs/usr/share/info"
# The JIT provider: libllvm14 is not in the image, so llvmjit.so could not load, and the first
# query expensive enough for JIT failed with "could not load library .../llvmjit.so" (pg_rewind's
# file list among them). Without the provider PostgreSQL runs every query without JIT.
rm -rf "$rootfs/usr/lib/postgresql/15/lib/llvmjit.so" "$rootfs/usr/lib/postgresql/15/lib/llvmjit_types.bc" \
  "$rootfs/usr/lib/postgresql/15/lib/bitcode"

# The entrypoint, static.
(cd "$root" && CGO_ENABLED=0 GOOS=linux GOARCH="$arch" go build -trimpath -ldflags="-s -w" -o "$work/entrypoint" ./hack/postgres/entrypoint)

# Every program runs in the tree: a missing library fails here. chroot needs root, or a user
# namespace; without either (a non-root build in a container) the check is left to the
# real-node tier, which runs as root and starts the image.
run_in_tree() {
  if [ "$(id -u)" = 0 ]; then chroot "$rootfs" "$@"; else unshare --user --map-root-user chroot "$rootfs" "$@"; fi
}
bin=/usr/lib/postgresql/$major/bin
if [ "$(id -u)" = 0 ] || unshare --user --map-root-user true 2>/dev/null; then
  for program in "$bin/postgres" "$bin/initdb" "$bin/pg_ctl" "$bin/pg_isready" "$bin/psql" "$bin/pg_basebackup" "$bin/pg_rewind"; do
    run_in_tree "$program" --version >/dev/null
  done
  run_in_tree /usr/bin/prometheus-postgres-exporter --version >/dev/null 2>&1
else
  echo "not root and no user namespace: the image's programs are not run before it is written"
fi
version=$(dpkg-deb -f "$debs"/postgresql-${major}_*.deb Version)

"$IMAGE_TOOL" rootfs --arch "$arch" --dir "$rootfs" --file "$work/entrypoint:/usr/local/bin/entrypoint" \
  --user 65532:65532 --entrypoint /usr/local/bin/entrypoint --cmd postgres \
  --env "PATH=$bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" --env PGDATA=/var/lib/database/pgdata \
  --label "org.opencontainers.image.title=PostgreSQL $major (Debian bookworm packages)" \
  --label "org.opencontainers.image.version=$version" \
  --label "org.opencontainers.image.description=Built by database-operator's hack/postgres/build.sh from Debian's packages; not the Docker Hub image" \
  --tag "$ref" --layout "$layout" >/dev/null
echo "PostgreSQL image $ref ($version): $(du -sh "$layout" | cut -f1) in $layout"
