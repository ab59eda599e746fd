#!/usr/bin/env bash
# The loader's cost at boot under systemd, against bench/loader/min_loader
# run the same way (doc/boot-cost.md): the system test's Debian 12 guest
# (tests/system/image.sh, Debian's 6.1 cloud kernel, qemu TCG), the package
# installed, and at every boot both kernelstats-loader.service and
# kstats-min-loader.service (min_loader on the same objects and programs,
# same [Service] sandbox, its own pin directory), one after the other; the
# order flips at each boot.  Per boot, each unit's activation time as
# systemd-analyze blame computes it, and its CPU time; then, after boot, both
# run by hand three times, interleaved, outside any unit.  Prints
# bench/lib/bstat.h RESULT lines.
# Usage: bench/boot/run.sh [BUILD]    (root; make bench-boot builds what it needs)
# Environment: BOOTS (4 measured boots after the setup boot), BOOT_DEB (the
# package; default BUILD/deb/kernelstats_*.deb), BOOT_BASE (a base image;
# default: tests/system/image.sh SYSTEM_CACHE), SYSTEM_CACHE (build/system),
# KERNELS_CACHE (build/kernels), BOOT_TIMEOUT (s per boot, 600); BOOT_DIAG=1:
# after each boot's measurement, guest.sh's diag() (where the by-hand gap
# goes, "# diag" lines), with the other loader builds of BOOT_DIAG_LOADERS
# ("NAME=PATH ...") run beside the package's.
# Exit: 0 measured, 1 a boot failed, 2 not root, 77 missing tool, image or kernel.
set -eu
BUILD=${1:-build}
BOOTS=${BOOTS:-4}
timeout_s=${BOOT_TIMEOUT:-600}
cd "$(dirname "$0")/../.."
. bench/lib/bstat.sh
[ "$(id -u)" -eq 0 ] || { echo "bench-boot: needs root" >&2; exit 2; }
for t in qemu-system-x86_64 qemu-img mke2fs; do
	command -v "$t" >/dev/null || { echo "bench-boot: no $t (make deps installs it)" >&2; exit 77; }
done
deb=${BOOT_DEB:-$(ls "$BUILD"/deb/kernelstats_*_amd64.deb 2>/dev/null | head -1)}
[ -f "$deb" ] || { echo "bench-boot: no package in $BUILD/deb (make deb)" >&2; exit 1; }
[ -x "$BUILD/bench/loader/min_loader" ] ||
	{ echo "bench-boot: no $BUILD/bench/loader/min_loader (make bench-build)" >&2; exit 1; }
kcache=${KERNELS_CACHE:-build/kernels}
spec=$(awk '$1 == "debian-6.1-cloud" {print $3}' tests/kernels/matrix)
tests/kernels/fetch.sh "$kcache" debian-6.1-cloud "$spec" || exit
kernel=$(ls "$kcache"/debian-6.1-cloud/vmlinu[xz] | head -1)
base=${BOOT_BASE:-$(tests/system/image.sh "${SYSTEM_CACHE:-build/system}")} || exit
[ -f "$base" ] || { echo "bench-boot: no base image '$base'" >&2; exit 1; }

tmp=$(mktemp -d /tmp/kstats-bench-boot-XXXXXX)
qpid=
trap '[ -n "$qpid" ] && kill -9 "$qpid" 2>/dev/null; rm -rf "$tmp"' EXIT
mkdir "$tmp/disk"
cp bench/boot/guest.sh "$tmp/disk/guest.sh"
cp "$deb" "$tmp/disk/kernelstats.deb"
cp "$BUILD/bench/loader/min_loader" "$tmp/disk/"
if [ -n "${BOOT_DIAG:-}" ]; then	# guest.sh diag()
	mkdir "$tmp/disk/diag"
	touch "$tmp/disk/diag/on"
	cp "$BUILD/bench/loader/btf_parse" "$tmp/disk/diag/"
	for l in ${BOOT_DIAG_LOADERS:-}; do cp "${l#*=}" "$tmp/disk/diag/loader-${l%%=*}"; done
	st=$(command -v strace || true)	# the host's: runs in the guest if both are Debian 12
	# shellcheck disable=SC2046
	[ -n "$st" ] && cp "$st" $(ldd "$st" | awk '/libunwind/ { print $3 }') "$tmp/disk/diag/"
fi
mke2fs -q -t ext4 -L systest -d "$tmp/disk" "$tmp/systest.img" 64M >/dev/null
qemu-img create -q -f qcow2 -F raw -b "$(realpath "$base")" "$tmp/run.qcow2"

boot() {	# phase: the console in $tmp/<phase>.log
	local log=$tmp/$1.log i
	# -cx16: qemu 7.2's TCG breaks SLUB's cmpxchg16b (doc/kernel-matrix.md).
	qemu-system-x86_64 -accel tcg -cpu qemu64,-cx16 -m 1024 -smp 1 -display none \
		-nic none -monitor none -no-reboot -serial "file:$log" -kernel "$kernel" \
		-append "root=/dev/nvme0n1 ro console=ttyS0 loglevel=1 panic=-1 quiet systemd.show_status=0 kstats_boot.phase=${1%%[0-9]*}" \
		-device nvme,id=nvme0,serial=bench -device nvme-ns,drive=root,bus=nvme0,nsid=1 \
		-drive "file=$tmp/run.qcow2,if=none,id=root,format=qcow2" \
		-drive "file=$tmp/systest.img,if=none,id=t,format=raw,readonly=on" \
		-device nvme-ns,drive=t,bus=nvme0,nsid=2 </dev/null >"$log.qemu" 2>&1 &
	qpid=$!
	for ((i = 0; i < timeout_s; i++)); do
		kill -0 "$qpid" 2>/dev/null || break
		sleep 1
	done
	kill -9 "$qpid" 2>/dev/null || true
	wait "$qpid" 2>/dev/null || true
	qpid=
	sed -i 's/\r$//' "$log"
	grep -q "^@@ END" "$log" && ! grep -q '^@@ FAIL' "$log" && return
	echo "bench-boot: boot $1 failed:" >&2
	grep -h '^@@ FAIL' "$log" >&2 || tail -20 "$log" >&2
	exit 1
}

loadavg() { cut -d' ' -f1 /proc/loadavg; }

boot setup
sed -n 's/^@@ INFO: objects: */# objects: /p' "$tmp/setup.log"
for f in loader min ratio ratio_After ratio_Before cpu_ratio warm_loader warm_min; do : >"$tmp/$f"; done

# The unit that starts first pays the boot's cold caches and the units
# started beside it: each loader is also set against the other at the same
# place in the boot, as the ratio of the two medians (wall and CPU time).
position() {	# first|second
	local what l m
	for what in wall cpu; do
		[ -s "$tmp/loader_$1_$what" ] && [ -s "$tmp/min_$1_$what" ] || continue
		l=$(bstat_result x x "$tmp/loader_$1_$what" | cut -f5)
		m=$(bstat_result x x "$tmp/min_$1_$what" | cut -f5)
		awk -v l="$l" -v m="$m" -v k="boot.loader_vs_min.$1_unit.$what" \
			'BEGIN { printf "RESULT\t%s\tx\t%.6g\n", k, l / m }'
	done
}
for i in $(seq "$BOOTS"); do
	l0=$(loadavg)
	boot "measure$i"
	# "@@ RESULT min_<After|Before> <loader us> <min us> <programs> <loader
	# CPU ns> <min CPU ns>"; CPU time is "[not set]" without CPU accounting.
	read -r order lus mus progs lcpu mcpu < <(sed -n 's/^@@ RESULT min_//p' "$tmp/measure$i.log")
	awk -v l="$lcpu" -v m="$mcpu" 'BEGIN { if (l + 0 && m + 0) print l / m }' >>"$tmp/cpu_ratio"
	# "@@ WARM <3 loader ms> <3 min ms>": by hand after boot, interleaved.
	sed -n 's/^@@ WARM //p' "$tmp/measure$i.log" | tr ' ' '\n' | tee "$tmp/warm" |
		head -3 >>"$tmp/warm_loader"
	tail -3 "$tmp/warm" >>"$tmp/warm_min"
	grep -h '^@@ DIAG' "$tmp/measure$i.log" | sed "s/^@@ DIAG/# diag $i:/"
	[ "$order" = After ] && lp=first mp=second || lp=second mp=first
	echo "$lus" | awk '{ print $1 / 1000 }' | tee -a "$tmp/loader" >>"$tmp/loader_${lp}_wall"
	echo "$mus" | awk '{ print $1 / 1000 }' | tee -a "$tmp/min" >>"$tmp/min_${mp}_wall"
	awk -v c="$lcpu" 'BEGIN { if (c + 0) print c / 1e6 }' >>"$tmp/loader_${lp}_cpu"
	awk -v c="$mcpu" 'BEGIN { if (c + 0) print c / 1e6 }' >>"$tmp/min_${mp}_cpu"
	awk -v l="$lus" -v m="$mus" 'BEGIN { print l / m }' | tee -a "$tmp/ratio_$order" >>"$tmp/ratio"
	echo "# boot $i: min_loader ${order,,} the loader; loader $((lus / 1000)) ms," \
		"min $((mus / 1000)) ms, ratio $(tail -1 "$tmp/ratio");" \
		"CPU $(awk -v l="$lcpu" -v m="$mcpu" 'BEGIN { print l / 1e6 " vs " m / 1e6 }') ms; after boot by hand $(paste -sd' ' "$tmp/warm") ms;" \
		"$progs programs each;" \
		"host load $l0 -> $(loadavg); blame: $(sed -n 's/^@@ BLAME //p' "$tmp/measure$i.log");" \
		"$(sed -n 's/^@@ TIME //p' "$tmp/measure$i.log")"
done
bstat_result boot.loader_vs_min x "$tmp/ratio"
for o in After Before; do
	[ -s "$tmp/ratio_$o" ] && bstat_result "boot.loader_vs_min.min_${o,,}" x "$tmp/ratio_$o"
done
[ -s "$tmp/cpu_ratio" ] && bstat_result boot.loader_vs_min.cpu x "$tmp/cpu_ratio"
position first
position second
bstat_ratio boot.loader_vs_min.after_boot "$tmp/warm_loader" "$tmp/warm_min"
bstat_result boot.loader ms "$tmp/loader"
bstat_result boot.min ms "$tmp/min"
bstat_result boot.loader.after_boot ms "$tmp/warm_loader"
bstat_result boot.min.after_boot ms "$tmp/warm_min"
