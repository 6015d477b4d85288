#!/usr/bin/env bash
# Starts the one-time Go builds that later steps of `npm test` need, in the background, at the
# lowest CPU and I/O priority (nice 19, ionice idle), and returns at once. On a machine whose
# caches are cold they then use the core that the type-check, the lint and the single-process
# test runs leave idle, instead of running one after another in front of the tests that need them:
#   - the runtime's reference release of kruise-manager and kruise-daemon (RUNTIME_REFERENCE_RELEASE
#     in test/envtest/binaries.ts), which the integration tests and the upgrade e2e test run, then the
#     in-process oracles built in upstream's module (tools/upstream/sidecarset-oracle, cloneset-oracle),
#   - the linters (kube-score, checkov) and promtool, which the lint tests install on their own
#     (test/setup/ensure-linters.sh, ensure-promtool.sh) when they are not cached yet,
#   - cert-manager's controller and cainjector (the cert-manager tests),
#   - the local cluster's binaries (kubelet, kube-proxy, kube-scheduler, kube-controller-manager),
#   - kruise-manager of every other pinned upstream release, for their real-binary tests
#     (tools/upstream/test-releases.sh, the api-server lane's last step).
# Each build takes the same per-binary lock (build.sh) as the step that needs the binary, so nothing
# is built twice: a step that needs a binary still building waits for it, and a binary already
# cached costs milliseconds. At nice 19 the builds get about 1.5 % of a core that a test wants, so
# they do not slow the tests down. A build that fails here is simply built (and reported) again by
# the step that needs it. Output goes to prebuild.log in the cache directory.
#
# KRUISE_HA_PREBUILD=0 turns it off.
set -euo pipefail

[[ "${KRUISE_HA_PREBUILD:-1}" == 0 ]] && exit 0
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cache_root="${ENVTEST_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kruise-ts-envtest}"
mkdir -p "$cache_root"
log="$cache_root/prebuild.log"
reference="$(sed -n "s/^export const RUNTIME_REFERENCE_RELEASE = '\(v[0-9.]*\)';$/\1/p" "$root/test/envtest/binaries.ts")"
[[ -n "$reference" ]] || { echo "prebuild: cannot read RUNTIME_REFERENCE_RELEASE from test/envtest/binaries.ts" >&2; exit 1; }

low=(nice -n 19)
command -v ionice >/dev/null 2>&1 && low+=(ionice -c 3)
build="$root/test/envtest/binaries/build.sh"
{
  echo "prebuild: $(date -u +%FT%TZ) started (pid $$)"
  # In the order the steps need them: the integration setup, the lint tests, cert-manager's test, the e2e tier.
  KRUISE_RELEASE="$reference" "${low[@]}" bash "$build" >/dev/null \
    || echo "prebuild: kruise $reference failed; the integration setup builds it"
  # The in-process oracles link upstream's packages (built just above for the same module, so mostly cached).
  for oracle in sidecarset-oracle cloneset-oracle; do
    "${low[@]}" bash "$root/tools/upstream/$oracle/build.sh" >/dev/null || echo "prebuild: $oracle failed; its tests build it"
  done
  "${low[@]}" bash "$root/test/setup/ensure-linters.sh" >/dev/null || echo "prebuild: the linters failed; their tests install them"
  "${low[@]}" bash "$root/test/setup/ensure-promtool.sh" >/dev/null || echo "prebuild: promtool failed; its test builds it"
  "${low[@]}" bash "$build" cert-manager >/dev/null || echo "prebuild: cert-manager failed; its tests build it"
  "${low[@]}" bash "$build" cluster >/dev/null || echo "prebuild: the cluster binaries failed; the e2e step builds them"
  pin="$root/tools/upstream/pin.json"
  default="$(sed -n 's/^ *"default": *"\([^"]*\)".*/\1/p' "$pin")"
  for v in $(grep -o '"v[0-9][^"]*":' "$pin" | tr -d '":' | grep -vx -e "$default" -e "$reference"); do
    KRUISE_RELEASE="$v" KRUISE_WITHOUT_DAEMON=1 "${low[@]}" bash "$build" >/dev/null \
      || echo "prebuild: kruise $v failed; npm run test:upstream-releases builds it"
  done
  echo "prebuild: $(date -u +%FT%TZ) done"
} >>"$log" 2>&1 </dev/null &
disown
echo "prebuild: building in the background at low priority (log: $log)" >&2
