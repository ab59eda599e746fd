#!/usr/bin/env bash
# make run (tests/demo.sh) beside another loader's run (an installed
# package's, here in its own pin and run dirs): it refuses that loader's pin
# dir or run dir, and in its own leaves that loader's pins, status and kept
# copies as they were (issue 50, item 15).
set -u
cd "$(dirname "$0")/../.." || exit 1
T="demo beside"
B=${KSTATS_BUILD:-build}
fail() { echo "FAIL: $T: $1"; exit 1; }
pass() { echo "PASS: $T: $1"; }
[ "$(id -u)" = 0 ] || { echo "SKIP: $T: needs root"; exit 0; }
[ -x "$B/kstats-loader" ] && [ -e "$B/bpf/compaction.bpf" ] || fail "setup: build $B first"
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
export ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0
PIN=/sys/fs/bpf/kernelstats-test-$$-demo
tmp=$(mktemp -d "/tmp/kstats-test-$$-demo-XXXXXX") || exit 1
chmod 0755 "$tmp"
cleanup() {
	"$B/kstats-loader" --unload --obj-dir "$tmp/demo/bpf" --pin-dir "$PIN-own" \
		--run-dir "$tmp/demo" >/dev/null 2>&1
	"$B/kstats-loader" --unload --obj-dir "$tmp/pkgobj" --pin-dir "$PIN-pkg" \
		--run-dir "$tmp/pkgrun" >/dev/null 2>&1
	rm -rf "$tmp" "$PIN"-*
}
trap cleanup EXIT

# The other loader: the package's layout, in scratch dirs.
mkdir -p "$tmp/pkgobj"
cp "$B/bpf/compaction.bpf" "$tmp/pkgobj/"
"$B/kstats-loader" --obj-dir "$tmp/pkgobj" --pin-dir "$PIN-pkg" --run-dir "$tmp/pkgrun" \
	>"$tmp/pkg.out" 2>&1 || fail "setup: the other loader failed: $(head -3 "$tmp/pkg.out")"
state() { ls -l --time-style=+%s.%N "$PIN-pkg" "$tmp/pkgrun"; sha256sum "$tmp/pkgrun"/*; }
state >"$tmp/before"

demo() {	# name: tests/demo.sh with the env given before it
	timeout 300 bash tests/demo.sh "$B" >"$tmp/$1.out" 2>&1
	echo $?
}
rc=$(PIN_DIR=$PIN-pkg RUN_DIR=$tmp/demo OBJ_DIR=$tmp/demo/bpf demo pins)
[ "$rc" = 2 ] && grep -q "holds another loader's pins" "$tmp/pins.out" ||
	fail "the other loader's pin dir: exit $rc: $(tail -2 "$tmp/pins.out")"
rc=$(PIN_DIR=$PIN-own RUN_DIR=$tmp/pkgrun OBJ_DIR=$tmp/demo/bpf demo run)
[ "$rc" = 2 ] && grep -q "is another loader's" "$tmp/run.out" ||
	fail "the other loader's run dir: exit $rc: $(tail -2 "$tmp/run.out")"
state | cmp -s - "$tmp/before" || fail "a refused demo changed the other loader's state"
pass "make run refuses another loader's pin dir and run dir, and touches neither"

rc=$(PIN_DIR=$PIN-own RUN_DIR=$tmp/demo demo own)
[ "$rc" = 0 ] && grep -q -- "--unload .*--pin-dir $PIN-own --run-dir $tmp/demo" "$tmp/own.out" ||
	fail "make run in its own dirs: exit $rc: $(tail -3 "$tmp/own.out")"
rc=$(PIN_DIR=$PIN-own RUN_DIR=$tmp/demo demo again)
[ "$rc" = 0 ] || fail "make run again in its own dirs: exit $rc: $(tail -3 "$tmp/again.out")"
state | cmp -s - "$tmp/before" || fail "make run changed the other loader's pins, status or copies"
grep -q 'PIN_DIR:-/sys/fs/bpf/kernelstats-demo}' tests/demo.sh &&
	grep -q 'RUN_DIR:-/run/kernelstats-demo}' tests/demo.sh ||
	fail "tests/demo.sh defaults to the package's pin or run dir"
pass "make run twice in its own pin and run dir: the other loader's pins, status and copies unchanged"
