// SPDX-License-Identifier: GPL-2.0
/*
 * Loader tests: one mandatory handler that works, and two optional ones the
 * object loads without: one on a missing tracepoint, one the verifier
 * rejects.
 */
#include "loader_common.h"

DEFINE_BPF_MAP(rename_count_map, HASH, __u32, __u64, RENAME_COUNT_ENTRIES);

DEFINE_BPF_TRACEPOINT(task_rename, root, root, on_rename)(__u64 *ctx)
{
	return count_rename(&rename_count_map);
}

DEFINE_BPF_TRACEPOINT_OPT(kstats_test_no_such_tracepoint, root, root, on_missing)
(__u64 *ctx)
{
	return count_rename(&rename_count_map);
}

DEFINE_BPF_PROG_KVER_OPT("raw_tp/task_rename", root, root, on_rejected, 0,
			 KSTATS_KVER_INF, KSTATS_PROG_OPTIONAL)(__u64 *ctx)
{
	return *(int *)(long)ctx[0];	/* a scalar is no pointer */
}

char LICENSE[] SEC("license") = "GPL";
