// SPDX-License-Identifier: GPL-2.0
/*
 * CmaAllocationLatency: cma_alloc_start -> cma_alloc_finish per thread,
 * keyed by the pool's name id (cma_pool_names_map resolves it).
 */
#include "vmlinux.h"
#include "bpf_telemetry.h"

#define CMA_MAX_POOLS 16	/* CMA areas: the default one plus a few per SoC */

DEFINE_BPF_TASK_START_MAP(cma_start_map);
DEFINE_BPF_MAP_GRO_F(cma_alloc_latency_map, HASH, __u32,
		     struct bpf_telemetry_accumulator, CMA_MAX_POOLS, kstats,
		     BPF_F_NO_PREALLOC);
DEFINE_BPF_MAP_GRO_F(cma_pool_names_map, HASH, __u32, struct kstats_name,
		     CMA_MAX_POOLS, kstats, BPF_F_NO_PREALLOC);
DEFINE_BPF_HISTOGRAM_NAMED(cma_alloc_latency_map, "CmaAllocationLatency",
			   KSTATS_UNIT_USEC, cma_pool_names_map);

DEFINE_BPF_TRACEPOINT(cma_alloc_start, root, kstats, on_cma_alloc_start)
(__u64 *ctx)
{
	SAVE_FIRST_TASK_START_TIME(cma_start_map);
	return 0;
}

/*
 * ctx[0] is the pool name in 6.1 and 6.18 alike; the rest differs.  Failed
 * allocations count too: their latency is the caller's wait as well.
 */
DEFINE_BPF_TRACEPOINT(cma_alloc_finish, root, kstats, on_cma_alloc_finish)
(__u64 *ctx)
{
	__u32 bucket = GET_TASK_LATENCY_BUCKET(cma_start_map);
	struct kstats_name pool;
	__u32 id;

	if (bucket == BPF_TELEMETRY_INVALID_BUCKET)
		return 0;
	kstats_name_read(&pool, (const void *)ctx[0]);
	id = kstats_name_id(&cma_pool_names_map, &pool);
	INCREMENT_ACCUMULATOR(cma_alloc_latency_map, &id, bucket);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
