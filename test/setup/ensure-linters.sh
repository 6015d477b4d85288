#!/usr/bin/env bash
# Installs the Kubernetes manifest linters that judge every example (test/lint/), pinned:
#   kube-score  from the Go module proxy  (go install github.com/zegl/kube-score/cmd/kube-score@$KUBE_SCORE_VERSION)
#   checkov     from PyPI                 (pip install checkov==$CHECKOV_VERSION into its own venv)
# into ${LINTERS_CACHE_DIR:-${ENVTEST_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kruise-ts-envtest}},
# once per machine; later runs reuse the cached installs (milliseconds).
#
# Overrides: KUBE_SCORE=/path/to/kube-score, CHECKOV=/path/to/checkov (used as given),
# GO=/path/to/go, PYTHON=/path/to/python3 (>= 3.9, with the venv module).
#
# stdout: machine-readable KEY=VALUE lines (KUBE_SCORE, KUBE_SCORE_VERSION, CHECKOV,
# CHECKOV_VERSION); all logging goes to stderr.
set -euo pipefail
shopt -s inherit_errexit

KUBE_SCORE_VERSION=v1.20.0
CHECKOV_VERSION=3.3.30

cache_root="${LINTERS_CACHE_DIR:-${ENVTEST_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kruise-ts-envtest}}"

log() { echo "linters: $*" >&2; }
die() { echo "linters: error: $*" >&2; exit 1; }

given() { # given <path> <variable>: validates a user-supplied executable
  [[ -x "$1" && ! -d "$1" ]] || die "$2 points at '$1', which is not an executable file"
  echo "$1"
}

# locked <dir>: serialises concurrent runs (two jest workers, `npm test` next to a manual run)
# on one install directory; the lock is released when the calling subshell exits.
locked() {
  mkdir -p "$1"
  exec 9>"$1/.lock"
  if command -v flock >/dev/null 2>&1; then flock 9; fi
}

find_go() {
  if [[ -n "${GO:-}" ]]; then given "$GO" GO; return; fi
  if command -v go >/dev/null 2>&1; then command -v go; return; fi
  # Non-login shells (npm scripts, IDE runners) often lack the standard install dir on PATH.
  if [[ -x /usr/local/go/bin/go ]]; then echo /usr/local/go/bin/go; return; fi
  die "kube-score $KUBE_SCORE_VERSION is not installed and no Go toolchain was found to build it.
  Install Go (>= 1.22) and put it on PATH (or set GO=/path/to/go),
  or point at an existing binary: KUBE_SCORE=/path/to/kube-score"
}

find_python() {
  local py
  if [[ -n "${PYTHON:-}" ]]; then py="$(given "$PYTHON" PYTHON)"
  elif command -v python3 >/dev/null 2>&1; then py="$(command -v python3)"
  else die "checkov $CHECKOV_VERSION is not installed and no python3 was found to install it.
  Install Python >= 3.9 with its venv module (Debian: apt-get install python3 python3-venv),
  or set PYTHON=/path/to/python3, or point at an existing binary: CHECKOV=/path/to/checkov"
  fi
  "$py" -c 'import sys, venv; sys.exit(0 if sys.version_info >= (3, 9) else 1)' 2>/dev/null \
    || die "$py is older than 3.9 or lacks the venv module (Debian: apt-get install python3-venv); set PYTHON=/path/to/python3"
  echo "$py"
}

# cached <tool> <version> <override variable> <binary under the tool's dir> <install function>:
# prints the binary's path, installing it first (once, under a lock) when it is not cached.
cached() {
  local tool="$1" version="$2" override="$3" rel="$4" install="$5"
  if [[ -n "${!override:-}" ]]; then given "${!override}" "$override"; return; fi
  local dir="$cache_root/$tool-$version"
  local bin="$dir/$rel"
  (
    locked "$dir"
    # The marker is written last: without it an install is half-finished and starts over.
    if [[ -x "$bin" && -f "$dir/.installed" ]]; then log "using cached $tool $version ($bin)"; exit 0; fi
    local start=$SECONDS
    "$install" "$dir" "$version"
    touch "$dir/.installed"
    log "installed $tool $version in $((SECONDS - start))s -> $bin"
  ) >&2
  echo "$bin"
}

install_kube_score() { # <dir> <version>
  local go tmp="$1/.gobin.$$"
  go="$(find_go)"
  log "installing kube-score $2 with $("$go" env GOVERSION) from the Go module proxy (first run only)..."
  trap "rm -rf '$tmp'" EXIT; trap 'exit 130' INT TERM HUP
  GOWORK=off GOFLAGS= CGO_ENABLED=0 GOBIN="$tmp" "$go" install -trimpath "github.com/zegl/kube-score/cmd/kube-score@$2" \
    || die "go install github.com/zegl/kube-score/cmd/kube-score@$2 failed (see above)"
  # Rename is atomic on one filesystem: an interrupted install never leaves a broken binary.
  mv -f "$tmp/kube-score" "$1/kube-score"
}

install_checkov() { # <dir> <version>
  local py
  py="$(find_python)"
  log "installing checkov $2 with $("$py" --version 2>&1) from PyPI into a venv (first run only; about half a minute)..."
  rm -rf "$1/venv"
  "$py" -m venv "$1/venv"
  "$1/venv/bin/python" -m pip install --quiet --disable-pip-version-check "checkov==$2" \
    || { rm -rf "$1/venv"; die "pip install checkov==$2 failed (see above)"; }
}

ks="$(cached kube-score "$KUBE_SCORE_VERSION" KUBE_SCORE kube-score install_kube_score)"
ck="$(cached checkov "$CHECKOV_VERSION" CHECKOV venv/bin/checkov install_checkov)"
echo "KUBE_SCORE=$ks"
echo "KUBE_SCORE_VERSION=$KUBE_SCORE_VERSION"
echo "CHECKOV=$ck"
echo "CHECKOV_VERSION=$CHECKOV_VERSION"
