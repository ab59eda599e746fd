// SPDX-License-Identifier: GPL-2.0
/* KswapdLatency: mm_vmscan_kswapd_wake -> mm_vmscan_kswapd_sleep, per node. */
#include "vmlinux.h"
#include "bpf_telemetry.h"

/* Nodes at or above this id are not counted (doc/metrics.md). */
#define KSWAPD_MAX_NODES 16

DEFINE_BPF_MAP(kswapd_start_map, ARRAY, __u32, __u64, KSWAPD_MAX_NODES);
/* Most machines have one node: a hash pays only for the nodes that exist. */
DEFINE_BPF_MAP_GRO_F(kswapd_latency_map, HASH, kstats_node_id,
		     struct bpf_telemetry_accumulator, KSWAPD_MAX_NODES, kstats,
		     BPF_F_NO_PREALLOC);
DEFINE_BPF_HISTOGRAM(kswapd_latency_map, "KswapdLatency", KSTATS_UNIT_USEC);

/*
 * Both events fire in the node's kswapd thread.  Wake fires on every pass of
 * its balance loop, sleep only once it goes idle: the first wake starts it.
 * ctx[0] is nid in every kernel since the events exist.
 */
DEFINE_BPF_TRACEPOINT(mm_vmscan_kswapd_wake, root, kstats, on_kswapd_wake)
(__u64 *ctx)
{
	kstats_node_id nid = (kstats_node_id)ctx[0];

	if (nid < KSWAPD_MAX_NODES)
		SAVE_FIRST_SLOT_START_TIME(kswapd_start_map, &nid);
	return 0;
}

DEFINE_BPF_TRACEPOINT(mm_vmscan_kswapd_sleep, root, kstats, on_kswapd_sleep)
(__u64 *ctx)
{
	kstats_node_id nid = (kstats_node_id)ctx[0];
	__u32 bucket = GET_SLOT_LATENCY_BUCKET(kswapd_start_map, &nid);

	INCREMENT_ACCUMULATOR(kswapd_latency_map, &nid, bucket);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
