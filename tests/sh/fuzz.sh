#!/usr/bin/env bash
# libFuzzer, bounded, under ASan, UBSan and LeakSanitizer:
#   fuzz_layout  arbitrary BTF blobs into btf__new and kstats_layout_build
#                (FUZZ_TIME seconds, default 20);
#   fuzz_state   the pull state parser: whole files, and JSON bodies behind
#                a valid header; each decoded state must round-trip (10 s);
#   fuzz_status  the loader status reader (10 s).
# `make fuzz`, `make fuzz-state` and `make fuzz-status` run them unbounded.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${KSTATS_BUILD:-build/san}
opts=$(sed -n 's/^FUZZ_OPTS *:= *//p' mk/fuzz.mk)
work=$(mktemp -d /tmp/kstats-test-$$-fuzz-XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT	# the EXIT trap cleans up; bash runs it on exit only
trap 'exit 143' TERM

# fuzz TARGET SECONDS SEED...
fuzz() {
	local target=$1 secs=$2 bin=$BUILD/fuzz/fuzz_$1 rc runs
	shift 2
	if [ ! -x "$bin" ] || [ $# -eq 0 ] || [ ! -e "$1" ]; then
		echo "FAIL: fuzz_$target: $bin or its seeds missing; run make test (or make $bin)"
		return
	fi
	mkdir "$work/$target"
	cp "$@" "$work/$target/"
	# shellcheck disable=SC2086
	"$bin" $opts -max_total_time="$secs" -print_final_stats=1 \
		-artifact_prefix="$work/$target-" "$work/$target" >"$work/log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
	if [ "$rc" -eq 0 ] && [ -n "$runs" ]; then
		echo "PASS: fuzz_$target: $runs inputs, no crash, leak, UB or broken invariant"
		return
	fi
	mkdir -p "$BUILD/fuzz/crashes"
	cp "$work/$target"-* "$BUILD/fuzz/crashes/" 2>/dev/null
	echo "FAIL: fuzz_$target: exit $rc; inputs kept in $BUILD/fuzz/crashes (rerun: $bin FILE)"
	grep -m5 -E "ERROR|SUMMARY|runtime error|deadly" "$work/log"
}

fuzz layout "${FUZZ_TIME:-20}" "$BUILD"/fuzz/seeds/*.btf
fuzz state "${FUZZ_FILES_TIME:-10}" fuzz/seeds/state/*
fuzz status "${FUZZ_FILES_TIME:-10}" fuzz/seeds/status/*
