#!/usr/bin/env bash
# Builds sidecarset-oracle (main.go here) inside a copy of the pinned upstream module, so it
# links upstream's own packages with upstream's own go.mod (its replace directives included).
# The module and its dependencies come from the Go module proxy (already in the module cache
# when kruise-manager of the same release was built). stdout: the path of the cached binary.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
go="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
pin="$here/../pin.json"
# The runtime's SidecarSet/WorkloadSpread behaviour is pinned to upstream v1.9.1 (the release its
# differential tests run), whatever the constructs' default release is. The oracle reads v1alpha1
# inputs and hands upstream's code v1beta1 where v1.9.1 reads it (main.go), so an older release
# does not build with these files.
version="${ORACLE_KRUISE_VERSION:-v1.9.1}"
sum="$(node -e "const p = require('$pin'); if (!p.releases['$version']) { console.error('sidecarset-oracle: $pin pins no $version'); process.exit(1); } process.stdout.write(p.releases['$version'])")"
module="$(node -e "process.stdout.write(require('$pin').module)")"
# The module (checksum-verified against the pin), then its dependencies, from the module proxy.
info="$(cd / && GOWORK=off GOFLAGS=-mod=mod "$go" mod download -json "$module@$version")" \
  || { echo "sidecarset-oracle: go mod download $module@$version failed: $info" >&2; exit 1; }
got="$(sed -n 's/^[[:space:]]*"Sum": "\([^"]*\)".*/\1/p' <<<"$info")"
[[ "$got" == "$sum" ]] || { echo "sidecarset-oracle: $module@$version has checksum '$got', $pin pins '$sum'" >&2; exit 1; }
src="$(sed -n 's/^[[:space:]]*"Dir": "\([^"]*\)".*/\1/p' <<<"$info")"
key="$(cat "$here/main.go" "$here/mutating/oracle_export.go" "$here/validating/oracle_export.go" "$here/wsvalidating/oracle_export.go" "$here/wsutil/oracle_export.go" "$here/wscontroller/oracle_export.go" "$src/go.sum" | sha256sum | cut -c1-12)"
out="${ENVTEST_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kruise-ts-envtest}/sidecarset-oracle-$version-$key"
# One build at a time per output (prebuild.sh builds it in the background while a test may need it): the second waits.
mkdir -p "$(dirname "$out")"
exec 9>"$out.lock"
command -v flock >/dev/null 2>&1 && flock 9
if [[ ! -x "$out/sidecarset-oracle" ]]; then
  rm -rf "$out.tmp" && mkdir -p "$out.tmp" && cp -r "$src" "$out.tmp/src" && chmod -R u+w "$out.tmp/src"
  mkdir -p "$out.tmp/src/cmd/sidecarset-oracle" && cp "$here/main.go" "$out.tmp/src/cmd/sidecarset-oracle/"
  cp "$here/mutating/oracle_export.go" "$out.tmp/src/pkg/webhook/pod/mutating/"
  cp "$here/validating/oracle_export.go" "$out.tmp/src/pkg/webhook/sidecarset/validating/"
  cp "$here/wsvalidating/oracle_export.go" "$out.tmp/src/pkg/webhook/workloadspread/validating/"
  cp "$here/wsutil/oracle_export.go" "$out.tmp/src/pkg/util/workloadspread/"
  cp "$here/wscontroller/oracle_export.go" "$out.tmp/src/pkg/controller/workloadspread/"
  (cd "$out.tmp/src" && GOWORK=off GOFLAGS=-mod=readonly "$go" build -trimpath -o "$out.tmp/sidecarset-oracle" ./cmd/sidecarset-oracle) >&2
  rm -rf "$out.tmp/src" && rm -rf "$out" && mv "$out.tmp" "$out"
fi
echo "$out/sidecarset-oracle"
