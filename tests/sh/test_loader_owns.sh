#!/usr/bin/env bash
# Everything the loader writes or deletes is its own (issue 50, doc/loader.md):
# --unload never deletes from the object dir, however the run dir is spelt,
# and deletes only the copies it recorded; a run dir someone else controls is
# refused; a name that is not UTF-8 leaves the status file UTF-8; objects
# that hang share one probing budget, and the good one still loads.
set -u
cd "$(dirname "$0")/../.." || exit 1
T="loader owns"
B=${KSTATS_BUILD:-build}
L=$B/kstats-loader
. tests/lib/testuser.sh
fail() { echo "FAIL: $T: $1"; exit 1; }
pass() { echo "PASS: $T: $1"; }
testuser_setup "$T" lowns python3 timeout jq
PIN=/sys/fs/bpf/kernelstats-test-$$-lowns
[ -x "$L" ] && [ -e "$B/bpf/compaction.bpf" ] && [ -e "$B/bpf/kswapd.bpf" ] ||
	fail "setup: build $B first"
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
export ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0

ld() {	# name runs the loader with args; exit code in $rc, output in $tmp/name.out
	local name=$1
	shift
	timeout 120 "$L" --pin-dir "$PIN" "$@" >"$tmp/$name.out" 2>&1
	rc=$?
}

# 1. The run dir spelt as the object dir ("dir/", "./dir", a symlink): refused,
# for a load and for --unload, and the objects stay.
mkdir -p "$tmp/obj"
cp "$B/bpf/compaction.bpf" "$tmp/obj/"
ln -s "$tmp/obj" "$tmp/objlink"
ld first --obj-dir "$tmp/obj" --run-dir "$tmp/run"
[ "$rc" = 0 ] || fail "setup: the loader exited $rc: $(head -3 "$tmp/first.out")"
for spelt in "$tmp/obj/" "$tmp/./obj" "$tmp/objlink"; do
	for mode in "" --unload; do
		ld same --obj-dir "$tmp/obj" --run-dir "$spelt" $mode
		[ "$rc" = 2 ] && grep -q 'is the object directory' "$tmp/same.out" &&
			[ -f "$tmp/obj/compaction.bpf" ] ||
			fail "--run-dir $spelt $mode: exit $rc, objects: $(ls "$tmp/obj"): $(head -2 "$tmp/same.out")"
	done
done
pass "the object dir as run dir (dir/, ./, a symlink) is refused for load and --unload; the objects stay"

# 2. --unload removes the copy it recorded, not another *.bpf in the run dir.
[ -f "$tmp/run/compaction.bpf" ] &&
	[ "$(jq -r '.objects[0].copy' "$tmp/run/loader-status.json")" = "$tmp/run/compaction.bpf" ] ||
	fail "no recorded copy: $(jq -c '.objects[0] | {name, copy}' "$tmp/run/loader-status.json")"
cp "$B/bpf/kswapd.bpf" "$tmp/run/kswapd.bpf"
ld unload --obj-dir "$tmp/obj" --run-dir "$tmp/run" --unload
[ "$rc" = 0 ] && [ ! -e "$tmp/run/compaction.bpf" ] && [ -f "$tmp/run/kswapd.bpf" ] ||
	fail "--unload: exit $rc, run dir holds: $(ls "$tmp/run")"
# --status-file X/status.json alone: X is not a run dir to delete from either.
mkdir -p "$tmp/sx"
cp "$B/bpf/kswapd.bpf" "$tmp/sx/kswapd.bpf"
ld sfile --obj-dir "$tmp/obj" --status-file "$tmp/sx/status.json"
[ "$rc" = 0 ] && [ -f "$tmp/sx/compaction.bpf" ] || fail "--status-file: exit $rc: $(head -2 "$tmp/sfile.out")"
ld sfileu --obj-dir "$tmp/obj" --status-file "$tmp/sx/status.json" --unload
[ "$rc" = 0 ] && [ ! -e "$tmp/sx/compaction.bpf" ] && [ -f "$tmp/sx/kswapd.bpf" ] ||
	fail "--unload --status-file: exit $rc, its dir holds: $(ls "$tmp/sx")"
pass "--unload removes the copy it recorded and leaves another *.bpf in the run dir (--run-dir or --status-file's)"

# 3. A run dir another user owns, or may write, or a symlink to one: refused,
# nothing written there.
mkdir -p "$tmp/urun" "$tmp/grun"
chown "$U:$U" "$tmp/urun"
chmod 0775 "$tmp/grun"
chown "root:$U" "$tmp/grun"
ln -s "$tmp/urun" "$tmp/linkrun"
for run in "$tmp/urun" "$tmp/grun" "$tmp/linkrun"; do
	ld bad --obj-dir "$tmp/obj" --run-dir "$run"
	[ "$rc" = 3 ] && grep -q 'unusable run dir' "$tmp/bad.out" &&
		[ ! -e "$run/loader-status.json" ] && [ ! -e "$run/loader.lock" ] ||
		fail "run dir $run: exit $rc, holds: $(ls "$run"): $(head -2 "$tmp/bad.out")"
done
ld badu --obj-dir "$tmp/obj" --run-dir "$tmp/urun/sub"
[ "$rc" = 3 ] && [ ! -e "$tmp/urun/sub" ] || fail "a run dir below another user's: exit $rc"
pass "a run dir another user owns or may write, or a symlink to one, is refused (exit 3)"

# 4. An object name that is not UTF-8: the status file is UTF-8 still.
mkdir -p "$tmp/obj8"
cp "$B/bpf/compaction.bpf" "$tmp/obj8/"
cp "$B/bpf/compaction.bpf" "$tmp/obj8/$(printf 'compaction\xe9').bpf"
ld utf8 --obj-dir "$tmp/obj8" --run-dir "$tmp/run8"
python3 -c 'import json, sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))' \
	"$tmp/run8/loader-status.json" 2>"$tmp/utf8.py" ||
	fail "a non-UTF-8 name: the status file is not UTF-8 JSON: $(tail -1 "$tmp/utf8.py")"
jq -e '.objects[] | select(.name == "compaction\\xe9" and .outcome == "SKIPPED_OBJECT_NAME")' \
	"$tmp/run8/loader-status.json" >/dev/null ||
	fail "a non-UTF-8 name is not written as \\xNN: $(jq -c '[.objects[].name]' "$tmp/run8/loader-status.json")"
pass "a name that is not UTF-8 is written as \\xNN: the status file stays UTF-8 JSON"
ld utf8u --obj-dir "$tmp/obj8" --run-dir "$tmp/run8" --unload

# 5. 13 objects that hang before the good one: one budget for the run.
mkdir -p "$tmp/objh"
cp "$B/bpf/kswapd.bpf" "$tmp/objh/zgood.bpf"
for i in $(seq 13); do
	python3 tests/lib/btf_crasher.py "$B/bpf/kswapd.bpf" "$tmp/objh/hang$i.bpf" loop ||
		fail "setup: cannot make a hanging object"
done
start=$(date +%s)
ld hang --obj-dir "$tmp/objh" --run-dir "$tmp/runh"
secs=$(($(date +%s) - start))
[ "$rc" = 0 ] && [ "$secs" -le 45 ] ||
	fail "13 hanging objects: exit $rc after $secs s: $(grep -v FAILED "$tmp/hang.out" | head -3)"
jq -e '(.objects | length == 14) and (.objects[] | select(.name == "zgood") | .outcome == "LOADED")' \
	"$tmp/runh/loader-status.json" >/dev/null && [ -f "$tmp/runh/progs_loaded" ] ||
	fail "13 hanging objects: the good one or the status: $(grep zgood "$tmp/hang.out")"
pass "13 hanging objects take $secs s in all (budget 30 s); the good one loads, status and flag written"
ld hangu --obj-dir "$tmp/objh" --run-dir "$tmp/runh" --unload
