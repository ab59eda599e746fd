#!/usr/bin/env bash
# The kernel matrix: boots every kernel of tests/kernels/matrix (or the one
# in KERNEL=path/to/kernel) under qemu TCG with the lab initramfs, and
# prints one PASS/FAIL/SKIP line per guest test, read from the serial
# console, as "VERDICT: <kernel>: <test>...".  Guests run LAB_JOBS at a
# time; each one's lines come together, in matrix order.
# Usage: tests/kernels/run.sh [BUILD]
# Environment: KERNEL, KERNEL_ARCH (amd64 or arm64, default amd64),
# KERNEL_MODULES (dir of *.ko and modules.order), KERNELS_CACHE (default
# build/kernels), LAB_TIMEOUT (s, default 240), LAB_MEM (MiB, default 256),
# LAB_JOBS (guests at a time, default 2), LAB_KERNELS (names to run, default
# all).
set -u
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.." || exit 1
cache=${KERNELS_CACHE:-build/kernels}
timeout_s=${LAB_TIMEOUT:-240}
mem=${LAB_MEM:-256}
jobs=${LAB_JOBS:-2}

result() { local v=$1 name=$2; shift 2; echo "$v: $name: $*"; }

# For a Debian architecture name: qemu, console, the static tools' dir and
# busybox (tests/kernels/sysroot.sh for a foreign one), then qemu's extra
# arguments.  amd64: no CMPXCHG16B, which qemu 7.2's TCG gets wrong now
# and then: with it, 6.12 cloud died in SLUB's cmpxchg16b fast path in 9 of
# 13 boots (qemu64; as often on max, Skylake-Client, EPYC), in none of 20
# without it (doc/kernel-matrix.md).  arm64: cortex-a76 has the 16 KiB
# granule (cortex-a57 has not: a 16k kernel never prints) and boots 4 KiB
# kernels as fast; a virtio disk behind the DMA API (iommu_platform) allocates its
# virtqueues from CMA when bound, once they are larger than a page: 1024
# entries take two 16 KiB pages (the default 256 fit in one).
arch_setup() {
	case $1 in
	amd64|x86_64)
		echo "qemu-system-x86_64 ttyS0 $build/static /bin/busybox -vga none" \
		     "-cpu qemu64,-cx16" ;;
	arm64|aarch64)
		echo "qemu-system-aarch64 ttyAMA0 $build/static-arm64" \
		     "$cache/sysroot-arm64/bin/busybox -M virt -cpu cortex-a76" \
		     "-drive if=none,id=cma,format=raw,file=$2/disk.img" \
		     "-device virtio-blk-pci,drive=cma,disable-legacy=on,iommu_platform=on,queue-size=1024" ;;
	*) return 1 ;;
	esac
}

boot() {
	local kernel=$1 initrd=$2 log=$3 qemu=$4 console=$5
	shift 5
	timeout -k 5 "$timeout_s" "$qemu" -accel tcg -m "$mem" -smp 1 \
		-display none -nic none -monitor none -no-reboot "$@" \
		-serial "file:$log" -kernel "$kernel" -initrd "$initrd" \
		-append "console=$console loglevel=1 panic=-1 oops=panic no_console_suspend" \
		</dev/null >"$log.qemu" 2>&1
}

# Atom files the guest printed as base64, decoded with protoc.
decode_blobs() {
	local name=$1 lines=$2 work=$3 proto=proto/kernelstats_atoms.proto n=0 f out
	grep -q '^@@ BLOB ' "$lines" || return 0
	if [ ! -f "$proto" ] || ! command -v protoc >/dev/null; then
		result SKIP "$name" "pull decode: no $proto or protoc to decode with"
		return 0
	fi
	rm -f "$work"/atoms.*
	awk -v dir="$work" '/^@@ BLOB /{f=dir "/atoms." ++n ".b64"; next}
		/^@@ BLOB-END/{f=""; next} f && /^@@ B64 /{print substr($0, 8) > f}' "$lines"
	for f in "$work"/atoms.*.b64; do
		n=$((n + 1))
		if ! out=$(base64 -d "$f" | protoc --decode=kernelstats.AtomList \
				-I"$(dirname "$proto")" "$proto" 2>&1); then
			result FAIL "$name" "pull decode: file $n: $(tail -1 <<<"$out")"
			return 0
		fi
		grep -qi compaction <<<"$out" && { result PASS "$name" \
			"pull decode (protoc --decode=kernelstats.AtomList, CompactionDuration atom)"; return 0; }
	done
	result FAIL "$name" "pull decode: $n file(s) decode but hold no CompactionDuration atom"
}

# "booted in 1.6s, suite ran 19.4s" from the guest's uptime at BEGIN and END.
guest_times() {
	awk '/^@@ UPTIME /{t[n++]=$3} END{
		if (n) printf "booted in %.1fs", t[0];
		if (n > 1) printf ", suite ran %.1fs", t[1] - t[0]}' "$1"
}

# Reads the console log: the guest's result lines, then boot's own verdict.
report() {
	local name=$1 kernel=$2 rc=$3 secs=$4 log=$5 work=$6 lines=$6/lines release
	sed -n 's/\r$//; s/^.*\(@@ \)/\1/p' "$log" > "$lines"
	release=$(sed -n 's/^@@ BEGIN //p' "$lines")
	if [ -z "$release" ]; then
		result FAIL "$name" "boot: no guest output (qemu exit $rc); console: $log"
		tail -20 "$log" "$log.qemu" 2>/dev/null | sed 's/^/# /'
		return
	fi
	result PASS "$name" "boot ($release from $(basename "$kernel"): $(guest_times "$lines"), ${secs}s in qemu)"
	sed -n 's/^@@ INFO: /# '"$name"': /p; s/^@@ \(PASS\|FAIL\|SKIP\): /\1: '"$name"': /p' "$lines"
	decode_blobs "$name" "$lines" "$work"
	if ! grep -q '^@@ END' "$lines"; then
		result FAIL "$name" "guest did not finish (qemu exit $rc$([ "$rc" = 124 ] && echo ", timed out after ${timeout_s}s")); console: $log"
		tail -20 "$log" | sed 's/^/# /'
	fi
}

run_kernel() {
	local name=$1 arch=$2 kernel=$3 kdir=$4 work=$build/lab/$1 setup qemu console
	local tools busybox start rc secs err
	mkdir -p "$work"
	setup=$(arch_setup "$arch" "$work") || { result SKIP "$name" "no qemu for $arch"; return; }
	# shellcheck disable=SC2086 # words: qemu console tools busybox qemu-args...
	set -- $setup
	qemu=$1 console=$2 tools=$3 busybox=$4
	shift 4
	if ! command -v "$qemu" >/dev/null; then
		result SKIP "$name" "$qemu not installed (make deps)"
		return
	fi
	if [ -s "$tools/unavailable" ]; then
		result SKIP "$name" "no static tools for $arch: $(cat "$tools/unavailable")"
		return
	fi
	if ! err=$(TOOLS=$tools BUSYBOX=$busybox tests/kernels/initramfs.sh "$build" \
			"$kdir" "$work/initramfs.cpio" 2>&1); then
		result FAIL "$name" "initramfs: $err"
		return
	fi
	truncate -s 1M "$work/disk.img"
	start=$(date +%s%N)
	boot "$kernel" "$work/initramfs.cpio" "$work/console.log" "$qemu" "$console" "$@"
	rc=$?
	secs=$(( ($(date +%s%N) - start) / 100000000 ))
	report "$name" "$kernel" "$rc" "$((secs / 10)).$((secs % 10))" "$work/console.log" "$work"
}

run_debian() {
	local name=$1 arch=$2 spec=$3 out rc
	shift 3
	out=$(tests/kernels/fetch.sh "$cache" "$name" "$spec" "$@" 2>&1)
	rc=$?
	case $rc in
	0) run_kernel "$name" "$arch" "$(ls "$cache/$name"/vmlinu[xz] | head -1)" "$cache/$name" ;;
	77) result SKIP "$name" "$out" ;;
	*) result FAIL "$name" "fetch: $out" ;;
	esac
}

if [ -n "${KERNEL:-}" ]; then
	if [ ! -r "$KERNEL" ]; then
		result FAIL "$(basename "$KERNEL")" "KERNEL=$KERNEL is not readable"
		exit 0
	fi
	run_kernel "$(basename "$KERNEL")" "${KERNEL_ARCH:-amd64}" "$KERNEL" \
		"${KERNEL_MODULES:-/nonexistent}"
	exit 0
fi

# Each guest into its own file, LAB_JOBS at a time; then all, in order.
outs=()
while read -r name arch spec modules; do
	case $name in ''|'#'*) continue ;; esac
	case " ${LAB_KERNELS:-$name} " in *" $name "*) ;; *) continue ;; esac
	mkdir -p "$build/lab/$name"
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
	# shellcheck disable=SC2086 # modules is a word list
	run_debian "$name" "$arch" "$spec" $modules > "$build/lab/$name/result" 2>&1 &
	outs+=("$build/lab/$name/result")
done < tests/kernels/matrix
wait
cat "${outs[@]}"
