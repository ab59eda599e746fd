#!/usr/bin/env bash
# The Prometheus export is valid for every metric and never stale
# (doc/fleet-export.md): key fields named le, quantile, _1st or colliding
# are renamed so that promtool accepts the file; one map the export user
# cannot read leaves the others exported and is itself a metric; nothing
# loaded (after --unload, or disable = all) is written, not left to an old
# file.  And a pull out of file descriptors says so, not "replaced".
set -u
cd "$(dirname "$0")/../.." || exit 1
T="hostile export"
B=${KSTATS_BUILD:-build}
. tests/lib/testuser.sh
fail() { echo "FAIL: $T: $1"; exit 1; }
pass() { echo "PASS: $T: $1"; }
testuser_setup "$T" hostexp bpftool promtool
PIN=/sys/fs/bpf/kernelstats-test-$$-hostexp
OBJ=$tmp/obj RUN=$tmp/run OUT=$tmp/out
[ -x "$B/kstats" ] && [ -e "$B/tests/bpf/exportLabels.bpf" ] || fail "setup: build $B first"
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
export ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0
mkdir -p "$OBJ" && cp "$B/bpf/compaction.bpf" "$B/tests/bpf/exportLabels.bpf" "$OBJ/"
mkdir -m 0755 "$OUT" && chown "$U:kstats" "$OUT"

load() { "$B/kstats-loader" --obj-dir "$OBJ" --pin-dir "$PIN" --run-dir "$RUN" "$@" >/dev/null 2>&1; }
export_as() {	# user args...: exit code in rc, stderr in $tmp/err
	local user=$1
	shift
	if [ "$user" = root ]; then	# into a directory of root's: --output writes no other
		mkdir -p "$tmp/rout"
		"$B/kstats" dump --prometheus --obj-dir "$OBJ" --pin-dir "$PIN" \
			--status-file "$RUN/loader-status.json" --output "$tmp/rout/k.prom" "$@" 2>"$tmp/err"
		rc=$?
		rm -f "$OUT/k.prom"
		[ ! -e "$tmp/rout/k.prom" ] || mv "$tmp/rout/k.prom" "$OUT/k.prom"
		return
	else
		setpriv --reuid "$U" --regid kstats --clear-groups --inh-caps +bpf \
			--ambient-caps +bpf -- "$B/kstats" dump --prometheus --obj-dir "$OBJ" \
			--pin-dir "$PIN" --status-file "$RUN/loader-status.json" \
			--output "$OUT/k.prom" "$@" 2>"$tmp/err"
	fi
	rc=$?
}
hex() { printf '%02x 00 00 00 ' "$@"; }

load || fail "setup: the loader failed"
LMAP=$PIN/map_exportLabels_export_labels_map
bpftool map update pinned "$LMAP" key hex $(hex 1 2 3 4) \
	value hex $(hex 5; printf '00 00 00 00 %.0s' $(seq 63)) ||
	fail "setup: cannot write $LMAP"
echo 1 >/proc/sys/vm/compact_memory

# 1. Label names: promtool accepts the file; each renamed as documented.
export_as root
[ "$rc" = 0 ] || fail "labels: the export exited $rc: $(cat "$tmp/err")"
out=$(promtool check metrics <"$OUT/k.prom" 2>&1) ||
	fail "labels: promtool refuses the export: $(echo "$out" | head -3)"
line=$(grep '^kstats_export_labels_latency_seconds_count{' "$OUT/k.prom")
[ "$line" = 'kstats_export_labels_latency_seconds_count{key_le="1",key_1st="2",key_quantile="3",key3="4"} 5' ] ||
	fail "labels: the series is $line"
pass "key fields le, _1st, quantile and a colliding key_le export as key_le, key_1st, key_quantile, key3; promtool accepts the file"

# 2. One map its reader cannot open: the others are exported, it is a metric.
chmod 0400 "$PIN/map_compaction_compaction_duration_map"
export_as "$U"
grep -q '^kstats_export_labels_latency_seconds_count{.*} 5$' "$OUT/k.prom" &&
	grep -q '^kstats_metric_read_error{metric="CompactionDuration",object="compaction"} 1$' "$OUT/k.prom" &&
	grep -q '^kstats_metric_read_error{metric="ExportLabelsLatency",object="exportLabels"} 0$' "$OUT/k.prom" &&
	grep -q '^kstats_metric_loaded{metric="CompactionDuration",object="compaction"} 1$' "$OUT/k.prom" ||
	fail "one unreadable map (exit $rc, $(cat "$tmp/err")): $(grep -v '^#' "$OUT/k.prom" | grep -v _bucket | head -6 | tr '\n' ' ')"
[ "$rc" = 5 ] && [ "$(grep -c . "$tmp/err")" = 1 ] && grep -q '^kstats dump: CompactionDuration: ' "$tmp/err" ||
	fail "one unreadable map: exit $rc (5 expected), stderr: $(cat "$tmp/err")"
out=$(promtool check metrics <"$OUT/k.prom" 2>&1) || fail "one unreadable map: promtool: $out"
pass "one map the export user cannot read: the other exported, kstats_metric_read_error 1 for it, one line, exit 5"
chmod 0440 "$PIN/map_compaction_compaction_duration_map"

# 3. Nothing loaded: the file says so (every kstats_metric_loaded 0).
# Disabled, the maps stay pinned for a last pull: their counts may show.
nothing() {	# label exit
	[ "$rc" = "$2" ] && [ "$(grep -c '^kstats_metric_loaded{.*} 0$' "$OUT/k.prom")" = 2 ] &&
		! grep -q '^kstats_metric_loaded{.*} 1$' "$OUT/k.prom" ||
		fail "$1: exit $rc, file: $(grep -v '^#' "$OUT/k.prom" | grep -v _bucket | head -4 | tr '\n' ' ')"
	pass "$1: the export is rewritten with every kstats_metric_loaded 0 (exit $2)"
}
load --disable all || fail "disable = all: the loader failed"
export_as root
nothing "disable = all" 0
load && export_as root && grep -q '^kstats_metric_loaded{.*} 1$' "$OUT/k.prom" ||
	fail "reload: not loaded again"
"$B/kstats-loader" --unload --obj-dir "$OBJ" --pin-dir "$PIN" --run-dir "$RUN" >/dev/null 2>&1
export_as "$U"
grep -q _bucket "$OUT/k.prom" && fail "after --unload: buckets still exported"
nothing "after --unload (as the export user)" 3

# 4. A pull out of descriptors blames no reload.
load || fail "setup: reload failed"
mkdir -p "$tmp/state" "$tmp/atoms"
hits=0
for n in $(seq 4 24); do
	out=$(ulimit -n "$n"; "$B/kstats" pull --obj-dir "$OBJ" --pin-dir "$PIN" \
		--status-file "$RUN/loader-status.json" --state-dir "$tmp/state" \
		--out-dir "$tmp/atoms" 2>&1)
	grep -q 'replaced while being read' <<<"$out" &&
		fail "ulimit -n $n: a pull blames a reload: $(echo "$out" | head -2)"
	grep -q 'Too many open files' <<<"$out" && hits=$((hits + 1))
done
[ "$hits" -gt 0 ] || fail "no limit from 4 to 24 ran the pull out of descriptors"
pass "a pull out of descriptors ($hits limits) says so, never a reload"
