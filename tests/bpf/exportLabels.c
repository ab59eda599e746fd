// SPDX-License-Identifier: GPL-2.0
/*
 * A histogram whose key fields have names the Prometheus exposition
 * refuses or reserves (le, quantile, _1st: a digit once the '_' goes) and
 * one their renaming collides with (key_le): test_hostile_export writes
 * the values; the program never fires here (power:suspend_resume).
 */
#include "vmlinux.h"
#include "bpf_telemetry.h"

struct export_key {
	__u32 le;
	__u32 _1st;
	__u32 quantile;
	__u32 key_le;
};

DEFINE_BPF_MAP_GRO(export_labels_map, HASH, struct export_key,
		   struct bpf_telemetry_accumulator, 8, kstats);
DEFINE_BPF_HISTOGRAM(export_labels_map, "ExportLabelsLatency", KSTATS_UNIT_USEC);

DEFINE_BPF_TRACEPOINT(suspend_resume, root, kstats, on_export_never)(__u64 *ctx)
{
	struct export_key key = {};

	INCREMENT_ACCUMULATOR(export_labels_map, &key, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
