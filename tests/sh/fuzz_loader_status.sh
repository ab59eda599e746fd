#!/usr/bin/env bash
# libFuzzer on the loader's reading of its previous status file for
# FUZZ_TIME seconds (default 10).  `make fuzz-loader-status` runs it unbounded.
set -u
here=$(dirname "$0")
. "$here/../lib/fuzz.sh"
fuzz_run fuzz_loader_status "${KSTATS_BUILD:-build/san}/fuzz/fuzz_loader_status" \
	"${FUZZ_TIME:-10}" ", no pin outside the pin dir" -close_fd_mask=2 \
	"$here/../../fuzz/loader_status_seeds"
