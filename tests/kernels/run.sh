#!/usr/bin/env bash
# The kernel matrix: boots every kernel of tests/kernels/matrix (or the one
# in KERNEL=path/to/bzImage) under qemu TCG with the lab initramfs, and
# prints one PASS/FAIL/SKIP line per guest test, read from the serial
# console, as "VERDICT: <kernel>: <test>...".
# Usage: tests/kernels/run.sh [BUILD]
# Environment: KERNEL, KERNEL_MODULES (dir of *.ko and modules.order),
# KERNELS_CACHE (default build/kernels), LAB_TIMEOUT (s, default 150),
# LAB_MEM (MiB, default 384).
set -u
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.." || exit 1
cache=${KERNELS_CACHE:-build/kernels}
timeout_s=${LAB_TIMEOUT:-150}
mem=${LAB_MEM:-384}

result() { local v=$1 name=$2; shift 2; echo "$v: $name: $*"; }

# qemu binary and console device for a Debian architecture name.
qemu_for() {
	case $1 in
	x86_64) echo "qemu-system-x86_64 ttyS0" ;;
	*) return 1 ;;
	esac
}

boot() {
	local name=$1 arch=$2 kernel=$3 initrd=$4 log=$5 qemu console
	read -r qemu console < <(qemu_for "$arch")
	timeout -k 5 "$timeout_s" "$qemu" -accel tcg -m "$mem" -smp 1 \
		-display none -vga none -nic none -monitor none -no-reboot \
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

# Reads the console log: the guest's result lines, then boot's own verdict.
report() {
	local name=$1 rc=$2 secs=$3 log=$4 work=$5 lines=$5/lines release
	sed -n 's/\r$//; s/^.*\(@@ \)/\1/p' "$log" > "$lines"
	release=$(sed -n 's/^@@ BEGIN //p' "$lines")
	if [ -z "$release" ]; then
		result FAIL "$name" "boot: no guest output (qemu exit $rc); console: $log"
		tail -20 "$log" "$log.qemu" 2>/dev/null | sed 's/^/# /'
		return
	fi
	result PASS "$name" "boot ($release, ${secs}s)"
	sed -n 's/^@@ INFO: /# '"$name"': /p; s/^@@ \(PASS\|FAIL\|SKIP\): /\1: '"$name"': /p' "$lines"
	decode_blobs "$name" "$lines" "$work"
	if ! grep -q '^@@ END' "$lines"; then
		result FAIL "$name" "guest did not finish (qemu exit $rc$([ "$rc" = 124 ] && echo ", timed out after ${timeout_s}s")); console: $log"
		tail -20 "$log" | sed 's/^/# /'
	fi
}

run_kernel() {
	local name=$1 arch=$2 kernel=$3 kdir=$4 work=$build/lab/$1 qemu start rc secs err
	read -r qemu _ < <(qemu_for "$arch") || { result SKIP "$name" "no qemu for $arch"; return; }
	if ! command -v "$qemu" >/dev/null; then
		result SKIP "$name" "$qemu not installed (make deps)"
		return
	fi
	mkdir -p "$work"
	if ! err=$(tests/kernels/initramfs.sh "$build" "$kdir" "$work/initramfs.cpio" 2>&1); then
		result FAIL "$name" "initramfs: $err"
		return
	fi
	start=$(date +%s%N)
	boot "$name" "$arch" "$kernel" "$work/initramfs.cpio" "$work/console.log"
	rc=$?
	secs=$(( ($(date +%s%N) - start) / 100000000 ))
	report "$name" "$rc" "$((secs / 10)).$((secs % 10))" "$work/console.log" "$work"
}

run_debian() {
	local name=$1 arch=$2 spec=$3 out rc
	shift 3
	out=$(tests/kernels/fetch.sh "$cache" "$name" "$spec" "$@" 2>&1)
	rc=$?
	case $rc in
	0) run_kernel "$name" "$arch" "$cache/$name/vmlinuz" "$cache/$name" ;;
	77) result SKIP "$name" "$out" ;;
	*) result FAIL "$name" "fetch: $out" ;;
	esac
}

if [ -n "${KERNEL:-}" ]; then
	if [ ! -r "$KERNEL" ]; then
		result FAIL "$(basename "$KERNEL")" "KERNEL=$KERNEL is not readable"
		exit 0
	fi
	run_kernel "$(basename "$KERNEL")" "${KERNEL_ARCH:-x86_64}" "$KERNEL" \
		"${KERNEL_MODULES:-/nonexistent}"
	exit 0
fi
grep -v '^#' tests/kernels/matrix | while read -r name arch spec modules; do
	[ -n "$name" ] || continue
	# shellcheck disable=SC2086 # modules is a word list
	run_debian "$name" "$arch" "$spec" $modules
done
