// SPDX-License-Identifier: GPL-2.0
/*
 * Loader tests: a handler the verifier accepts only as raw_tp.  As tp_btf,
 * ctx[0] is a task_struct pointer and multiplying it is refused; as raw_tp
 * it is a plain number.  The loader falls back to the raw_tp variant.
 */
#include "loader_common.h"

DEFINE_BPF_MAP(rename_count_map, HASH, __u32, __u64, RENAME_COUNT_ENTRIES);
DEFINE_BPF_MAP(scaled_map, ARRAY, __u32, __u64, 1);

DEFINE_BPF_TRACEPOINT(task_rename, root, root, on_rename)(__u64 *ctx)
{
	__u32 key = 0;
	__u64 scaled = ctx[0] * 3;

	bpf_map_update_elem(&scaled_map, &key, &scaled, BPF_ANY);
	return count_rename(&rename_count_map);
}

char LICENSE[] SEC("license") = "GPL";
