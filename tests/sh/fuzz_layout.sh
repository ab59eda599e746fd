#!/usr/bin/env bash
# libFuzzer on the BTF layout resolver for FUZZ_TIME seconds (default 20):
# arbitrary BTF blobs into btf__new and kstats_layout_build, under ASan,
# UBSan and LeakSanitizer.  `make fuzz` runs the same target unbounded.
set -u
. "$(dirname "$0")/../lib/fuzz.sh"
BUILD=${KSTATS_BUILD:-build/san}
seeds=$BUILD/fuzz/seeds

if [ ! -d "$seeds" ]; then
	echo "FAIL: fuzz_layout: $seeds missing; run make test (or make $seeds/.stamp)"
	exit 1
fi
fuzz_run fuzz_layout "$BUILD/fuzz/fuzz_layout" "${FUZZ_TIME:-20}" "" "$seeds"
