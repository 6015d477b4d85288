#!/usr/bin/env bash
# Makes sure the Debian tools the integration tests drive are on PATH: docker-registry (the CNCF
# distribution registry) and htpasswd for the runtime-image tests, kubectl for the client-side
# (three-way merge) re-apply of the real kruise-manager test. Idempotent: does nothing when all exist.
set -euo pipefail

if command -v docker-registry >/dev/null 2>&1 && command -v htpasswd >/dev/null 2>&1 && command -v kubectl >/dev/null 2>&1; then
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-docker-registry: docker-registry, htpasswd or kubectl is missing and this machine has no apt-get." >&2
  echo "Install the CNCF distribution registry (binary 'docker-registry'), apache2-utils (htpasswd) and kubectl yourself." >&2
  exit 1
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=(sudo -n); else
    echo "ensure-docker-registry: installing docker-registry needs root (or passwordless sudo)." >&2
    exit 1
  fi
fi

echo "ensure-docker-registry: installing docker-registry, apache2-utils and kubectl with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
if ! "${SUDO[@]}" apt-get update -qq >&2 || ! "${SUDO[@]}" apt-get install -y -qq --no-install-recommends docker-registry apache2-utils kubectl >&2; then
  echo "ensure-docker-registry: apt-get could not install docker-registry apache2-utils kubectl (see above)." >&2
  exit 1
fi
# The package starts a system registry on :5000; the tests run their own on free ports.
if command -v systemctl >/dev/null 2>&1; then "${SUDO[@]}" systemctl disable --now docker-registry >/dev/null 2>&1 || true; fi

command -v docker-registry >/dev/null && command -v htpasswd >/dev/null && command -v kubectl >/dev/null || {
  echo "ensure-docker-registry: installed, but docker-registry, htpasswd or kubectl is still not on PATH." >&2
  exit 1
}
