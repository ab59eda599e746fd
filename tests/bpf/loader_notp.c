// SPDX-License-Identifier: GPL-2.0
/* Loader tests: a mandatory handler on a tracepoint no kernel has. */
#include "loader_common.h"

DEFINE_BPF_MAP(rename_count_map, HASH, __u32, __u64, RENAME_COUNT_ENTRIES);

DEFINE_BPF_TRACEPOINT(kstats_test_no_such_tracepoint, root, root, on_missing)(__u64 *ctx)
{
	return count_rename(&rename_count_map);
}

char LICENSE[] SEC("license") = "GPL";
