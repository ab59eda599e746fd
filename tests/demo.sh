#!/usr/bin/env bash
# make run: load the objects, fire real compaction events, show the histograms.
set -eu
BUILD=${1:-build}
PIN_DIR=${PIN_DIR:-/sys/fs/bpf/kernelstats}
if [ "$(id -u)" -ne 0 ]; then
	echo "make run: needs root (loads BPF programs into the kernel)" >&2
	exit 2
fi
"$BUILD/kstats-loader" --obj-dir "$BUILD/bpf" --pin-dir "$PIN_DIR"
echo "triggering compaction 5 times (echo 1 > /proc/sys/vm/compact_memory)"
for _ in 1 2 3 4 5; do echo 1 > /proc/sys/vm/compact_memory; done
"$BUILD/kstats" dump --obj-dir "$BUILD/bpf" --pin-dir "$PIN_DIR"
echo
echo "The programs stay attached; detach them with: $BUILD/kstats-loader --unload --pin-dir $PIN_DIR"
