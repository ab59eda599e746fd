#!/usr/bin/env bash
# Fetches a Debian kernel package once into CACHE/debs and extracts its
# kernel, config and the named modules plus their dependencies into
# CACHE/NAME: vmlinuz, config, modules/*.ko, modules.order (load order).
# Usage: tests/kernels/fetch.sh CACHE NAME PACKAGE=VERSION [MODULE...]
# Exit: 0 ready, 77 cannot fetch (reason on stderr), 1 broken package.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 CACHE NAME PACKAGE=VERSION [MODULE...]" >&2; exit 1; }
cache=$1 name=$2 spec=$3
shift 3
pkg=${spec%%=*} ver=${spec#*=}
out=$cache/$name
stamp="$spec $*"

[ "$(cat "$out/.stamp" 2>/dev/null)" = "$stamp" ] && exit 0

fetch_deb() {
	local dir=$cache/debs deb log
	mkdir -p "$dir"
	deb=$(ls "$dir/${pkg}_"*"${ver#*:}_"*.deb 2>/dev/null | head -1) || true
	if [ -z "$deb" ]; then
		# Into a temporary dir: an interrupted download never looks cached.
		mkdir -p "$tmp/dl"
		log=$(cd "$tmp/dl" && apt-get download -q -o APT::Sandbox::User=root "$spec" 2>&1) ||
		log=$( (apt-get update -qq && cd "$tmp/dl" &&
			apt-get download -q -o APT::Sandbox::User=root "$spec") 2>&1) || {
			echo "cannot fetch $spec ($(tail -1 <<<"$log")); offline? put the .deb in $dir" >&2
			exit 77
		}
		mv "$tmp"/dl/*.deb "$dir/"
		deb=$(ls "$dir/${pkg}_"*"${ver#*:}_"*.deb | head -1)
	fi
	echo "$deb"
}

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

# The depends= field of a module's .modinfo section.
module_deps() {
	objcopy -O binary --only-section=.modinfo "$1" /dev/stdout 2>/dev/null |
		tr '\0' '\n' | sed -n 's/^depends=//p' | tr ',' ' '
}

# Breadth-first over dependencies, one package pass per level.
extract_modules() {
	local deb=$1 files=$2 level=("${@:3}") next path m d
	mkdir -p "$out/modules"
	while [ ${#level[@]} -gt 0 ]; do
		local paths=()
		for m in "${level[@]}"; do
			path=$(grep -E "/(${m//[-_]/[-_]})\.ko(\.(xz|zst|gz))?$" <<<"$files" | head -1) || true
			[ -n "$path" ] || { echo "module $m not in $pkg" >&2; exit 1; }
			paths+=("$path")
		done
		extract "$deb" "$tmp" "${paths[@]}"
		next=()
		for path in "${paths[@]}"; do
			m=$(basename "${path%%.ko*}")
			unpack_module "$tmp/$path" > "$out/modules/$m.ko"
			deps[$m]=$(module_deps "$out/modules/$m.ko")
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

main() {
	local deb files kpath m
	mkdir -p "$cache"
	# Concurrent runs share the cache: one fetches, the others wait.
	exec 9>"$cache/.lock"
	flock 9
	[ "$(cat "$out/.stamp" 2>/dev/null)" != "$stamp" ] || exit 0
	tmp=$(mktemp -d "$cache/.extract.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	deb=$(fetch_deb)
	files=$(list_files "$deb")
	kpath=$(grep -E '^boot/vmlinuz-' <<<"$files" | head -1)
	[ -n "$kpath" ] || { echo "$deb holds no boot/vmlinuz-*" >&2; exit 1; }
	rm -rf "$out"
	mkdir -p "$out"
	extract "$deb" "$tmp" "$kpath" "boot/config-${kpath#boot/vmlinuz-}"
	mv "$tmp/$kpath" "$out/vmlinuz"
	mv "$tmp/boot/config-${kpath#boot/vmlinuz-}" "$out/config"
	if [ $# -gt 0 ]; then
		extract_modules "$deb" "$files" "$@"
		for m in "$@"; do load_order "$m"; done > "$out/modules.order"
	fi
	echo "${kpath#boot/vmlinuz-}" > "$out/release"
	echo "$stamp" > "$out/.stamp"
}

main "$@"
