#!/usr/bin/env bash
# libFuzzer on the loader's reading of its previous status file for
# FUZZ_TIME seconds (default 10), under ASan, UBSan and LeakSanitizer.
# `make fuzz-loader-status` runs the same target unbounded.
set -u
BUILD=${KSTATS_BUILD:-build/san}
bin=$BUILD/fuzz/fuzz_loader_status
seeds=$(dirname "$0")/../../fuzz/loader_status_seeds
opts=$(sed -n 's/^FUZZ_OPTS *:= *//p' "$(dirname "$0")/../../mk/fuzz.mk")

if [ ! -x "$bin" ]; then
	echo "FAIL: fuzz_loader_status: $bin missing; run make test (or make $bin)"
	exit 1
fi
work=$(mktemp -d /tmp/kstats-test-$$-fuzzst-XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT	# the EXIT trap cleans up; bash runs it on exit only
trap 'exit 143' TERM
mkdir "$work/corpus"
# shellcheck disable=SC2086
"$bin" $opts -close_fd_mask=2 -max_total_time="${FUZZ_TIME:-10}" -print_final_stats=1 \
	-artifact_prefix="$work/" "$work/corpus" "$seeds" >"$work/log" 2>&1
rc=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
if [ "$rc" -eq 0 ] && [ -n "$runs" ]; then
	echo "PASS: fuzz_loader_status: $runs inputs, no crash, leak, UB or pin outside the pin dir"
	exit 0
fi
mkdir -p "$BUILD/fuzz/crashes"
cp "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* "$BUILD/fuzz/crashes/" 2>/dev/null
echo "FAIL: fuzz_loader_status: exit $rc; inputs kept in $BUILD/fuzz/crashes (rerun: $bin FILE)"
grep -m5 -E "ERROR|SUMMARY|runtime error" "$work/log"
exit 1
