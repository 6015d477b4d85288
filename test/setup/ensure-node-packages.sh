#!/usr/bin/env bash
# Makes sure the Debian packages the local cluster (test/cluster, `npm run cluster`, the e2e tier)
# needs are installed: containerd and runc (each node's container runtime), the CNI plugins,
# iptables/conntrack/ipset (kube-proxy), iproute2 and util-linux (bridge, veths, namespaces, nsenter),
# gcc + libc6-dev (the static pause binary), busybox-static, umoci and skopeo (the node images),
# docker-registry (the cluster's local registry) and kubectl. Idempotent: does nothing when every
# command is already there. Needs root (or passwordless sudo) to install.
set -euo pipefail

# command -> Debian package
declare -A want=(
  [containerd]=containerd [ctr]=containerd [runc]=runc
  [/usr/lib/cni/bridge]=containernetworking-plugins
  [iptables]=iptables [ip6tables]=iptables [iptables-restore]=iptables [conntrack]=conntrack [ipset]=ipset
  [ip]=iproute2 [bridge]=iproute2 [nsenter]=util-linux [unshare]=util-linux [mount]=mount
  [gcc]=gcc [/usr/lib/x86_64-linux-gnu/libc.a]=libc6-dev [strip]=binutils
  [busybox]=busybox-static [umoci]=umoci [skopeo]=skopeo
  [docker-registry]=docker-registry [kubectl]=kubectl
)
have() { if [[ "$1" == /* ]]; then [[ -e "$1" ]]; else command -v "$1" >/dev/null 2>&1; fi; }
# busybox must be the static one: it is copied into an image with no libc.
static_busybox() { have busybox && ! ldd "$(command -v busybox)" >/dev/null 2>&1; }

missing=()
for c in "${!want[@]}"; do have "$c" || missing+=("${want[$c]}"); done
static_busybox || missing+=(busybox-static)
[[ ${#missing[@]} -eq 0 ]] && exit 0
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-node-packages: missing ${missing[*]} and this machine has no apt-get; install them yourself." >&2
  exit 1
fi
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=(sudo -n); else
    echo "ensure-node-packages: installing ${missing[*]} needs root (or passwordless sudo)." >&2
    exit 1
  fi
fi

echo "ensure-node-packages: installing ${missing[*]} with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
if ! "${SUDO[@]}" apt-get update -qq >&2 || ! "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2; then
  echo "ensure-node-packages: apt-get could not install ${missing[*]} (see above)." >&2
  exit 1
fi
# Packages with a service start it where an init system exists; the cluster runs its own copies.
if command -v systemctl >/dev/null 2>&1; then
  "${SUDO[@]}" systemctl disable --now containerd docker-registry >/dev/null 2>&1 || true
fi

for c in "${!want[@]}"; do
  have "$c" || { echo "ensure-node-packages: installed, but $c (package ${want[$c]}) is still missing." >&2; exit 1; }
done
static_busybox || { echo "ensure-node-packages: busybox on PATH is not the static one (busybox-static)." >&2; exit 1; }
