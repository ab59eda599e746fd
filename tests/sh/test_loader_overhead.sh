#!/usr/bin/env bash
# What the loader costs beyond libbpf's own work (issue 29), counted under
# strace.  One probe child for the whole run, not one per object (it
# parses every object in a child before libbpf does in-process).  And the
# loader parses vmlinux BTF no more often than libbpf itself does: libbpf 1.1 parses it inside each bpf_object__load() of an object
# with a tp_btf program, so a run that loads N such objects at the first
# try opens /sys/kernel/btf/vmlinux N times, none for the loader's own
# attach-point checks when tracefs has every tracepoint they attach to (as
# under systemd, which mounts tracefs); one more at most when some are
# missing; a run with every object disabled opens it never.  Counted as opens under strace.  Runs as root; removes its pins
# and files; mounts tracefs as ktest does.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${KSTATS_BUILD:-build}
L=$B/kstats-loader
PIN=/sys/fs/bpf/kernelstats-test-$$-btfparse

for need in strace jq; do
	command -v "$need" >/dev/null || { echo "SKIP: loader overhead: no $need"; exit 0; }
done
[ "$(id -u)" = 0 ] || { echo "SKIP: loader overhead: needs root"; exit 0; }
[ -r /sys/kernel/btf/vmlinux ] || { echo "SKIP: loader overhead: kernel has no BTF"; exit 0; }
[ -x "$L" ] && ls "$B"/bpf/*.bpf >/dev/null 2>&1 || { echo "FAIL: setup: build $B first"; exit 1; }
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing ||
	{ echo "SKIP: loader overhead: cannot mount tracefs"; exit 0; }

tmp=$(mktemp -d /tmp/kstats-test-$$-btfparse-XXXXXX)
cleanup() { rm -rf "$PIN" "$tmp"; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# run NAME OBJDIR ARGS...: the loader under strace; prints its vmlinux BTF opens.
run() {
	local name=$1 dir=$2
	shift 2
	rm -rf "$PIN" "$tmp/run"
	ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0 \
		strace -f -qq -e trace=openat,fork,vfork,clone,clone3 \
		-o "$tmp/$name.strace" \
		"$L" --obj-dir "$dir" --pin-dir "$PIN" --run-dir "$tmp/run" "$@" \
		>"$tmp/$name.out" 2>&1
	grep -c 'openat(.*"/sys/kernel/btf/vmlinux"' "$tmp/$name.strace"
}
loaded() { jq -r '.objects[] | select(.outcome == "LOADED") | .path' "$tmp/run/loader-status.json"; }

# Every built object: some may lack their tracepoints here, and the gate
# parses vmlinux BTF once to say so; never more.
opens=$(run all "$B/bpf")
mkdir "$tmp/ok"
for o in $(loaded); do cp "$o" "$tmp/ok/"; done
n=$(ls "$tmp/ok" | wc -l)
if [ "$n" -eq 0 ]; then
	echo "FAIL: loader overhead: no object loaded: $(tail -3 "$tmp/all.out")"
	exit 0
elif [ "$opens" -le $((n + 1)) ]; then
	echo "PASS: loader overhead: $opens vmlinux BTF opens for $n loaded of all objects"
else
	echo "FAIL: loader overhead: $opens vmlinux BTF opens for $n loaded of all objects"
fi

# processes the run started (strace -f names each by its first line), not
# its loading threads (CLONE_THREAD).
forks=$(grep -E '^[0-9]+ +(fork|vfork|clone|clone3)\(' "$tmp/all.strace" | grep -vc CLONE_THREAD)
probed=$(jq '[.objects[] | select(.outcome == "LOADED" or
				   .outcome == "SKIPPED_NO_ATTACH_POINT")] | length' \
	"$tmp/run/loader-status.json")
if [ "$forks" -eq 1 ] && [ "$probed" -ge 2 ]; then
	echo "PASS: loader overhead: 1 probe child for $probed objects libbpf opened"
else
	echo "FAIL: loader overhead: $forks processes started for $probed objects libbpf opened" \
	     "(one probe child per run)"
fi

# The objects that load here: libbpf's parses only.
opens=$(run ok "$tmp/ok")
if [ "$(loaded | wc -l)" -ne "$n" ]; then
	echo "FAIL: loader overhead: the loadable objects did not all load again"
elif [ "$opens" -eq "$n" ]; then
	echo "PASS: loader overhead: $opens vmlinux BTF opens for $n objects that all load"
else
	echo "FAIL: loader overhead: $opens vmlinux BTF opens for $n objects that all load" \
	     "(libbpf needs $n: the loader parses it itself)"
fi

opens=$(run none "$B/bpf" --disable all)
if [ "$opens" -eq 0 ]; then
	echo "PASS: loader overhead: none with every object disabled"
else
	echo "FAIL: loader overhead: $opens vmlinux BTF opens with every object disabled"
fi
