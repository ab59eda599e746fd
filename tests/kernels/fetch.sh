#!/usr/bin/env bash
# Fetches a Debian kernel package once into CACHE/debs and extracts its
# kernel, config and the named modules plus their dependencies into
# CACHE/NAME: vmlinuz, config, modules/*.ko, modules.order (load order),
# release.  Works for any architecture's package: nothing here runs the
# package's code or an architecture-specific tool on it.
# Usage: tests/kernels/fetch.sh CACHE NAME PACKAGE[:ARCH]=VERSION [MODULE...]
# Exit: 0 ready, 77 cannot fetch (reason on stderr), 1 broken package.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 CACHE NAME PACKAGE[:ARCH]=VERSION [MODULE...]" >&2; exit 1; }
cache=$1 name=$2 spec=$3
shift 3
out=$cache/$name
stamp="$spec $*"
# shellcheck source=tests/kernels/debs.sh
. "$(dirname "$0")/debs.sh"

[ "$(cat "$out/.stamp" 2>/dev/null)" = "$stamp" ] && exit 0

# Paths in the package, one per line, without the leading "./".
list_files() {
	dpkg-deb --fsys-tarfile "$1" | tar -t | sed 's|^\./||'
}

extract() {
	local deb=$1 dest=$2
	shift 2
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dest" "${@/#/./}"
}

unpack_module() {
	case $1 in
	*.ko.xz)  xz -dc "$1" ;;
	*.ko.zst) zstd -dcq "$1" ;;
	*.ko.gz)  gzip -dc "$1" ;;
	*.ko)     cat "$1" ;;
	esac
}

# The depends= field of a module's .modinfo.  modinfo reads any
# architecture's ELF and writes nothing but its stdout.
module_deps() {
	local deps
	deps=$(modinfo -F depends "$1") || { echo "modinfo cannot read $1" >&2; exit 1; }
	echo "${deps//,/ }"
}

# Breadth-first over dependencies, one package pass per level, into $new.
extract_modules() {
	local deb=$1 files=$2 level=("${@:3}") next path m d
	mkdir -p "$new/modules"
	while [ ${#level[@]} -gt 0 ]; do
		local paths=()
		for m in "${level[@]}"; do
			path=$(grep -E "/(${m//[-_]/[-_]})\.ko(\.(xz|zst|gz))?$" <<<"$files" | head -1) || true
			[ -n "$path" ] || { echo "module $m not in $(deb_name "$spec")" >&2; exit 1; }
			paths+=("$path")
		done
		extract "$deb" "$tmp" "${paths[@]}"
		next=()
		for path in "${paths[@]}"; do
			m=$(basename "${path%%.ko*}")
			unpack_module "$tmp/$path" > "$new/modules/$m.ko"
			deps[$m]=$(module_deps "$new/modules/$m.ko")
			for d in ${deps[$m]}; do
				[ -n "${deps[$d]+set}" ] || { deps[$d]=; next+=("$d"); }
			done
		done
		level=("${next[@]}")
	done
}

# Depth-first: every module after its dependencies.
load_order() {
	local m=$1 d
	[ -z "${done_mods[$m]:-}" ] || return 0
	done_mods[$m]=1
	for d in ${deps[$m]}; do load_order "$d"; done
	echo "$m"
}

declare -A deps=() done_mods=()
tmp=

# Extracts into $new beside $out, then replaces $out: never half a kernel.
main() {
	local deb files kpath m
	deb_begin "$cache"
	[ "$(cat "$out/.stamp" 2>/dev/null)" != "$stamp" ] || exit 0
	deb=$(deb_fetch "$cache" "$spec")
	files=$(list_files "$deb")
	kpath=$(grep -E '^boot/vmlinuz-' <<<"$files" | head -1) || true
	[ -n "$kpath" ] || { echo "$deb holds no boot/vmlinuz-*" >&2; exit 1; }
	new=$tmp/new
	mkdir -p "$new"
	extract "$deb" "$tmp" "$kpath" "boot/config-${kpath#boot/vmlinuz-}"
	mv "$tmp/$kpath" "$new/vmlinuz"
	mv "$tmp/boot/config-${kpath#boot/vmlinuz-}" "$new/config"
	if [ $# -gt 0 ]; then
		extract_modules "$deb" "$files" "$@"
		for m in "$@"; do load_order "$m"; done > "$new/modules.order"
	fi
	echo "${kpath#boot/vmlinuz-}" > "$new/release"
	echo "$stamp" > "$new/.stamp"
	rm -rf "$out"
	mv "$new" "$out"
}

main "$@"
