#!/usr/bin/env bash
# Builds sidecarset-oracle (main.go here) inside a copy of the pinned upstream module, so it
# links upstream's own packages with upstream's own go.mod (its replace directives included).
# Offline: every dependency is already in the module cache once test/envtest/binaries/build.sh
# has built kruise-manager. stdout: the path of the cached binary.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
go="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
pin="$here/../pin.json"
version="$(node -e "process.stdout.write(require('$pin').version)")"
module="$(node -e "process.stdout.write(require('$pin').module)")"
src="$("$go" env GOMODCACHE)/${module}@${version}"
[[ -d "$src" ]] || { echo "sidecarset-oracle: $src missing: run bash test/envtest/binaries/build.sh first" >&2; exit 1; }
key="$(cat "$here/main.go" "$here/mutating/oracle_export.go" "$here/validating/oracle_export.go" "$here/wsvalidating/oracle_export.go" "$here/wsutil/oracle_export.go" "$here/wscontroller/oracle_export.go" "$src/go.sum" | sha256sum | cut -c1-12)"
out="${ENVTEST_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kruise-ts-envtest}/sidecarset-oracle-$version-$key"
if [[ ! -x "$out/sidecarset-oracle" ]]; then
  rm -rf "$out.tmp" && mkdir -p "$out.tmp" && cp -r "$src" "$out.tmp/src" && chmod -R u+w "$out.tmp/src"
  mkdir -p "$out.tmp/src/cmd/sidecarset-oracle" && cp "$here/main.go" "$out.tmp/src/cmd/sidecarset-oracle/"
  cp "$here/mutating/oracle_export.go" "$out.tmp/src/pkg/webhook/pod/mutating/"
  cp "$here/validating/oracle_export.go" "$out.tmp/src/pkg/webhook/sidecarset/validating/"
  cp "$here/wsvalidating/oracle_export.go" "$out.tmp/src/pkg/webhook/workloadspread/validating/"
  cp "$here/wsutil/oracle_export.go" "$out.tmp/src/pkg/util/workloadspread/"
  cp "$here/wscontroller/oracle_export.go" "$out.tmp/src/pkg/controller/workloadspread/"
  (cd "$out.tmp/src" && GOFLAGS=-mod=readonly GOPROXY=off "$go" build -trimpath -o "$out.tmp/sidecarset-oracle" ./cmd/sidecarset-oracle) >&2
  rm -rf "$out.tmp/src" && rm -rf "$out" && mv "$out.tmp" "$out"
fi
echo "$out/sidecarset-oracle"
