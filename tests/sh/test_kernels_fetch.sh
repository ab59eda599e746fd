#!/usr/bin/env bash
# tests/kernels/fetch.sh on a kernel package built here: arm64 modules
# (foreign to every host tool but modinfo), an xz bzImage with a PVH note,
# a fake apt-get (offline, good or truncated downloads).  fetch.sh once ran
# objcopy with /dev/stdout as its output file and, on a foreign module,
# deleted /dev/stdout: it runs here with a private /dev, which must be
# unchanged afterwards, and the foreign modules' dependencies must be read.
set -u
cd "$(dirname "$0")/../.." || exit 1
fetch=$PWD/tests/kernels/fetch.sh
tmp=$(mktemp -d /tmp/kstats-test-$$-fetch-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT	# the EXIT trap cleans up; bash runs it on exit only
trap 'exit 143' TERM
arch=$(dpkg --print-architecture)
pkg=linux-image-kstatsfake
spec=$pkg=1.0
deb=$pkg\_1.0_$arch.deb
cache=$tmp/cache

check() {	# name, then a command that must succeed
	local name=$1
	shift
	if "$@"; then echo "PASS: $name"; else echo "FAIL: $name: $*"; fi
}

for tool in aarch64-linux-gnu-gcc modinfo unshare dpkg-deb xz zstd; do
	command -v $tool >/dev/null || { echo "SKIP: fetch: no $tool (make deps)"; exit 0; }
done

# An arm64 module whose .modinfo says depends=DEPS.
module() {	# name deps
	printf 'static const char m[] __attribute__((section(".modinfo"), used)) =\n"license=GPL\\0depends=%s\\0name=%s";\n' \
		"$2" "$1" > "$tmp/$1.c"
	aarch64-linux-gnu-gcc -c "$tmp/$1.c" -o "$tmp/$1.ko"
}

# Four bytes, little-endian.
le32() {
	printf "$(printf '\\%03o' $(($1 & 255)) $(($1 >> 8 & 255)) $(($1 >> 16 & 255)) $(($1 >> 24)))"
}

# A bzImage header (setup_sects 1, HdrS, payload at 1024) around an xz ELF
# with a Xen PVH entry note (type 18), and the size trailer.
bzimage() {
	local img=$tmp/root/boot/vmlinuz-9.9.9-fake
	printf '.pushsection .note.Xen, "a"\n.long 4, 4, 18\n.asciz "Xen"\n.long 0x1000000\n.popsection\n' |
		gcc -c -x assembler - -o "$tmp/elf"
	{ xz -c --check=crc32 "$tmp/elf"; le32 "$(stat -c %s "$tmp/elf")"; } > "$tmp/payload"
	head -c 1024 /dev/zero > "$img"
	printf '\001' | dd of="$img" bs=1 seek=$((0x1f1)) conv=notrunc status=none
	printf HdrS | dd of="$img" bs=1 seek=$((0x202)) conv=notrunc status=none
	{ le32 0; le32 "$(stat -c %s "$tmp/payload")"; } |
		dd of="$img" bs=1 seek=$((0x248)) conv=notrunc status=none
	cat "$tmp/payload" >> "$img"
}

build_deb() {
	local root=$tmp/root mods=$tmp/root/lib/modules/9.9.9-fake/kernel/drivers
	mkdir -p "$root/DEBIAN" "$root/boot" "$mods/a" "$mods/b"
	printf 'Package: %s\nVersion: 1.0\nArchitecture: %s\nMaintainer: t <t@t>\nDescription: t\n' \
		"$pkg" "$arch" > "$root/DEBIAN/control"
	echo "CONFIG_FAKE=y" > "$root/boot/config-9.9.9-fake"
	bzimage
	module mod_a dep_b,dep_c && xz -c "$tmp/mod_a.ko" > "$mods/a/mod_a.ko.xz"
	module dep_b dep_c && cp "$tmp/dep_b.ko" "$mods/b/"
	module dep_c "" && zstd -q "$tmp/dep_c.ko" -o "$mods/a/dep_c.ko.zst"
	printf 'kernel/drivers/a/built_in.ko\n' > "$mods/../../modules.builtin"
	dpkg-deb --root-owner-group -Zxz --build "$root" "$tmp/$deb" >/dev/null
}

# A fake apt-get (behind tests/kernels/apt.sh): MODE offline fails, good downloads the package, broken
# downloads half of it.  Every call is logged.
fake_apt() {
	mkdir -p "$tmp/bin"
	cat > "$tmp/bin/apt-get" <<-EOF
	#!/bin/sh
	echo "\$*" >> "$tmp/apt.log"
	[ "\$1" = -c ] && shift 2
	[ "\$1" = download ] || [ "\$1" = update ] || exit 100
	case \$MODE in
	offline) echo "E: network down" >&2; exit 100 ;;
	good)    [ "\$1" = update ] || cp "$tmp/$deb" . ;;
	broken)  [ "\$1" = update ] || head -c 2000 "$tmp/$deb" > "$deb" ;;
	esac
	EOF
	chmod +x "$tmp/bin/apt-get"
}

# fetch.sh with a private /dev (a tmpfs of a few nodes and links); prints
# "dev changed" if /dev differs afterwards.  Its exit status is fetch.sh's.
run_fetch() {	# mode module...
	MODE=$1 PATH=$tmp/bin:$PATH unshare -m bash -c '
		mount -t tmpfs kstats-test /dev || exit 99
		mknod -m 666 /dev/null c 1 3
		ln -s /proc/self/fd/0 /dev/stdin
		ln -s /proc/self/fd/1 /dev/stdout
		ln -s /proc/self/fd/2 /dev/stderr
		before=$(ls -la /dev)
		"$@"
		rc=$?
		[ "$(ls -la /dev)" = "$before" ] || echo "dev changed: $(ls /dev)"
		exit $rc' fetch "$fetch" "$cache" fake "$spec" "${@:2}" > "$tmp/out" 2>&1
}

build_deb || { echo "FAIL: fetch: cannot build the test package"; exit 0; }
fake_apt
mkdir -p "$cache/debs"
cp "$tmp/$deb" "$cache/debs/"

run_fetch offline mod_a
rc=$?
[ $rc -ne 99 ] || { echo "SKIP: fetch: cannot mount a private /dev ($(cat "$tmp/out"))"; exit 0; }
check "foreign modules extracted from the cached package, offline" [ $rc -eq 0 ]
check "/dev untouched while reading arm64 modules" [ -z "$(grep "dev changed" "$tmp/out")" ]
check "arm64 dependencies read (load order dep_c dep_b mod_a)" \
	[ "$(tr '\n' ' ' 2>/dev/null < "$cache/fake/modules.order")" = "dep_c dep_b mod_a " ]
check "modules unpacked (xz, zstd, plain)" \
	cmp -s "$cache/fake/modules/dep_c.ko" "$tmp/dep_c.ko"
check "bzImage's PVH kernel ELF extracted and size-checked" \
	cmp -s "$cache/fake/vmlinux" "$tmp/elf"
check "a cached package needs no apt-get" [ ! -e "$tmp/apt.log" ]

# An interrupted run: a scratch dir left, the stamp never written.
mkdir -p "$cache/.tmp.dead/new" && rm "$cache/fake/.stamp"
run_fetch offline mod_a
check "a run after an interrupted one works offline" [ $? -eq 0 ]
check "it removes what the interrupted run left" [ ! -e "$cache/.tmp.dead" ]

rm "$cache/debs/$deb"
run_fetch offline dep_b
check "offline without the package: exit 77, says where to put it" \
	[ $? -eq 77 -a -n "$(grep -l "put the .deb in $cache/debs" "$tmp/out")" ]
run_fetch broken dep_b
check "a truncated download: exit 1" [ $? -eq 1 ]
check "a truncated download never enters the cache" [ ! -e "$cache/debs/$deb" ]
run_fetch good dep_b
check "a good download enters the cache" [ $? -eq 0 -a -f "$cache/debs/$deb" ]
check "only the named module and its dependencies" \
	[ "$(tr '\n' ' ' < "$cache/fake/modules.order")" = "dep_c dep_b " ]
run_fetch good dep_b built_in
check "a built-in module is no error and stays out of the load order" \
	[ $? -eq 0 -a "$(tr '\n' ' ' < "$cache/fake/modules.order")" = "dep_c dep_b " ]
check "apt-get only with the private configuration in the cache" \
	[ -z "$(grep -v "^-c $cache/apt/apt.conf " "$tmp/apt.log")" ]
check "which names the cache's own sources, lists and status" \
	grep -q "^Dir::State::status \"$cache/apt/state/status\";" "$cache/apt/apt.conf"
run_fetch good not_there
check "a module neither shipped nor built in: exit 1, named" \
	[ $? -eq 1 -a -n "$(grep -l "module not_there not in $pkg" "$tmp/out")" ]
