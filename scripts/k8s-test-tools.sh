#!/usr/bin/env bash
# Builds the real Kubernetes components the Kubernetes tests run against
# (internal/testsupport/kubecluster): kube-apiserver, kube-scheduler,
# kube-controller-manager, etcd and kwok, from the Go module proxy, into a cache outside the repository:
#
#   ${WORKBENCH_K8S_TOOLS:-$HOME/.cache/workbench/k8s-tools}/bin
#
# Idempotent: a tool is built only when its binary is missing or the
# version recorded for it in bin/versions differs from the one below (so a
# version bump here rebuilds it). The first run takes a while (the apiserver
# alone is about 10 minutes on 2 cores); later runs take a second.
#
# Every tool builds in a throwaway module in a temporary directory, so none
# of their dependencies touch the portal's go.mod.
set -euo pipefail

KUBERNETES_VERSION=v1.37.2 # k8s.io/kubernetes: kube-apiserver, kube-scheduler, kube-controller-manager
ETCD_VERSION=v3.7.3        # go.etcd.io/etcd/server/v3 (its root package is the etcd main)
KWOK_VERSION=v0.7.0        # sigs.k8s.io/kwok/cmd/kwok

GO=${GO:-go}
TOOLS=${WORKBENCH_K8S_TOOLS:-$HOME/.cache/workbench/k8s-tools}
BIN=$TOOLS/bin
STAMP=$BIN/versions
mkdir -p "$BIN"
touch "$STAMP"

# One build at a time per cache (two worktrees' `make test` on one machine):
# a second run waits for the first, then finds the tools current.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$TOOLS/.lock"
  if ! flock -n 9; then
    echo "k8s-tools: another build into $TOOLS is running; waiting for it"
    flock 9
  fi
fi

# The builds are long and the machines that run them are often busy with
# other work: yield to it.
NICE=(nice -n 5)
# The tools are plain Go programs; cgo buys nothing and would need a C
# toolchain's headers (the Makefile's CGO_CFLAGS are for go-nvml).
export CGO_ENABLED=0
export GOFLAGS=-mod=mod

# current TOOL VERSION: true when bin/TOOL exists and was built at VERSION.
current() {
  [ -x "$BIN/$1" ] && grep -qx "$1 $2" "$STAMP"
}

# record TOOL VERSION: notes in the stamp file that bin/TOOL is VERSION.
record() {
  local tmp
  tmp=$(mktemp "$STAMP.XXXXXX")
  { grep -v "^$1 " "$STAMP" || true; echo "$1 $2"; } | sort >"$tmp"
  chmod 644 "$tmp"
  mv "$tmp" "$STAMP"
}

# newmod DIR: a throwaway main module in DIR.
newmod() {
  (cd "$1" && "$GO" mod init k8stools.invalid/build >/dev/null 2>&1)
}

# quiet CMD...: runs CMD, showing its output only when it fails (go get
# and go mod download list every module they fetch).
quiet() {
  local out
  if ! out=$("$@" 2>&1); then
    echo "$out" >&2
    return 1
  fi
}

built=()
took() { # took NAME START
  local s=$(( $(date +%s) - $2 ))
  built+=("$1 ($(( s / 60 ))m$(( s % 60 ))s)")
  echo "k8s-tools: built $1 in $(( s / 60 ))m$(( s % 60 ))s"
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# kube-apiserver and kube-scheduler: k8s.io/kubernetes is not meant to be
# required as a module; its go.mod replaces every staging module with
# ./staging/src/... and requires them at v0.0.0. A module that requires it
# must replace each one with its published version (v1.X.Y -> v0.X.Y); the
# list comes from kubernetes' own go.mod, so a version bump keeps it right.
KUBE_CMDS=(kube-apiserver kube-scheduler kube-controller-manager)
build_kubernetes() {
  local need=()
  for b in "${KUBE_CMDS[@]}"; do
    current "$b" "$KUBERNETES_VERSION" || need+=("$b")
  done
  [ ${#need[@]} -gt 0 ] || return 0
  echo "k8s-tools: building ${KUBE_CMDS[*]} $KUBERNETES_VERSION (10 to 20 minutes on 2 cores)"
  local start dir staging modfile
  start=$(date +%s)
  dir=$work/kubernetes
  mkdir -p "$dir"
  newmod "$dir"
  modfile=$(cd "$dir" && "$GO" mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
  staging="v0.${KUBERNETES_VERSION#v1.}"
  {
    echo "require k8s.io/kubernetes $KUBERNETES_VERSION"
    echo "replace ("
    sed -n 's#^[[:space:]]*\(k8s\.io/[^ ]*\) => \./staging/.*#\t\1 => \1 '"$staging"'#p' "$modfile"
    echo ")"
  } >>"$dir/go.mod"
  grep -q '=> k8s.io/api ' "$dir/go.mod" || { echo "k8s-tools: found no staging replaces in $modfile" >&2; exit 1; }
  # One go build for all shares the compilation of everything they have
  # in common (most of it). Without the gitVersion they report
  # v0.0.0-master, which clients' version checks dislike.
  local pkgs=()
  for b in "${KUBE_CMDS[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$b"); done
  (cd "$dir" && quiet "$GO" mod download "k8s.io/kubernetes@$KUBERNETES_VERSION" &&
    "${NICE[@]}" "$GO" build -trimpath -o "$work/out-k8s/" \
      -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$KUBERNETES_VERSION" "${pkgs[@]}")
  for b in "${KUBE_CMDS[@]}"; do
    mv -f "$work/out-k8s/$b" "$BIN/$b"
    record "$b" "$KUBERNETES_VERSION"
  done
  took "$(IFS=+; echo "${KUBE_CMDS[*]}")" "$start"
}

# build_simple NAME PACKAGE VERSION: a main package from its module.
build_simple() {
  local name=$1 pkg=$2 mod=$3 version=$4
  current "$name" "$version" && return 0
  echo "k8s-tools: building $name $version"
  local start dir
  start=$(date +%s)
  dir=$work/$name
  mkdir -p "$dir"
  newmod "$dir"
  (cd "$dir" && quiet "$GO" get "$mod@$version" &&
    "${NICE[@]}" "$GO" build -trimpath -ldflags "-s -w" -o "$work/out-$name" "$pkg")
  mv -f "$work/out-$name" "$BIN/$name"
  record "$name" "$version"
  took "$name" "$start"
}

build_kubernetes
build_simple etcd go.etcd.io/etcd/server/v3 go.etcd.io/etcd/server/v3 "$ETCD_VERSION"
build_simple kwok sigs.k8s.io/kwok/cmd/kwok sigs.k8s.io/kwok "$KWOK_VERSION"

if [ ${#built[@]} -eq 0 ]; then
  echo "k8s-tools: up to date in $BIN ($(tr '\n' ' ' <"$STAMP"))"
else
  echo "k8s-tools: built ${built[*]} into $BIN"
fi
