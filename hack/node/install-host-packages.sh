#!/usr/bin/env bash
# Installs the host packages of the real-node tier from Debian when one is missing: containerd
# (with ctr and its runc shim), runc, the CNI plugins (bridge, host-local, portmap, loopback in
# /usr/lib/cni), iptables, iproute2 (ip) and xfsprogs (mkfs.xfs, xfs_growfs: the simulated CSI
# driver's sized file systems). Beyond these, make test runs from the host only Go
# and what Debian's required and build-essential packages hold (bash, coreutils, diffutils, grep,
# sed, mawk, tar, gzip, mount, make) and git (docs/development.md, "Host packages"). Every target
# that runs one of these packages depends on "make host-packages", which runs this script. Needs
# root; prints why and exits 0 when not root, so that the targets can run anywhere (the real-node
# tier then skips).
#
# Usage: hack/node/install-host-packages.sh          install what is missing
#        hack/node/install-host-packages.sh --list   print the Debian package names, one a line
#                                                    (hack/fresh-machine.sh hides these)
set -euo pipefail
# package:what shows it is installed (a command on PATH, or an executable path)
packages=(containerd:containerd runc:runc iptables:iptables-restore containernetworking-plugins:/usr/lib/cni/bridge iproute2:ip xfsprogs:mkfs.xfs)
if [[ ${1:-} == --list ]]; then
  printf '%s\n' "${packages[@]%%:*}"
  exit 0
fi
missing=()
for p in "${packages[@]}"; do
  probe=${p#*:}
  if [[ $probe == /* ]]; then [[ -x $probe ]] && continue; else command -v "$probe" >/dev/null && continue; fi
  missing+=("${p%%:*}")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "Host packages present: $(containerd --version | awk '{print $3}') containerd, $(runc --version | awk 'NR==1{print $3}') runc, CNI plugins in /usr/lib/cni, iptables, iproute2, xfsprogs"
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "Real-node tier skipped: ${missing[*]} missing and installing them needs root (running as $(id -un)): sudo apt-get install ${missing[*]}"
  exit 0
fi
echo "Installing ${missing[*]} with apt-get"
start=$(date +%s)
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "Installed in $(( $(date +%s) - start ))s: $(containerd --version | awk '{print $3}') containerd, $(runc --version | awk 'NR==1{print $3}') runc, CNI plugins in /usr/lib/cni, iptables, iproute2, xfsprogs"
