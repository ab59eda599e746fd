// SPDX-License-Identifier: GPL-2.0
/* Loader tests: counts task_rename per tgid (re-run, unload, bpffs mount). */
#include "loader_common.h"

DEFINE_BPF_MAP(rename_count_map, HASH, __u32, __u64, RENAME_COUNT_ENTRIES);

DEFINE_BPF_TRACEPOINT(task_rename, root, root, on_rename)(__u64 *ctx)
{
	return count_rename(&rename_count_map);
}

char LICENSE[] SEC("license") = "GPL";
