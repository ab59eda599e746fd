// SPDX-License-Identifier: GPL-2.0
/*
 * Loader tests: kprobe variants, the last fallback of an attach point.
 * task_rename has a tracepoint, so its kprobe variant never runs; the
 * optional missing tracepoint runs as a kprobe where the kernel has kprobes,
 * and is skipped cleanly where it has none.
 */
#include "loader_common.h"

DEFINE_BPF_MAP(rename_count_map, HASH, __u32, __u64, RENAME_COUNT_ENTRIES);

DEFINE_BPF_TRACEPOINT(task_rename, root, root, on_rename)(__u64 *ctx)
{
	return count_rename(&rename_count_map);
}

DEFINE_BPF_KPROBE(__set_task_comm, task_rename, root, root, on_rename_kprobe)
(struct pt_regs *ctx)
{
	return count_rename(&rename_count_map);
}

DEFINE_BPF_TRACEPOINT_OPT(kstats_test_no_such_tracepoint, root, root, on_missing)
(__u64 *ctx)
{
	return 0;
}

DEFINE_BPF_KPROBE_KVER_OPT(__set_task_comm, kstats_test_no_such_tracepoint, root, root,
			   on_missing_kprobe, 0, KSTATS_KVER_INF, KSTATS_PROG_OPTIONAL)
(struct pt_regs *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
