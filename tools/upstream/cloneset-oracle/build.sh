#!/usr/bin/env bash
# Builds cloneset-oracle (main.go here) inside a copy of the pinned upstream module, as
# ../sidecarset-oracle/build.sh does, so it links upstream's own CloneSet packages with upstream's
# own go.mod. The runtime's CloneSet core is pinned to upstream v1.9.1 (the release it was written
# against), whatever the other oracles' default is. stdout: the path of the cached binary.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
go="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
pin="$here/../pin.json"
version="${CLONESET_ORACLE_KRUISE_VERSION:-v1.9.1}"
sum="$(node -e "const p = require('$pin'); if (!p.releases['$version']) { console.error('cloneset-oracle: $pin pins no $version'); process.exit(1); } process.stdout.write(p.releases['$version'])")"
module="$(node -e "process.stdout.write(require('$pin').module)")"
info="$(cd / && GOWORK=off GOFLAGS=-mod=mod "$go" mod download -json "$module@$version")" \
  || { echo "cloneset-oracle: go mod download $module@$version failed: $info" >&2; exit 1; }
got="$(sed -n 's/^[[:space:]]*"Sum": "\([^"]*\)".*/\1/p' <<<"$info")"
[[ "$got" == "$sum" ]] || { echo "cloneset-oracle: $module@$version has checksum '$got', $pin pins '$sum'" >&2; exit 1; }
src="$(sed -n 's/^[[:space:]]*"Dir": "\([^"]*\)".*/\1/p' <<<"$info")"
key="$(cat "$here/main.go" "$here/validating/oracle_export.go" "$src/go.sum" | sha256sum | cut -c1-12)"
out="${ENVTEST_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kruise-ts-envtest}/cloneset-oracle-$version-$key"
# One build at a time per output (prebuild.sh builds it in the background while a test may need it): the second waits.
mkdir -p "$(dirname "$out")"
exec 9>"$out.lock"
command -v flock >/dev/null 2>&1 && flock 9
if [[ ! -x "$out/cloneset-oracle" ]]; then
  rm -rf "$out.tmp" && mkdir -p "$out.tmp" && cp -r "$src" "$out.tmp/src" && chmod -R u+w "$out.tmp/src"
  mkdir -p "$out.tmp/src/cmd/cloneset-oracle" && cp "$here/main.go" "$out.tmp/src/cmd/cloneset-oracle/"
  cp "$here/validating/oracle_export.go" "$out.tmp/src/pkg/webhook/cloneset/validating/"
  (cd "$out.tmp/src" && GOWORK=off GOFLAGS=-mod=readonly "$go" build -trimpath -o "$out.tmp/cloneset-oracle" ./cmd/cloneset-oracle) >&2
  rm -rf "$out.tmp/src" && rm -rf "$out" && mv "$out.tmp" "$out"
fi
echo "$out/cloneset-oracle"
