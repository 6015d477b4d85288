#!/usr/bin/env bash
# Makes sure the Debian tools that build and check the real-cluster images are on PATH:
#   mmdebstrap             builds the base root filesystems from Debian's packages (test/cluster/images)
#   containerd, runc, ctr  pull and run the built images in the image integration test
# Idempotent: does nothing when all exist. Installs with apt-get otherwise (root or passwordless sudo).
set -euo pipefail

want=(mmdebstrap containerd ctr runc)
missing=()
for tool in "${want[@]}"; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-image-tools: ${missing[*]} missing and this machine has no apt-get." >&2
  echo "Install mmdebstrap, containerd (with ctr) and runc yourself." >&2
  exit 1
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=(sudo -n); else
    echo "ensure-image-tools: installing ${missing[*]} needs root (or passwordless sudo)." >&2
    exit 1
  fi
fi

# ctr ships in Debian's containerd package.
packages=(mmdebstrap containerd runc)
echo "ensure-image-tools: installing ${packages[*]} with apt-get (missing: ${missing[*]})" >&2
export DEBIAN_FRONTEND=noninteractive
if ! "${SUDO[@]}" apt-get update -qq >&2 ||
  ! "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${packages[@]}" >&2; then
  echo "ensure-image-tools: apt-get could not install ${packages[*]} (see above)." >&2
  exit 1
fi
# The package would start a system containerd where an init system runs; the tests start their own.
if command -v systemctl >/dev/null 2>&1; then "${SUDO[@]}" systemctl disable --now containerd >/dev/null 2>&1 || true; fi

for tool in "${want[@]}"; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "ensure-image-tools: installed, but $tool is still not on PATH." >&2
    exit 1
  }
done
