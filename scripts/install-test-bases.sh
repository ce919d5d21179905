#!/usr/bin/env bash
# install-test-bases.sh RUNTIME_TAG BUILD_TAG
#
# Makes the two base images the Dockerfile takes as build arguments, without
# any registry: a Debian bookworm root from debootstrap (the host's apt
# mirror), imported as RUNTIME_TAG, and the same root plus the host's Go
# toolchain (`go env GOROOT`) and gcc, imported as BUILD_TAG. Used by the
# compose install test (internal/installtest); a site without Docker Hub can
# use it the same way (README "Building without Docker Hub").
#
# The images carry no label: the portal image built FROM them would inherit
# it, and a site's own portal image (or the compose test's) is nobody's test
# object. Find them by their tags instead (the compose test's are
# workbench-install-test/{runtime,build}:<hash>).
set -euo pipefail

die() { echo "install-test-bases: error: $*" >&2; exit 1; }
[[ $# -eq 2 ]] || die "usage: $0 RUNTIME_TAG BUILD_TAG"
RUNTIME_TAG=$1 BUILD_TAG=$2
[[ $(id -u) -eq 0 ]] || die "must run as root (debootstrap chroots and creates device nodes)"
command -v debootstrap >/dev/null || die "debootstrap is not installed (apt-get install debootstrap)"
GOROOT=$(go env GOROOT) || die "go is not on PATH"

SUITE=bookworm
mirror() {
	local f
	shopt -s nullglob
	for f in /etc/apt/sources.list.d/*.sources; do
		awk -v s="$SUITE" '/^URIs:/{u=$2} /^Suites:/{for(i=2;i<=NF;i++) if($i==s) ok=1} /^$/{if(ok&&u){print u; exit} u="";ok=0} END{if(ok&&u) print u}' "$f" | head -1
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		if [[ -f $f ]]; then
			sed -E 's/#.*//; s/\[[^]]*\]//' "$f" | awk -v s="$SUITE" '$1=="deb" && $3==s {print $2; exit}'
		fi
	done
	return 0
}
MIRROR=${MIRROR:-$(mirror | head -1)}
[[ -n $MIRROR ]] || die "no apt source for $SUITE in /etc/apt; set MIRROR=http://host/debian"

ROOT=$(mktemp -d "${TMPDIR:-/tmp}/wb-install-base.XXXXXX")
chmod 0755 "$ROOT"
cleanup() {
	local rc=$?
	for m in "$ROOT/proc" "$ROOT/sys" "$ROOT/dev/pts"; do
		mountpoint -q "$m" 2>/dev/null && { umount "$m" 2>/dev/null || umount -l "$m" || true; }
	done
	rm -rf --one-file-system "$ROOT"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

KEYRING=()
if [[ -f /usr/share/keyrings/debian-archive-keyring.gpg ]]; then
	KEYRING=(--keyring=/usr/share/keyrings/debian-archive-keyring.gpg)
fi
# What the runtime stage installs itself (ca-certificates, iptables) is
# already here, and the build stage's gcc: apt inside `docker build` would
# need the network the point of this script is to do without.
debootstrap --variant=minbase "${KEYRING[@]}" --include=ca-certificates,iptables,gcc,libc6-dev \
	"$SUITE" "$ROOT" "$MIRROR" >/dev/null
rm -rf "$ROOT"/var/lib/apt/lists/* "$ROOT"/var/cache/apt/archives/*.deb

tar -C "$ROOT" -c . | docker import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' - "$RUNTIME_TAG" >/dev/null
mkdir -p "$ROOT/usr/local/go"
cp -a "$GOROOT/." "$ROOT/usr/local/go/"
tar -C "$ROOT" -c . | docker import --change 'ENV PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' - "$BUILD_TAG" >/dev/null
echo "install-test-bases: $RUNTIME_TAG and $BUILD_TAG"
