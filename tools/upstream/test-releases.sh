#!/usr/bin/env bash
# npm run test:upstream-releases [-- vX.Y.Z ...]
#
# The real-binary test (test/integration/upstream-real.test.ts) once per upstream release: each
# release's kruise-manager is built from its checksum-pinned module (test/envtest/binaries/build.sh,
# cached per release in ~/.cache/kruise-ts-envtest/kruise-manager-<version>-<key>) and run against the
# output synthesized with ManagerImage.upstream({ version }). No argument: every release pinned in
# tools/upstream/pin.json except the default, which `npm test` already covers. Prints one line per
# release with its build and test seconds; exits non-zero if any release failed.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
pin="$root/tools/upstream/pin.json"
default="$(sed -n 's/^ *"default": *"\([^"]*\)".*/\1/p' "$pin")"
if [[ $# -gt 0 ]]; then
  releases=("$@")
else
  mapfile -t releases < <(grep -o '"v[0-9][^"]*":' "$pin" | tr -d '":' | grep -vx "$default")
fi
summary=()
failed=0
for v in "${releases[@]}"; do
  echo "upstream-releases: $v: building kruise-manager (cached after the first run)" >&2
  start=$SECONDS
  if ! KRUISE_RELEASE="$v" KRUISE_WITHOUT_DAEMON=1 bash "$root/test/envtest/binaries/build.sh" >/dev/null; then
    summary+=("$v: build FAILED after $((SECONDS - start)) s")
    failed=1
    continue
  fi
  built=$((SECONDS - start))
  start=$SECONDS
  if (cd "$root" && KRUISE_RELEASE="$v" node --experimental-vm-modules node_modules/jest/bin/jest.js \
    test/integration/upstream-real.test.ts --selectProjects integration --runInBand); then
    summary+=("$v: passed (build/cache ${built} s, test $((SECONDS - start)) s)")
  else
    summary+=("$v: FAILED (build/cache ${built} s, test $((SECONDS - start)) s)")
    failed=1
  fi
done
printf 'upstream-releases: %s\n' "${summary[@]}" "load: $(uptime)" >&2
exit $failed
