#!/usr/bin/env bash
# Builds the lab guest's initramfs (uncompressed newc cpio: TCG unpacks it
# fastest): static busybox, the static tools and test driver from
# TOOLS (the guest's architecture), the unchanged BUILD/bpf objects, and
# the kernel's modules and config.
# Usage: tests/kernels/initramfs.sh BUILD KERNEL_DIR OUT.cpio
# Environment: TOOLS (default BUILD/static), BUSYBOX (default /bin/busybox).
set -euo pipefail
build=$1 kdir=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
tools=${TOOLS:-$build/static}
busybox=${BUSYBOX:-/bin/busybox}

if readelf -l "$busybox" 2>/dev/null | grep -q 'INTERP'; then
	echo "$busybox is not static: apt-get install busybox-static" >&2
	exit 1
fi
for t in kstats-loader kstats kstats-guest; do
	[ -x "$tools/$t" ] || { echo "no $tools/$t: make static-tools" >&2; exit 1; }
done
ls "$build"/bpf/*.bpf >/dev/null 2>&1 || { echo "no $build/bpf/*.bpf: make bpf" >&2; exit 1; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
trap 'exit 130' INT	# the EXIT trap cleans up; bash runs it on exit only
trap 'exit 143' TERM
mkdir -p "$stage"/{bin,boot,bpf,dev,etc,proc,sys,tmp,lib/modules}
cp "$busybox" "$stage/bin/busybox"
cp "$tools"/{kstats-loader,kstats,kstats-guest} "$stage/bin/"
cp "$build"/bpf/*.bpf "$stage/bpf/"
cp "$here/guest/init.sh" "$stage/init"
chmod 755 "$stage/init"
: > "$stage/lib/modules/order"
if [ -s "$kdir/modules.order" ]; then
	cp "$kdir"/modules/*.ko "$stage/lib/modules/"
	cp "$kdir/modules.order" "$stage/lib/modules/order"
fi
[ ! -f "$kdir/config" ] || cp "$kdir/config" "$stage/boot/config"
printf 'root:x:0:0:root:/:/bin/sh\n' > "$stage/etc/passwd"
printf 'root:x:0:\nkstats:x:900:\n' > "$stage/etc/group"
# The kernel's own initramfs usually has it; without it init has no console.
mknod -m 600 "$stage/dev/console" c 5 1 2>/dev/null || true
# The loader refuses objects that anyone but root could have written.
chmod -R go-w "$stage"
mkdir -p "$(dirname "$out")"
(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) > "$out.tmp"
mv "$out.tmp" "$out"
