#!/usr/bin/env bash
# libFuzzer on the BTF layout resolver for FUZZ_TIME seconds (default 20):
# arbitrary BTF blobs into btf__new and kstats_layout_build, under ASan,
# UBSan and LeakSanitizer.  `make fuzz` runs the same target unbounded.
set -u
BUILD=${KSTATS_BUILD:-build/san}
bin=$BUILD/fuzz/fuzz_layout
seeds=$BUILD/fuzz/seeds
opts=$(sed -n 's/^FUZZ_OPTS *:= *//p' "$(dirname "$0")/../../mk/fuzz.mk")

if [ ! -x "$bin" ] || [ ! -d "$seeds" ]; then
	echo "FAIL: fuzz_layout: $bin or $seeds missing; run make test (or make $bin)"
	exit 1
fi
work=$(mktemp -d /tmp/kstats-test-$$-fuzz-XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"
cp "$seeds"/*.btf "$work/corpus/"
# shellcheck disable=SC2086
"$bin" $opts -max_total_time="${FUZZ_TIME:-20}" -print_final_stats=1 \
	-artifact_prefix="$work/" "$work/corpus" >"$work/log" 2>&1
rc=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
if [ "$rc" -eq 0 ] && [ -n "$runs" ]; then
	echo "PASS: fuzz_layout: $runs inputs, no crash, leak or UB"
	exit 0
fi
mkdir -p "$BUILD/fuzz/crashes"
cp "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* "$BUILD/fuzz/crashes/" 2>/dev/null
echo "FAIL: fuzz_layout: exit $rc; inputs kept in $BUILD/fuzz/crashes (rerun: $bin FILE)"
grep -m5 -E "ERROR|SUMMARY|runtime error" "$work/log"
exit 1
