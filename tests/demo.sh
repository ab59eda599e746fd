#!/usr/bin/env bash
# make run: load the objects, fire real compaction events, show the histograms.
set -eu
BUILD=${1:-build}
PIN_DIR=${PIN_DIR:-/sys/fs/bpf/kernelstats}
# The loader refuses objects anyone but root could change (a checkout in a
# home directory), so it loads root-owned copies, as an install would.
OBJ_DIR=${OBJ_DIR:-/run/kernelstats-demo/bpf}
if [ "$(id -u)" -ne 0 ]; then
	echo "make run: needs root (loads BPF programs into the kernel)" >&2
	exit 2
fi
install -d -m 0755 -o root -g root "$OBJ_DIR"
install -m 0644 -o root -g root "$BUILD"/bpf/*.bpf "$OBJ_DIR"/
"$BUILD/kstats-loader" --obj-dir "$OBJ_DIR" --pin-dir "$PIN_DIR"
echo "triggering compaction 5 times (echo 1 > /proc/sys/vm/compact_memory)"
for _ in 1 2 3 4 5; do echo 1 > /proc/sys/vm/compact_memory; done
"$BUILD/kstats" dump --obj-dir "$OBJ_DIR" --pin-dir "$PIN_DIR"
echo
echo "The programs stay attached; detach them with:"
echo "  $BUILD/kstats-loader --unload --obj-dir $OBJ_DIR --pin-dir $PIN_DIR"
