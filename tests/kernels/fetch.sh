#!/usr/bin/env bash
# Fetches a Debian kernel package once into CACHE/debs and extracts its
# kernel, config and the named modules plus their dependencies into
# CACHE/NAME: vmlinuz, config, modules/*.ko, modules.order (load order),
# release, and for x86 a vmlinux that qemu boots faster.  Works for any
# architecture's package: nothing here runs the package's code or an
# architecture-specific tool on it.
# Usage: tests/kernels/fetch.sh CACHE NAME PACKAGE[:ARCH]=VERSION [MODULE...]
# Exit: 0 ready, 77 cannot fetch (reason on stderr), 1 broken package.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 CACHE NAME PACKAGE[:ARCH]=VERSION [MODULE...]" >&2; exit 1; }
cache=$1 name=$2 spec=$3
shift 3
out=$cache/$name
stamp="v2 $spec $*"	# v2: with vmlinux
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

# The unsigned little-endian number of width bytes at offset in file.
le_number() {
	od -An -tu1 -j "$2" -N "$3" "$1" | awk '{for (i = NF; i > 0; i--) v = v * 256 + $i} END {print v + 0}'
}

# x86: the kernel ELF inside a bzImage (the boot protocol's payload_offset
# and payload_length; the payload ends with the decompressed size),
# decompressed here, so that qemu boots it through its PVH entry instead of
# emulating the decompressor under TCG (a third of a guest's time).  No
# vmlinux without a PVH entry (Xen note 18): the bzImage boots then.
pvh_kernel() {
	local bz=$1 out=$2 sects start len size unpack
	[ "$(od -An -c -j $((0x202)) -N4 "$bz" | tr -d ' ')" = HdrS ] || return 0
	sects=$(le_number "$bz" $((0x1f1)) 1)
	[ "$sects" -ne 0 ] || sects=4	# the boot protocol's old default
	start=$(( (sects + 1) * 512 + $(le_number "$bz" $((0x248)) 4) ))
	len=$(le_number "$bz" $((0x24c)) 4)
	size=$(le_number "$bz" $((start + len - 4)) 4)
	case $(od -An -tx1 -j "$start" -N4 "$bz" | tr -d ' ') in
	fd377a58) unpack="xz -dc --single-stream" ;;
	02214c18) unpack="lz4 -dc" ;;
	28b52ffd) unpack="zstd -dcq" ;;
	1f8b*)    unpack="gzip -dc" ;;
	*) return 0 ;;
	esac
	# The size trailer makes the decompressors complain; the size check decides.
	tail -c +$((start + 1)) "$bz" | head -c "$len" | $unpack > "$out" 2>/dev/null || true
	if [ "$(stat -c %s "$out")" != "$size" ] ||
	   ! readelf -n "$out" | grep -E '^ *Xen .*\(0x00000012\)' >/dev/null; then
		rm -f "$out"
	fi
}

# Whether the kernel builds in a module (regex re): its modules.builtin,
# read once.
is_builtin() {
	local path
	if [ -z "${builtin_list+set}" ]; then
		builtin_list=
		path=$(grep -E '^(usr/)?lib/modules/[^/]+/modules\.builtin$' <<<"$files" | head -1) || true
		if [ -n "$path" ]; then
			extract "$deb" "$tmp" "$path"
			builtin_list=$(cat "$tmp/$path")
		fi
	fi
	grep -qE "$1" <<<"$builtin_list"
}

# Breadth-first over dependencies, one package pass per level, into $new.
# A module the kernel builds in needs nothing: it stays out of the load order.
extract_modules() {
	local deb=$1 files=$2 level=("${@:3}") next path m d re
	mkdir -p "$new/modules"
	while [ ${#level[@]} -gt 0 ]; do
		local paths=()
		for m in "${level[@]}"; do
			re="/(${m//[-_]/[-_]})\.ko(\.(xz|zst|gz))?$"
			path=$(grep -E "$re" <<<"$files" | head -1) || true
			if [ -z "$path" ] && is_builtin "$re"; then
				builtin[$m]=1 deps[$m]=
				continue
			fi
			[ -n "$path" ] || { echo "module $m not in $(deb_name "$spec") nor built into it" >&2; exit 1; }
			paths+=("$path")
		done
		[ ${#paths[@]} -gt 0 ] || break
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
	[ -n "${builtin[$m]:-}" ] || echo "$m"
}

declare -A deps=() done_mods=() builtin=()
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
	pvh_kernel "$new/vmlinuz" "$new/vmlinux"
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
