// SPDX-License-Identifier: GPL-2.0
/* Loader tests: loader_count's map with twice the entries: incompatible. */
#include "loader_common.h"

DEFINE_BPF_MAP(rename_count_map, HASH, __u32, __u64, 2 * RENAME_COUNT_ENTRIES);

DEFINE_BPF_TRACEPOINT(task_rename, root, root, on_rename)(__u64 *ctx)
{
	return count_rename(&rename_count_map);
}

char LICENSE[] SEC("license") = "GPL";
