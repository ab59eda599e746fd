#!/usr/bin/env bash
# Runs every test (cmocka binaries in TAP mode, shell tests) and prints one
# PASS/FAIL/SKIP line per test, then "N passed, N failed, N skipped".
# Usage: tests/run.sh BUILD_DIR   (make test builds build/san with ASan+UBSan)
set -u
BUILD=${1:-build/san}
export KSTATS_BUILD=$BUILD
export CMOCKA_MESSAGE_OUTPUT=TAP
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd "$(dirname "$0")/.." || exit 1

pass=0 fail=0 skip=0

# A run that was interrupted leaves pins, trace instances, loader run dirs
# and temp dirs, all named *-test-<pid>-*, of a dead pid.  Names without a
# pid are never removed: they may belong to a run in another tree.
cleanup_stale() {
	local d pid
	for d in /sys/fs/bpf/kernelstats-test-* /sys/kernel/tracing/instances/kstats-test-* \
		 /tmp/kernelstats-test-*-run /tmp/kstats-test-*; do
		[ -e "$d" ] || continue
		pid=${d#*-test-}
		pid=${pid%%[!0-9]*}
		[ -n "$pid" ] || continue
		kill -0 "$pid" 2>/dev/null && continue
		rm -rf "$d" 2>/dev/null || rmdir "$d" 2>/dev/null
	done
}

# Reads one test's output on stdin; counts and prints its results.
tally() {
	local suite=$1 rc=$2 out=$3 line failed_before=$fail seen=0
	while IFS= read -r line; do
		case $line in
		*"ok "*"# SKIP"*) echo "SKIP: $suite:${line#*# SKIP}"; skip=$((skip + 1)); seen=1 ;;
		"not ok "*)	echo "FAIL: $suite: ${line#*- }"; fail=$((fail + 1)); seen=1 ;;
		"ok "*)		echo "PASS: $suite: ${line#*- }"; pass=$((pass + 1)); seen=1 ;;
		PASS:*)		echo "PASS: $suite: ${line#PASS: }"; pass=$((pass + 1)); seen=1 ;;
		FAIL:*)		echo "FAIL: $suite: ${line#FAIL: }"; fail=$((fail + 1)); seen=1 ;;
		SKIP:*)		echo "SKIP: $suite: ${line#SKIP: }"; skip=$((skip + 1)); seen=1 ;;
		esac
	done <<<"$out"
	if [ "$rc" -ne 0 ] && [ "$fail" -eq "$failed_before" ]; then
		echo "FAIL: $suite: exited with status $rc"
		fail=$((fail + 1))
	elif [ "$seen" -eq 0 ]; then
		echo "FAIL: $suite: reported no results"
		fail=$((fail + 1))
	fi
	if [ "$fail" -ne "$failed_before" ]; then
		printf '%s\n' "$out" | sed 's/^/    | /' | tail -40
	fi
}

run_one() {
	local suite=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	tally "$suite" "$rc" "$out"
}

trap cleanup_stale EXIT INT TERM
cleanup_stale
for t in "$BUILD"/tests/unit/* "$BUILD"/tests/kernel/*; do
	[ -x "$t" ] && run_one "$(basename "$t")" "$t"
done
for t in tests/sh/*.sh; do
	[ -f "$t" ] && run_one "$(basename "$t" .sh)" bash "$t"
done
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
