#!/usr/bin/env bash
# Resolves the kube-apiserver and etcd binaries for the envtest control plane.
#
# Order, per component (same conventions as controller-runtime's envtest):
#   1. TEST_ASSET_KUBE_APISERVER / TEST_ASSET_ETCD  - path to one binary
#   2. KUBEBUILDER_ASSETS                           - dir holding both
#   3. build from the wrapper Go module next to this script, cached outside the
#      work tree in ${ENVTEST_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kruise-ts-envtest}
#
# The real kruise-manager is built the same way from upstream's own Go module, pinned (with
# its go.sum hash) in tools/upstream/pin.json; TEST_ASSET_KRUISE_MANAGER overrides it. kruise-daemon
# (cmd/daemon of the same module) likewise, overridden by TEST_ASSET_KRUISE_DAEMON.
#
# `build.sh cert-manager` resolves kube-apiserver and etcd, then cert-manager's controller and
# cainjector from cert-manager's module pinned in cert-manager/pin.json (for the cert-manager mode
# of the real kruise-manager); stdout adds CERT_MANAGER_CONTROLLER, _CAINJECTOR, _CRDS, _VERSION.
#
# `build.sh cluster` resolves what the local cluster (test/cluster) needs instead: kube-apiserver
# and etcd as above, plus kubelet, kube-proxy, kube-scheduler and kube-controller-manager from the
# wrapper module kube-node/ (same k8s.io/kubernetes version as kube-apiserver/, checked below).
# Overrides: TEST_ASSET_KUBELET, TEST_ASSET_KUBE_PROXY, TEST_ASSET_KUBE_SCHEDULER,
# TEST_ASSET_KUBE_CONTROLLER_MANAGER, or KUBEBUILDER_ASSETS when that dir holds the binary
# (setup-envtest's asset dirs hold only kube-apiserver, etcd and kubectl, so a missing one is built).
#
# stdout: machine-readable KEY=VALUE lines (KUBE_APISERVER, ETCD, KRUISE_MANAGER, KRUISE_DAEMON,
# KUBERNETES_VERSION, ETCD_VERSION, KRUISE_VERSION, *_SOURCE; in cluster mode KUBELET,
# KUBE_PROXY, KUBE_SCHEDULER, KUBE_CONTROLLER_MANAGER and their *_SOURCE in place of the
# KRUISE_* lines); all logging goes to stderr.
set -euo pipefail
shopt -s inherit_errexit # functions below run inside $(...), which would otherwise drop `set -e`

mode="${1:-envtest}"
[[ "$mode" == envtest || "$mode" == cluster || "$mode" == cert-manager ]] \
  || { echo "envtest: error: unknown mode '$mode' (use no argument, 'cluster' or 'cert-manager')" >&2; exit 2; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache_root="${ENVTEST_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kruise-ts-envtest}"

log() { echo "envtest: $*" >&2; }
die() { echo "envtest: error: $*" >&2; exit 1; }

# Version pinned by a wrapper module's go.mod, e.g. `module_version etcd go.etcd.io/etcd/server/v3`.
module_version() {
  awk -v m="$2" '$1 == m && $2 ~ /^v/ { print $2; exit }' "$here/$1/go.mod"
}

find_go() {
  if [[ -n "${GO:-}" ]]; then echo "$GO"; return; fi
  if command -v go >/dev/null 2>&1; then command -v go; return; fi
  # Non-login shells (npm scripts, IDE runners) often lack the standard install dir on PATH.
  if [[ -x /usr/local/go/bin/go ]]; then echo /usr/local/go/bin/go; return; fi
  die "no Go toolchain found, and no prebuilt binaries were given.
  Either install Go (>= the 'go' line in $here/*/go.mod) and put it on PATH (or set GO=/path/to/go),
  or point at existing binaries:
    KUBEBUILDER_ASSETS=/dir/with/kube-apiserver-and-etcd   (e.g. from 'setup-envtest use -p path')
    TEST_ASSET_KUBE_APISERVER=/path/to/kube-apiserver TEST_ASSET_ETCD=/path/to/etcd"
}

# build <component> <main package> <version> <ldflags...>; prints the cached binary path.
# The wrapper module in $here/<component> pins the dependency set; BUILD_SRC (a module
# directory) builds that module's own main package instead, with its own go.mod.
build() {
  local component="$1" pkg="$2" version="$3"; shift 3
  local src="${BUILD_SRC:-$here/$component}"
  local ldflags="-s -w $*"
  # GOFLAGS from the caller's environment is replaced, not merged: these are all the flags.
  local goflags=(-mod=readonly -trimpath -buildvcs=false)
  # Key on the exact dependency set and flags, so bumping go.mod/go.sum or the
  # version stamping rebuilds instead of reusing a stale binary.
  local key
  key="$(cat "$src/go.mod" "$src/go.sum" <(uname -sm) \
    <(echo "${goflags[*]} $ldflags" | sed 's/buildDate=[^ ]*//g') | sha256sum | cut -c1-12)"
  local dir="$cache_root/$component-$version-$key" bin
  bin="$dir/$component"
  mkdir -p "$dir"
  # Serialise concurrent runs (e.g. `npm run envtest` next to a jest run) on one build.
  exec 9>"$dir/.lock"
  command -v flock >/dev/null 2>&1 && flock 9
  if [[ -x "$bin" ]]; then
    log "using cached $component $version ($bin)"
  else
    local go; go="$(find_go)"
    log "building $component $version with $("$go" env GOVERSION) (first run only; takes minutes)..."
    local tmp="$dir/.$component.tmp.$$" start=$SECONDS
    # A signal becomes a normal exit so the EXIT trap removes the partial file.
    trap "rm -f '$tmp'" EXIT; trap 'exit 130' INT TERM HUP
    (cd "$src" && GOWORK=off GOFLAGS= CGO_ENABLED=0 "$go" build "${goflags[@]}" \
      -ldflags "$ldflags" -o "$tmp" "$pkg") >&2
    # Rename is atomic on one filesystem: an interrupted build never leaves a broken binary.
    mv -f "$tmp" "$bin"
    trap - EXIT INT TERM HUP
    log "built $component in $((SECONDS - start))s -> $bin"
  fi
  exec 9>&-
  echo "$bin"
}

given() { # given <path> <description>: validates a user-supplied binary
  [[ -x "$1" && ! -d "$1" ]] || die "$2 points at '$1', which is not an executable file"
  echo "$1"
}

k8s_version="$(module_version kube-apiserver k8s.io/kubernetes)"
etcd_version="$(module_version etcd go.etcd.io/etcd/server/v3)"
[[ -n "$k8s_version" && -n "$etcd_version" ]] || die "cannot read pinned versions from $here/*/go.mod"
node_k8s_version="$(module_version kube-node k8s.io/kubernetes)"
[[ "$node_k8s_version" == "$k8s_version" ]] \
  || die "$here/kube-node/go.mod pins k8s.io/kubernetes $node_k8s_version but kube-apiserver/go.mod pins $k8s_version; bump both together"

# Version stamps shared by every binary built from k8s.io/kubernetes.
IFS=. read -r major minor _ <<<"${k8s_version#v}"
stamp=()
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  # gitCommit is left empty: the module proxy does not tell which commit a tag is.
  stamp+=("-X '$p.gitVersion=$k8s_version'" "-X '$p.gitMajor=$major'" "-X '$p.gitMinor=$minor'"
    "-X '$p.gitCommit='" "-X '$p.gitTreeState=archive'" "-X '$p.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)'")
done

if [[ -n "${TEST_ASSET_KUBE_APISERVER:-}" ]]; then
  kas="$(given "$TEST_ASSET_KUBE_APISERVER" TEST_ASSET_KUBE_APISERVER)"; kas_source=TEST_ASSET_KUBE_APISERVER
elif [[ -n "${KUBEBUILDER_ASSETS:-}" ]]; then
  kas="$(given "$KUBEBUILDER_ASSETS/kube-apiserver" KUBEBUILDER_ASSETS)"; kas_source=KUBEBUILDER_ASSETS
else
  kas="$(build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$k8s_version" "${stamp[@]}")"; kas_source=built
fi

if [[ -n "${TEST_ASSET_ETCD:-}" ]]; then
  etcd="$(given "$TEST_ASSET_ETCD" TEST_ASSET_ETCD)"; etcd_source=TEST_ASSET_ETCD
elif [[ -n "${KUBEBUILDER_ASSETS:-}" ]]; then
  etcd="$(given "$KUBEBUILDER_ASSETS/etcd" KUBEBUILDER_ASSETS)"; etcd_source=KUBEBUILDER_ASSETS
else
  etcd="$(build etcd go.etcd.io/etcd/server/v3 "$etcd_version")"; etcd_source=built
fi

echo "KUBE_APISERVER=$kas"
echo "KUBE_APISERVER_SOURCE=$kas_source"
echo "KUBERNETES_VERSION=$k8s_version"
echo "ETCD=$etcd"
echo "ETCD_SOURCE=$etcd_source"
echo "ETCD_VERSION=$etcd_version"

if [[ "$mode" == cert-manager ]]; then
  # cert-manager's controller and cainjector from its own checksum-pinned module (built inside it:
  # its go.mod has replace directives), and the directory of its CRDs in that module.
  cm_pin="$here/cert-manager/pin.json"
  cm_field() { sed -n "s/^ *\"$1\": *\"\([^\"]*\)\".*/\1/p" "$cm_pin"; }
  cm_module="$(cm_field module)"; cm_version="$(cm_field version)"; cm_sum="$(cm_field sum)"
  [[ -n "$cm_module" && -n "$cm_version" && -n "$cm_sum" ]] || die "cannot read module/version/sum from $cm_pin"
  cm_info="$(cd / && GOWORK=off GOFLAGS=-mod=mod "$(find_go)" mod download -json "$cm_module@$cm_version")" \
    || die "go mod download $cm_module@$cm_version failed: $cm_info"
  [[ "$(sed -n 's/^[[:space:]]*"Sum": "\([^"]*\)".*/\1/p' <<<"$cm_info")" == "$cm_sum" ]] \
    || die "$cm_module@$cm_version does not match the checksum pinned in $cm_pin"
  cm_dir="$(sed -n 's/^[[:space:]]*"Dir": "\([^"]*\)".*/\1/p' <<<"$cm_info")"
  echo "CERT_MANAGER_CONTROLLER=$(BUILD_SRC="$cm_dir" build cert-manager-controller ./cmd/controller "$cm_version")"
  echo "CERT_MANAGER_CAINJECTOR=$(BUILD_SRC="$cm_dir" build cert-manager-cainjector ./cmd/cainjector "$cm_version")"
  echo "CERT_MANAGER_CRDS=$cm_dir/deploy/crds"
  echo "CERT_MANAGER_VERSION=$cm_version"
  exit 0
fi

if [[ "$mode" == cluster ]]; then
  # resolve_node <binary> <KEY>: TEST_ASSET_<KEY>, else KUBEBUILDER_ASSETS/<binary> if present, else built.
  resolve_node() {
    local name="$1" key="$2" var="TEST_ASSET_$2" path source
    if [[ -n "${!var:-}" ]]; then
      path="$(given "${!var}" "$var")"; source="$var"
    elif [[ -n "${KUBEBUILDER_ASSETS:-}" && -e "$KUBEBUILDER_ASSETS/$name" ]]; then
      path="$(given "$KUBEBUILDER_ASSETS/$name" KUBEBUILDER_ASSETS)"; source=KUBEBUILDER_ASSETS
    else
      path="$(BUILD_SRC="$here/kube-node" build "$name" "k8s.io/kubernetes/cmd/$name" "$k8s_version" "${stamp[@]}")"; source=built
    fi
    echo "$key=$path"
    echo "${key}_SOURCE=$source"
  }
  # kubelet first: it needs most of the packages the other three share.
  resolve_node kubelet KUBELET
  resolve_node kube-proxy KUBE_PROXY
  resolve_node kube-scheduler KUBE_SCHEDULER
  resolve_node kube-controller-manager KUBE_CONTROLLER_MANAGER
  exit 0
fi

# Upstream's module, checksum-verified against the pin before anything of it is built. KRUISE_RELEASE
# selects one of the releases pinned in tools/upstream/pin.json (default: its "default").
pin="$here/../../../tools/upstream/pin.json"
kruise_module="$(sed -n 's/^ *"module": *"\([^"]*\)".*/\1/p' "$pin")"
kruise_version="${KRUISE_RELEASE:-$(sed -n 's/^ *"default": *"\([^"]*\)".*/\1/p' "$pin")}"
[[ "$kruise_version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "KRUISE_RELEASE must be a release tag like v1.9.1, got '$kruise_version'"
kruise_sum="$(awk -v v="\"$kruise_version\":" '$1 == v { gsub(/[",]/, "", $2); print $2; exit }' "$pin")"
[[ -n "$kruise_module" && -n "$kruise_sum" ]] \
  || die "$pin pins no release $kruise_version (pinned: $(grep -o '"v[0-9.]*":' "$pin" | tr -d '":' | xargs)); add one with npm run upstream:generate -- --version $kruise_version"
src_dir=""
kruise_src() { # downloads and verifies the module once; sets src_dir (not in a subshell)
  [[ -n "$src_dir" ]] && return
  local go info got_sum; go="$(find_go)"
  log "resolving $kruise_module@$kruise_version from the Go module proxy..."
  info="$(cd / && GOWORK=off GOFLAGS=-mod=mod "$go" mod download -json "$kruise_module@$kruise_version")" \
    || die "go mod download $kruise_module@$kruise_version failed: $info"
  got_sum="$(sed -n 's/^[[:space:]]*"Sum": "\([^"]*\)".*/\1/p' <<<"$info")"
  src_dir="$(sed -n 's/^[[:space:]]*"Dir": "\([^"]*\)".*/\1/p' <<<"$info")"
  [[ "$got_sum" == "$kruise_sum" ]] || die "$kruise_module@$kruise_version has checksum '$got_sum', the pin in $pin says '$kruise_sum'"
}
if [[ -n "${TEST_ASSET_KRUISE_MANAGER:-}" ]]; then
  km="$(given "$TEST_ASSET_KRUISE_MANAGER" TEST_ASSET_KRUISE_MANAGER)"; km_source=TEST_ASSET_KRUISE_MANAGER
else
  kruise_src
  km="$(BUILD_SRC="$src_dir" build kruise-manager . "$kruise_version")"; km_source=built
fi
# kruise-daemon (the DaemonSet's /kruise-daemon) from the same verified module; CGO off as upstream's Dockerfile builds it.
# KRUISE_WITHOUT_DAEMON=1 skips it (the envtest tests run no daemon; only the local cluster's images need it).
if [[ "${KRUISE_WITHOUT_DAEMON:-}" == 1 ]]; then
  kd=""; kd_source=skipped
elif [[ -n "${TEST_ASSET_KRUISE_DAEMON:-}" ]]; then
  kd="$(given "$TEST_ASSET_KRUISE_DAEMON" TEST_ASSET_KRUISE_DAEMON)"; kd_source=TEST_ASSET_KRUISE_DAEMON
else
  kruise_src
  kd="$(BUILD_SRC="$src_dir" build kruise-daemon ./cmd/daemon "$kruise_version")"; kd_source=built
fi

echo "KRUISE_MANAGER=$km"
echo "KRUISE_MANAGER_SOURCE=$km_source"
echo "KRUISE_DAEMON=$kd"
echo "KRUISE_DAEMON_SOURCE=$kd_source"
echo "KRUISE_VERSION=$kruise_version"
