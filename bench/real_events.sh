#!/usr/bin/env bash
# Real-event overhead: run_time_ns / run_cnt of the attached programs under a
# fixed compaction workload, from kernel.bpf_stats_enabled (restored after).
# Usage: bench/real_events.sh BUILD [TRIGGERS]
set -eu
BUILD=${1:-build}
TRIGGERS=${2:-50}
PIN=/sys/fs/bpf/kernelstats-bench-$$
STATS=/proc/sys/kernel/bpf_stats_enabled
old=$(cat $STATS)
cleanup() { echo "$old" > $STATS; rm -rf "$PIN"; }
trap cleanup EXIT

"$BUILD/kstats-loader" --obj-dir "$BUILD/bpf" --pin-dir "$PIN" >/dev/null
echo 1 > $STATS
start=$(date +%s%N)
for _ in $(seq "$TRIGGERS"); do echo 1 > /proc/sys/vm/compact_memory; done
wall_ms=$(( ($(date +%s%N) - start) / 1000000 ))
printf '%-44s %10s %12s %10s\n' program run_cnt run_time_ns ns/event
for p in "$PIN"/prog_*; do
	bpftool prog show pinned "$p" -j | jq -r --arg n "${p##*/prog_}" \
		'[$n, (.run_cnt // 0), (.run_time_ns // 0),
		  (if (.run_cnt // 0) > 0 then (.run_time_ns / .run_cnt | floor) else "-" end)]
		 | @tsv' | awk -F'\t' '{ printf "%-44s %10s %12s %10s\n", $1, $2, $3, $4 }'
done
echo "workload: $TRIGGERS x compact_memory in ${wall_ms} ms wall"
