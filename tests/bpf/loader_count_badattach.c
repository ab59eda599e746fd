// SPDX-License-Identifier: GPL-2.0
/*
 * Loader tests: loader_count's on_rename as a raw_tp that reads argument 8
 * of a 2-argument tracepoint.  It loads (raw_tp ctx is unchecked at load)
 * but the kernel refuses the attach: FAILED_ATTACH, with the old program
 * put back.
 */
#include "loader_common.h"

DEFINE_BPF_MAP(rename_count_map, HASH, __u32, __u64, RENAME_COUNT_ENTRIES);

DEFINE_BPF_PROG("raw_tp/task_rename", root, root, on_rename)(__u64 *ctx)
{
	if (ctx[7] == 42)
		return 0;
	return count_rename(&rename_count_map);
}

char LICENSE[] SEC("license") = "GPL";
