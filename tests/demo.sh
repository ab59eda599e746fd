#!/usr/bin/env bash
# make run: load the objects, fire real compaction events, show the histograms.
# Beside an installed package: its own pin dir, run dir and objects, so it
# never takes over another loader's pins, status or kept copies.
set -eu
BUILD=${1:-build}
PIN_DIR=${PIN_DIR:-/sys/fs/bpf/kernelstats-demo}
RUN_DIR=${RUN_DIR:-/run/kernelstats-demo}
# The loader refuses objects anyone but root could change (a checkout in a
# home directory), so it loads root-owned copies, as an install would.
OBJ_DIR=${OBJ_DIR:-$RUN_DIR/bpf}
STATUS=$RUN_DIR/loader-status.json
if [ "$(id -u)" -ne 0 ]; then
	echo "make run: needs root (loads BPF programs into the kernel)" >&2
	exit 2
fi
# A status or pins another loader made (another object or pin dir): not ours.
names() {	# key value: whether the status file says so
	grep -qF -e "\"$1\":\"$2\"" -e "\"$1\": \"$2\"" "$STATUS"
}
if [ -e "$STATUS" ] && ! { names obj_dir "$OBJ_DIR" && names pin_dir "$PIN_DIR"; }; then
	echo "make run: $STATUS is another loader's (not of $OBJ_DIR and $PIN_DIR): it" \
		"cannot run beside it there; pass RUN_DIR= and PIN_DIR=" >&2
	exit 2
fi
if [ ! -e "$STATUS" ] && [ -n "$(ls -A "$PIN_DIR" 2>/dev/null)" ]; then
	echo "make run: $PIN_DIR holds another loader's pins: it cannot run beside" \
		"it there; pass PIN_DIR=" >&2
	exit 2
fi
install -d -m 0755 -o root -g root "$RUN_DIR" "$OBJ_DIR"
install -m 0644 -o root -g root "$BUILD"/bpf/*.bpf "$OBJ_DIR"/
"$BUILD/kstats-loader" --obj-dir "$OBJ_DIR" --pin-dir "$PIN_DIR" --run-dir "$RUN_DIR"
echo "triggering compaction 5 times (echo 1 > /proc/sys/vm/compact_memory)"
for _ in 1 2 3 4 5; do echo 1 > /proc/sys/vm/compact_memory; done
"$BUILD/kstats" dump --obj-dir "$OBJ_DIR" --pin-dir "$PIN_DIR" --status-file "$STATUS"
echo
echo "The programs stay attached; detach them with:"
echo "  $BUILD/kstats-loader --unload --obj-dir $OBJ_DIR --pin-dir $PIN_DIR --run-dir $RUN_DIR"
