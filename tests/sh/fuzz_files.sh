#!/usr/bin/env bash
# libFuzzer on the file parsers for FUZZ_TIME seconds each (default 10):
# the pull state (fuzz_state: header checks, then the JSON body behind a
# valid header, each decoded state round-tripped) and the loader status
# (fuzz_status), under ASan, UBSan and LeakSanitizer.  `make fuzz-state`
# and `make fuzz-status` run them unbounded.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${KSTATS_BUILD:-build/san}
opts=$(sed -n 's/^FUZZ_OPTS *:= *//p' mk/fuzz.mk)
work=$(mktemp -d /tmp/kstats-test-$$-fuzzfiles-XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT	# the EXIT trap cleans up; bash runs it on exit only
trap 'exit 143' TERM

for target in state status; do
	bin=$BUILD/fuzz/fuzz_$target
	if [ ! -x "$bin" ]; then
		echo "FAIL: fuzz_$target: $bin missing; run make test (or make $bin)"
		continue
	fi
	mkdir "$work/$target"
	cp fuzz/seeds/$target/* "$work/$target/"
	# shellcheck disable=SC2086
	"$bin" $opts -max_total_time="${FUZZ_TIME:-10}" -print_final_stats=1 \
		-artifact_prefix="$work/$target-" "$work/$target" >"$work/log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
	if [ "$rc" -eq 0 ] && [ -n "$runs" ]; then
		echo "PASS: fuzz_$target: $runs inputs, no crash, leak, UB or broken invariant"
		continue
	fi
	mkdir -p "$BUILD/fuzz/crashes"
	cp "$work/$target"-* "$BUILD/fuzz/crashes/" 2>/dev/null
	echo "FAIL: fuzz_$target: exit $rc; inputs kept in $BUILD/fuzz/crashes (rerun: $bin FILE)"
	grep -m5 -E "ERROR|SUMMARY|runtime error|deadly" "$work/log"
done
