#!/usr/bin/env bash
# Adding a metric is one bpfprogs/ file and one proto message with its oneof
# line (doc/writing-a-metric.md): a copy of the tree gets exactly that
# (tests/new_metric/: BlockIoLatency, block_rq_issue -> block_rq_complete),
# is built, its new object loaded, and pulled twice around real direct I/O
# on the block device under the temp dir; protoc decodes the new atoms.
# The tree's own kstats, which lacks the message, must warn with the fix.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${KSTATS_BUILD:-build}
T=pull_new_metric
NEW=tests/new_metric

pass() { echo "PASS: $T: $1"; }

. tests/lib/shtest.sh
shtest_setup newmetric protoc
[ -d /sys/kernel/tracing/events/block/block_rq_issue ] ||
	skip "the kernel has no block:block_rq_issue tracepoint"
dev=$(df --output=source "$TMP" | tail -1)
[ -b "$dev" ] || skip "$TMP is not on a block device ($dev): no block I/O to count"

# The copy: what a fresh clone builds from, then the two-file change.
SRC=$TMP/src
mkdir -p "$SRC/build"
cp -a Makefile mk include bpfprogs btfreader cli puller proto loader "$SRC"/ || fail "copy"
cp "$BUILD/vmlinux.h" "$SRC/build/" 2>/dev/null	# saves a bpftool dump
cp -a "$SRC" "$TMP/orig"
cp "$NEW/blockIo.c" "$SRC/bpfprogs/blockIo.c"
cat "$NEW/BlockIoLatency.proto" >>"$SRC/proto/kernelstats_atoms.proto"
sed -i "/SuspendResumeLatency suspend_resume_latency = 100006;/r $NEW/oneof.line" \
	"$SRC/proto/kernelstats_atoms.proto"
(cd "$TMP" && git diff --no-index --numstat orig src) >"$TMP/change"
lines=$(awk '{n += $1 + $2} END {print n}' "$TMP/change")
[ "$(wc -l <"$TMP/change")" -eq 2 ] && grep -q 'bpfprogs/blockIo.c' "$TMP/change" &&
	grep -q 'proto/kernelstats_atoms.proto' "$TMP/change" ||
	fail "the change is not exactly the two files: $(cat "$TMP/change")"
echo "# $T: the change is 2 files, $lines lines"

# A plain build, whatever make test passes down (SAN=1, BUILD, jobserver).
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$SRC" -j2 BUILD=build SAN=0 all >"$TMP/make.log" 2>&1 ||
	fail "the copy does not build: $(grep -m3 -E 'error|Error' "$TMP/make.log")"
mkdir "$TMP/objs"
cp "$SRC/build/bpf/blockIo.bpf" "$TMP/objs/"
"$SRC/build/kstats-loader" --obj-dir "$TMP/objs" --pin-dir "$PIN" --run-dir "$TMP/run" \
	>"$TMP/loader.log" 2>&1 || fail "kstats-loader: $(tail -2 "$TMP/loader.log")"
[ -e "$PIN/map_blockIo_block_io_latency_map" ] || fail "blockIo did not load: $(tail -2 "$TMP/loader.log")"

pull() {	# kstats-binary log
	"$1" pull --obj-dir "$SRC/build/bpf" --pin-dir "$PIN" --state-dir "$TMP/state-$(basename "$(dirname "$1")")" \
		--out-dir "$TMP/atoms-$(basename "$(dirname "$1")")" --status-file "$TMP/run/loader-status.json" \
		--max-age 0 --max-files 0 --max-bytes 0 >"$2.out" 2>"$2"
}
io() {	# direct writes and reads on the block device, then a flush
	dd if=/dev/zero of="$TMP/io" bs=64k count=64 oflag=direct conv=fsync status=none &&
	dd if="$TMP/io" of=/dev/null bs=64k iflag=direct status=none
}

io || fail "direct I/O to $TMP failed"
pull "$SRC/build/kstats" "$TMP/pull1.log" || fail "first pull: $(cat "$TMP/pull1.log")"
! grep -q warning "$TMP/pull1.log" || fail "first pull warned: $(grep -m2 warning "$TMP/pull1.log")"
io || fail "direct I/O to $TMP failed"
pull "$SRC/build/kstats" "$TMP/pull2.log" || fail "second pull: $(cat "$TMP/pull2.log")"
last=$(ls "$TMP"/atoms-build/atoms-*.pb 2>/dev/null | tail -1)
[ -n "$last" ] || fail "no atoms file after real I/O"
protoc -I"$SRC/proto" --decode=kernelstats.AtomList "$SRC/proto/kernelstats_atoms.proto" \
	<"$last" >"$TMP/decoded" || fail "protoc cannot decode $last"
grep -q '^  atom_id: 100007$' "$TMP/decoded" && grep -q '^  block_io_latency {$' "$TMP/decoded" &&
	grep -q '^    op: OP_WRITE$' "$TMP/decoded" && grep -q '^    op: OP_READ$' "$TMP/decoded" ||
	fail "no BlockIoLatency atoms for reads and writes in the second pull: $(head -c 400 "$TMP/decoded")"
grep -Eq '^    duration_log2_buckets_micros: [1-9]' "$TMP/decoded" ||
	fail "BlockIoLatency atoms have no counts"
[ "$(grep -c '^    duration_log2_buckets_micros: ' "$TMP/decoded")" -eq \
  $((32 * $(grep -c '^  block_io_latency {$' "$TMP/decoded"))) ] || fail "not 32 buckets per atom"
pass "a seventh metric (2 files, $lines lines) reaches atoms from real block I/O"

# The tree's own kstats has no BlockIoLatency message: one warning with the fix.
pull "$BUILD/kstats" "$TMP/stock.log"	# exits 3: no other map is pinned
grep -q "warning: histogram BlockIoLatency (blockIo/block_io_latency_map) has no atom: add message BlockIoLatency" \
	"$TMP/stock.log" || fail "no warning about the missing message: $(head -3 "$TMP/stock.log")"
pass "a histogram without a message warns with the fix"
