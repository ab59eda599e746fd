// SPDX-License-Identifier: GPL-2.0
/*
 * Loader tests: two handlers of one attach point for two kernel ranges,
 * [0, 6.1.0) and [6.1.0, inf), and an object range of [5.4.0, 7.0.0).
 */
#include "loader_common.h"

DEFINE_BPF_OBJECT_KVER(KSTATS_KVER(5, 4, 0), KSTATS_KVER(7, 0, 0), 0);

DEFINE_BPF_MAP(rename_count_map, HASH, __u32, __u64, RENAME_COUNT_ENTRIES);

DEFINE_BPF_TRACEPOINT_KVER_OPT(task_rename, root, root, on_old, 0,
			       KSTATS_KVER(6, 1, 0), 0)(__u64 *ctx)
{
	return count_rename(&rename_count_map);
}

DEFINE_BPF_TRACEPOINT_KVER_OPT(task_rename, root, root, on_new, KSTATS_KVER(6, 1, 0),
			       KSTATS_KVER_INF, 0)(__u64 *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (!tgid)
		return 0;
	return count_rename(&rename_count_map);
}

char LICENSE[] SEC("license") = "GPL";
