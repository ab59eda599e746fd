// SPDX-License-Identifier: GPL-2.0
/* Loader tests: one object declaring one metric name for two maps. */
#include "loader_common.h"

DEFINE_BPF_MAP(dup_a_map, ARRAY, __u32, struct bpf_telemetry_accumulator, 1);
DEFINE_BPF_HISTOGRAM(dup_a_map, "TestDupLatency", KSTATS_UNIT_USEC);
DEFINE_BPF_MAP(dup_b_map, ARRAY, __u32, struct bpf_telemetry_accumulator, 1);
DEFINE_BPF_HISTOGRAM(dup_b_map, "test_dup_latency", KSTATS_UNIT_USEC);

DEFINE_BPF_TRACEPOINT(task_rename, root, root, on_rename)(__u64 *ctx)
{
	__u32 key = 0;

	INCREMENT_ACCUMULATOR(dup_a_map, &key, 0);
	INCREMENT_ACCUMULATOR(dup_b_map, &key, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
