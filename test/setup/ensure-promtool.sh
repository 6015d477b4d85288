#!/usr/bin/env bash
# Installs promtool, Prometheus' rule checker and rule unit-test runner, pinned: built from the
# Prometheus Go module (go install github.com/prometheus/prometheus/cmd/promtool@$PROMTOOL_VERSION)
# into ${PROMTOOL_CACHE_DIR:-${ENVTEST_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kruise-ts-envtest}},
# once per machine, under a lock; later runs reuse the cached binary (milliseconds).
#
# Overrides: PROMTOOL=/path/to/promtool (used as given), GO=/path/to/go.
#
# stdout: machine-readable KEY=VALUE lines (PROMTOOL, PROMTOOL_VERSION); logging goes to stderr.
set -euo pipefail
shopt -s inherit_errexit

# Prometheus' Go module tags are v0.<major*100+minor>.<patch>: v0.316.0 is Prometheus 3.16.0.
PROMTOOL_VERSION=v0.316.0

cache_root="${PROMTOOL_CACHE_DIR:-${ENVTEST_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kruise-ts-envtest}}"

log() { echo "promtool: $*" >&2; }
die() { echo "promtool: error: $*" >&2; exit 1; }

if [[ -n "${PROMTOOL:-}" ]]; then
  [[ -x "$PROMTOOL" && ! -d "$PROMTOOL" ]] || die "PROMTOOL points at '$PROMTOOL', which is not an executable file"
  echo "PROMTOOL=$PROMTOOL"
  echo "PROMTOOL_VERSION=given"
  exit 0
fi

find_go() {
  if [[ -n "${GO:-}" ]]; then echo "$GO"; return; fi
  if command -v go >/dev/null 2>&1; then command -v go; return; fi
  # Non-login shells (npm scripts, IDE runners) often lack the standard install dir on PATH.
  if [[ -x /usr/local/go/bin/go ]]; then echo /usr/local/go/bin/go; return; fi
  die "promtool $PROMTOOL_VERSION is not built yet and no Go toolchain was found to build it.
  Install Go (>= 1.24) and put it on PATH (or set GO=/path/to/go),
  or point at an existing binary: PROMTOOL=/path/to/promtool"
}

dir="$cache_root/promtool-$PROMTOOL_VERSION"
bin="$dir/promtool"
mkdir -p "$dir"
(
  # Serialise concurrent runs (two jest workers, `npm test` next to a manual run) on one build.
  exec 9>"$dir/.lock"
  if command -v flock >/dev/null 2>&1; then flock 9; fi
  if [[ -x "$bin" ]]; then log "using cached promtool $PROMTOOL_VERSION ($bin)"; exit 0; fi
  go="$(find_go)"
  log "building promtool $PROMTOOL_VERSION with $("$go" env GOVERSION) from the Go module proxy (first run only; takes minutes)..."
  start=$SECONDS tmp="$dir/.gobin.$$"
  trap "rm -rf '$tmp'" EXIT; trap 'exit 130' INT TERM HUP
  GOWORK=off GOFLAGS= CGO_ENABLED=0 GOBIN="$tmp" "$go" install -trimpath -ldflags='-s -w' \
    "github.com/prometheus/prometheus/cmd/promtool@$PROMTOOL_VERSION" \
    || die "go install github.com/prometheus/prometheus/cmd/promtool@$PROMTOOL_VERSION failed (see above)"
  # Rename is atomic on one filesystem: an interrupted build never leaves a broken binary.
  mv -f "$tmp/promtool" "$bin"
  log "built promtool $PROMTOOL_VERSION in $((SECONDS - start))s -> $bin"
) >&2
echo "PROMTOOL=$bin"
echo "PROMTOOL_VERSION=$PROMTOOL_VERSION"
