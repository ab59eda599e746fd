// SPDX-License-Identifier: GPL-2.0
/*
 * The page's directReclaim.c example, test-only: start times in a hash
 * keyed by thread id, SAVE_FIRST_START_TIME at begin, GET_LATENCY_BUCKET at
 * end.  on_begin_at passes its own clock (ctx[0]) to SAVE_FIRST_START_TIME_AT.
 * On the test's clock (test_clock.h), for exact edges.
 */
#include "test_clock.h"
#include "bpf_telemetry.h"

DEFINE_BPF_MAP(page_start_map, HASH, __u32, __u64, 1024);
DEFINE_BPF_MAP_GRO(page_latency_map, ARRAY, __u32,
		   struct bpf_telemetry_accumulator, 1, kstats);
DEFINE_BPF_HISTOGRAM(page_latency_map, "DirectReclaimLatency", KSTATS_UNIT_USEC);

DEFINE_BPF_TRACEPOINT(mm_vmscan_direct_reclaim_begin, root, kstats, on_begin)
(__u64 *ctx)
{
	__u32 tid = bpf_get_current_pid_tgid();

	SAVE_FIRST_START_TIME(page_start_map, &tid);
	return 0;
}

DEFINE_BPF_PROG("raw_tp/mm_vmscan_direct_reclaim_begin", root, kstats, on_begin_at)
(__u64 *ctx)
{
	__u32 tid = bpf_get_current_pid_tgid();

	SAVE_FIRST_START_TIME_AT(page_start_map, &tid, ctx[0]);
	return 0;
}

DEFINE_BPF_TRACEPOINT(mm_vmscan_direct_reclaim_end, root, kstats, on_end)
(__u64 *ctx)
{
	__u32 tid = bpf_get_current_pid_tgid(), key = 0;
	__u32 bucket = GET_LATENCY_BUCKET(page_start_map, &tid);

	INCREMENT_ACCUMULATOR(page_latency_map, &key, bucket);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
