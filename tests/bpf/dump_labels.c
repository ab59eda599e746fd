// SPDX-License-Identifier: GPL-2.0
/*
 * Histogram maps for the kstats dump/status tests, one per label rule: an
 * enum key, a typedef'd node id, a struct key, an id with a names
 * dictionary, a system-wide array, and a drop counter.  The tests write
 * the values; the one program is attached to a tracepoint that never fires
 * here (power:suspend_resume), so nothing else changes them.
 */
#include "vmlinux.h"
#include "bpf_telemetry.h"
#include "kstats_keys.h"

typedef __u32 kstats_node_id;

struct dump_pair_key {
	__u32 node_id;
	enum kstats_process_state state;
};

DEFINE_BPF_MAP_GRO(dump_state_map, HASH, enum kstats_process_state,
		   struct bpf_telemetry_accumulator, 16, kstats);
DEFINE_BPF_HISTOGRAM(dump_state_map, "TestStateLatency", KSTATS_UNIT_USEC);

DEFINE_BPF_MAP_GRO(dump_node_map, HASH, kstats_node_id,
		   struct bpf_telemetry_accumulator, 8, kstats);
DEFINE_BPF_HISTOGRAM(dump_node_map, "TestNodeLatency", KSTATS_UNIT_USEC);

DEFINE_BPF_MAP_GRO(dump_pair_map, HASH, struct dump_pair_key,
		   struct bpf_telemetry_accumulator, 8, kstats);
DEFINE_BPF_HISTOGRAM(dump_pair_map, "TestPairLatency", KSTATS_UNIT_USEC);

DEFINE_BPF_MAP_GRO(dump_pool_map, HASH, __u32, struct bpf_telemetry_accumulator, 8, kstats);
DEFINE_BPF_MAP_GRO(dump_pool_names_map, HASH, __u32, struct kstats_name, 8, kstats);
DEFINE_BPF_HISTOGRAM_NAMED(dump_pool_map, "TestPoolSizes", KSTATS_UNIT_BYTES,
			   dump_pool_names_map);

DEFINE_BPF_MAP_GRO(dump_total_map, ARRAY, __u32, struct bpf_telemetry_accumulator, 1, kstats);
DEFINE_BPF_HISTOGRAM(dump_total_map, "TestSystemWide", KSTATS_UNIT_USEC);

DEFINE_BPF_MAP_GRO(dump_events_drops, ARRAY, __u32, __u64, 2, kstats);

DEFINE_BPF_TRACEPOINT(suspend_resume, root, kstats, on_dump_never)(__u64 *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
