// SPDX-License-Identifier: GPL-2.0
/* CompactionDuration: mm_compaction_begin -> mm_compaction_end, system-wide. */
#include "vmlinux.h"
#include "bpf_telemetry.h"

DEFINE_BPF_TASK_START_MAP(compaction_start_map);
DEFINE_BPF_MAP_GRO(compaction_duration_map, ARRAY, __u32,
		   struct bpf_telemetry_accumulator, 1, kstats);
DEFINE_BPF_HISTOGRAM(compaction_duration_map, "CompactionDuration",
		     KSTATS_UNIT_USEC);

/* Compaction runs in kcompactd and in direct compaction at once: start per thread. */
DEFINE_BPF_TRACEPOINT(mm_compaction_begin, root, kstats, on_compaction_begin)
(__u64 *ctx)
{
	SAVE_FIRST_TASK_START_TIME(compaction_start_map);
	return 0;
}

DEFINE_BPF_TRACEPOINT(mm_compaction_end, root, kstats, on_compaction_end)
(__u64 *ctx)
{
	__u32 key = 0;

	INCREMENT_ACCUMULATOR(compaction_duration_map, &key,
			      GET_TASK_LATENCY_BUCKET(compaction_start_map));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
