#!/usr/bin/env bash
# debootstrap-jupyter.sh OUT_TAR
#
# Builds a minimal Debian bookworm root filesystem holding the classic Jupyter
# Notebook server (notebook 6.4.x) and an IPython kernel, entirely from Debian
# packages, and writes it as a tarball suitable for `docker import`.
#
# Why debootstrap rather than a Dockerfile: the test hosts have a Docker engine
# but no registry access, so there is no base image to build FROM; the apt
# mirror is the only package source they can reach.
#
# The mirror is the one apt already uses on this host (read from
# /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list), so the build
# works behind whatever mirror/proxy the host is configured for. Set MIRROR to
# override it.
#
# Changing this file changes the image tag (the Go side hashes it), so any edit
# here forces a rebuild.
set -euo pipefail

SUITE=bookworm
# jupyter-notebook only adds the `jupyter-notebook` script and jupyter-core the
# `jupyter` command (together ~100 kB); python3-notebook alone has no CLI
# entry point, so without them the start command would need `python3 -m`.
PACKAGES=(python3-notebook python3-ipykernel jupyter-notebook jupyter-core)

die() {
	echo "debootstrap-jupyter: error: $*" >&2
	exit 1
}

[[ $# -eq 1 ]] || die "usage: $0 OUT_TAR"
OUT_TAR=$1

# debootstrap must create device nodes, chown files to arbitrary uids and
# chroot; none of that works unprivileged, so refuse early and clearly instead
# of failing halfway through with a confusing permission error.
[[ $(id -u) -eq 0 ]] || die "must run as root (debootstrap needs root to chroot and create device nodes); current uid is $(id -u)"
command -v debootstrap >/dev/null || die "debootstrap is not installed (apt-get install debootstrap)"

# find_mirror prints the first URI apt uses for the plain $SUITE suite
# (not -security or -updates, whose layout debootstrap cannot bootstrap from).
find_mirror() {
	local f uris suites line
	shopt -s nullglob
	# deb822 format: stanzas separated by blank lines with URIs:/Suites: fields.
	for f in /etc/apt/sources.list.d/*.sources; do
		uris="" suites=""
		while IFS= read -r line || [[ -n $line ]]; do
			case $line in
			# xargs trims the blanks after the colon.
			URIs:*) uris=$(xargs <<<"${line#URIs:}") ;;
			Suites:*) suites=$(xargs <<<"${line#Suites:}") ;;
			"")
				if [[ " $suites " == *" $SUITE "* && -n $uris ]]; then
					echo "${uris%% *}"
					return 0
				fi
				uris="" suites=""
				;;
			esac
		done <"$f"
		if [[ " $suites " == *" $SUITE "* && -n $uris ]]; then
			echo "${uris%% *}"
			return 0
		fi
	done
	# One-line format: "deb [opts] URI SUITE COMPONENTS...".
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[[ -f $f ]] || continue
		while read -r line; do
			line=${line%%#*}
			line=$(sed -E 's/\[[^]]*\]//' <<<"$line")
			read -r -a w <<<"$line"
			if [[ ${#w[@]} -ge 3 && ${w[0]} == deb && ${w[2]} == "$SUITE" ]]; then
				echo "${w[1]}"
				return 0
			fi
		done <"$f"
	done
	return 1
}

MIRROR=${MIRROR:-$(find_mirror)} || die "no apt source for suite '$SUITE' found in /etc/apt; set MIRROR=http://host/debian"
[[ -n $MIRROR ]] || die "no apt source for suite '$SUITE' found in /etc/apt; set MIRROR=http://host/debian"
echo "debootstrap-jupyter: using mirror $MIRROR" >&2

# Keep the rootfs out of /tmp if TMPDIR points elsewhere; it is ~400 MB.
ROOT=$(mktemp -d "${TMPDIR:-/tmp}/jupyter-rootfs.XXXXXX")
# mktemp makes the directory 0700 and tar records that mode for "./", which
# would become the image's "/": uid 1000 could then not reach anything.
chmod 0755 "$ROOT"

# Unmount before deleting: `rm -rf` through a live /proc bind would try to
# delete files of the host's /proc (harmlessly failing, but noisily) and a
# leftover mount keeps the directory busy forever. The trap runs on every exit
# path, including errors under `set -e` and signals.
cleanup() {
	local rc=$?
	for m in "$ROOT/proc" "$ROOT/sys" "$ROOT/dev/pts"; do
		if mountpoint -q "$m" 2>/dev/null; then
			umount "$m" 2>/dev/null || umount -l "$m" || true
		fi
	done
	rm -rf --one-file-system "$ROOT"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

KEYRING_ARGS=()
if [[ -f /usr/share/keyrings/debian-archive-keyring.gpg ]]; then
	KEYRING_ARGS=(--keyring=/usr/share/keyrings/debian-archive-keyring.gpg)
fi

debootstrap --variant=minbase "${KEYRING_ARGS[@]}" "$SUITE" "$ROOT" "$MIRROR"

# Some postinst scripts (python byte-compilation, ca/locale helpers) read
# /proc; mount it only for the install step.
mount -t proc proc "$ROOT/proc"

# Stop maintainer scripts from trying to start daemons inside the chroot.
printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"
chmod +x "$ROOT/usr/sbin/policy-rc.d"

in_chroot() {
	chroot "$ROOT" /usr/bin/env -i \
		PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		DEBIAN_FRONTEND=noninteractive \
		LANG=C.UTF-8 \
		"$@"
}

in_chroot apt-get update
in_chroot apt-get install -y --no-install-recommends "${PACKAGES[@]}"
# The image runs as uid 1000 with HOME=/home/jovyan (the convention of the
# Jupyter docker-stacks images the portal's catalog is modelled on).
in_chroot useradd --uid 1000 --user-group --create-home --home-dir /home/jovyan --shell /bin/bash jovyan

# Shrink the image: package lists, downloaded .debs, documentation and
# message translations (~60 MB) are useless in a test container.
in_chroot apt-get clean
rm -rf "$ROOT"/var/lib/apt/lists/* "$ROOT"/var/cache/apt/*.bin "$ROOT"/var/log/apt/* "$ROOT"/var/log/dpkg.log
rm -rf "$ROOT"/usr/share/doc/* "$ROOT"/usr/share/man/* "$ROOT"/usr/share/info/* "$ROOT"/usr/share/locale/*
rm -f "$ROOT/usr/sbin/policy-rc.d"

umount "$ROOT/proc"

# --numeric-owner: the host's passwd must not remap uids (jovyan is 1000 in
# the image whatever it is on the host). Write to a temp name and rename so a
# failed build never leaves a truncated tar that looks finished.
tar --numeric-owner --xattrs -C "$ROOT" -cf "$OUT_TAR.partial" .
mv -f "$OUT_TAR.partial" "$OUT_TAR"
echo "debootstrap-jupyter: wrote $OUT_TAR ($(du -h "$OUT_TAR" | cut -f1))" >&2
