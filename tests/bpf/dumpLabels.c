// SPDX-License-Identifier: GPL-2.0
/*
 * Histogram maps for the kstats dump/status tests, one per label rule: an
 * enum key, a typedef'd node id, a struct key, an id with a names
 * dictionary, a system-wide array (dumpEnum.c has the key_enum rule); and
 * an event stream, whose drops kstats status shows.  The tests write
 * the values; the one program is attached to a tracepoint that never fires
 * here (power:suspend_resume), so nothing else changes them.
 */
#include "vmlinux.h"
#include "bpf_stream.h"
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

struct dump_event {
	struct kstats_stream_hdr hdr;
	__u32 value;
};

DEFINE_BPF_STREAM(dump_events, dump_event, 64 * 1024, kstats);

DEFINE_BPF_TRACEPOINT(suspend_resume, root, kstats, on_dump_never)(__u64 *ctx)
{
	struct dump_event *e = BPF_STREAM_RESERVE(dump_events);

	if (e) {
		e->value = 1;
		BPF_STREAM_SUBMIT(dump_events, e);
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
