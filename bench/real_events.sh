#!/usr/bin/env bash
# Real-event overhead: in-kernel ns per run of every attached program under a
# compaction workload (echo 1 > /proc/sys/vm/compact_memory), from
# kernel.bpf_stats_enabled (restored after).  ROUNDS rounds of TRIGGERS/ROUNDS
# triggers; per round, run_time_ns / run_cnt of the round's runs.
# Prints bench/lib/bstat.h RESULT lines.  Usage: bench/real_events.sh BUILD [TRIGGERS]
set -eu
BUILD=${1:-build}
TRIGGERS=${2:-50}
ROUNDS=${ROUNDS:-5}
cd "$(dirname "$0")/.."
. bench/lib/bstat.sh
PIN=/sys/fs/bpf/kernelstats-bench-$$
RUN=$(mktemp -d /tmp/kstats-bench-run-XXXXXX)
STATS=/proc/sys/kernel/bpf_stats_enabled
old=$(cat $STATS)
cleanup() { echo "$old" > $STATS; rm -rf "$PIN" "$RUN"; }
trap cleanup EXIT

# "name run_cnt run_time_ns" per pinned program.
snapshot() {
	local p
	for p in "$PIN"/prog_*; do
		bpftool prog show pinned "$p" -j |
			jq -r --arg n "${p##*/prog_}" '"\($n) \(.run_cnt // 0) \(.run_time_ns // 0)"'
	done
}

"$BUILD/kstats-loader" --obj-dir "$BUILD/bpf" --pin-dir "$PIN" --run-dir "$RUN" >/dev/null 2>&1
echo 1 > $STATS
echo "# real events: $ROUNDS rounds x $(( TRIGGERS / ROUNDS )) compact_memory triggers"
for r in $(seq "$ROUNDS"); do
	snapshot >"$RUN/before"
	for _ in $(seq $(( TRIGGERS / ROUNDS ))); do echo 1 > /proc/sys/vm/compact_memory; done
	snapshot >"$RUN/after"
	# Programs that ran this round: ns per run into one file per program.
	join "$RUN/before" "$RUN/after" | awk -v d="$RUN" '$4 > $2 {
		printf "%.1f\n", ($5 - $3) / ($4 - $2) >> (d "/ns." $1)
		printf "%d\n", $4 - $2 >> (d "/cnt." $1) }'
done
for f in "$RUN"/ns.*; do
	[ -e "$f" ] || continue
	bstat_result "real_events.${f##*/ns.}" ns "$f"
	bstat_result "real_events.${f##*/ns.}.runs" n "$RUN/cnt.${f##*/ns.}"
done
