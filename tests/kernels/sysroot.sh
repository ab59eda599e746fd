#!/usr/bin/env bash
# The sysroot for cross-building the lab's static tools for ARCH (and its
# static busybox): the ARCH packages' files, unpacked with dpkg-deb -x into
# CACHE/sysroot-ARCH, never installed beside the host's.  The packages come
# once into CACHE/debs (tests/kernels/debs.sh), so later runs are offline.
# Usage: tests/kernels/sysroot.sh CACHE ARCH
# Exit: 0 ready, 77 cannot fetch (reason on stderr), 1 broken package.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 CACHE ARCH" >&2; exit 1; }
cache=$1 arch=$2
out=$cache/sysroot-$arch
# Static libraries and headers the tools link (Makefile LDLIBS, mk/*.mk),
# libdrm's uapi headers for the guest driver, and the guest's shell.
pkgs="libbpf-dev libelf-dev zlib1g-dev libjson-c-dev libprotobuf-c-dev libdrm-dev busybox-static"
# shellcheck source=tests/kernels/debs.sh
. "$(dirname "$0")/debs.sh"

main() {
	local p deb debs=() stamp
	deb_begin "$cache"
	for p in $pkgs; do
		deb=$(deb_fetch "$cache" "$p:$arch")
		debs+=("$deb")
	done
	stamp=$(basename -a "${debs[@]}")
	[ "$(cat "$out/.stamp" 2>/dev/null)" != "$stamp" ] || exit 0
	mkdir "$tmp/new"
	for p in "${debs[@]}"; do dpkg-deb -x "$p" "$tmp/new"; done
	echo "$stamp" > "$tmp/new/.stamp"
	rm -rf "$out"
	mv "$tmp/new" "$out"
}

main
