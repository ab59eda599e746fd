// SPDX-License-Identifier: GPL-2.0
/*
 * DirectReclaimLatency: mm_vmscan_direct_reclaim_begin -> _end per thread,
 * keyed by the process state of current->signal->oom_score_adj.
 */
#include "vmlinux.h"
#include "bpf_telemetry.h"
#include "bpf_process_state.h"

DEFINE_BPF_TASK_START_MAP(direct_reclaim_start_map);
/* Key: enum kstats_process_state (an ARRAY key must be a BTF int). */
DEFINE_BPF_MAP_GRO(direct_reclaim_latency_map, ARRAY, __u32,
		   struct bpf_telemetry_accumulator, KSTATS_PROCESS_STATE_COUNT,
		   kstats);
DEFINE_BPF_HISTOGRAM_ENUM(direct_reclaim_latency_map, "DirectReclaimLatency",
			  KSTATS_UNIT_USEC, kstats_process_state);

/* Neither handler reads its arguments: their lists may change across kernels. */
DEFINE_BPF_TRACEPOINT(mm_vmscan_direct_reclaim_begin, root, kstats,
		      on_direct_reclaim_begin)
(__u64 *ctx)
{
	SAVE_FIRST_TASK_START_TIME(direct_reclaim_start_map);
	return 0;
}

DEFINE_BPF_TRACEPOINT(mm_vmscan_direct_reclaim_end, root, kstats,
		      on_direct_reclaim_end)
(__u64 *ctx)
{
	__u32 bucket = GET_TASK_LATENCY_BUCKET(direct_reclaim_start_map);
	__u32 state;

	if (bucket == BPF_TELEMETRY_INVALID_BUCKET)
		return 0;
	state = kstats_current_process_state();
	INCREMENT_ACCUMULATOR(direct_reclaim_latency_map, &state, bucket);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
