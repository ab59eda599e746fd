// SPDX-License-Identifier: GPL-2.0
/*
 * compaction.bpf as a newer version whose histogram map changed layout
 * (a hash keyed by __u64): installed over the old one while its map is
 * pinned, the loader refuses it until the next boot (test_upgrade_layout).
 */
#include "vmlinux.h"
#include "bpf_telemetry.h"

DEFINE_BPF_TASK_START_MAP(compaction_start_map);
DEFINE_BPF_MAP_GRO(compaction_duration_map, HASH, __u64,
		   struct bpf_telemetry_accumulator, 1, kstats);
DEFINE_BPF_HISTOGRAM(compaction_duration_map, "CompactionDuration",
		     KSTATS_UNIT_USEC);

DEFINE_BPF_TRACEPOINT(mm_compaction_begin, root, kstats, on_compaction_begin)
(__u64 *ctx)
{
	SAVE_FIRST_TASK_START_TIME(compaction_start_map);
	return 0;
}

DEFINE_BPF_TRACEPOINT(mm_compaction_end, root, kstats, on_compaction_end)
(__u64 *ctx)
{
	__u64 key = 0;

	INCREMENT_ACCUMULATOR(compaction_duration_map, &key,
			      GET_TASK_LATENCY_BUCKET(compaction_start_map));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
