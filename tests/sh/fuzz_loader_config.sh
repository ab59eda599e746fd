#!/usr/bin/env bash
# libFuzzer on loader.conf for FUZZ_TIME seconds (default 10), seeded with
# the shipped dist/loader.conf.  `make fuzz-loader-config` runs it unbounded.
set -u
here=$(dirname "$0")
. "$here/../lib/fuzz.sh"
fuzz_run fuzz_loader_config "${KSTATS_BUILD:-build/san}/fuzz/fuzz_loader_config" \
	"${FUZZ_TIME:-10}" ", every refusal names its line" "$here/../../dist"
