// SPDX-License-Identifier: GPL-2.0
/*
 * Loader tests: kprobe variants, the last fallback of an attach point.
 * task_rename has a tracepoint, so its kprobe variant never runs; the
 * optional missing tracepoint runs as a kprobe where the kernel has kprobes,
 * and is skipped cleanly where it has none.
 */
#include "loader_common.h"

#define KPROBE_VARIANT(fn, group, func)						\
	__KSTATS_PROG_META(fn, group, root, root, KSTATS_VARIANT_KPROBE, 0,	\
			   KSTATS_KVER_INF, KSTATS_PROG_OPTIONAL);		\
	SEC("kprobe/" func) int fn

DEFINE_BPF_MAP(rename_count_map, HASH, __u32, __u64, RENAME_COUNT_ENTRIES);

DEFINE_BPF_TRACEPOINT(task_rename, root, root, on_rename)(__u64 *ctx)
{
	return count_rename(&rename_count_map);
}

KPROBE_VARIANT(on_rename_kprobe, "task_rename", "__set_task_comm")(struct pt_regs *ctx)
{
	return count_rename(&rename_count_map);
}

DEFINE_BPF_TRACEPOINT_OPT(kstats_test_no_such_tracepoint, root, root, on_missing)
(__u64 *ctx)
{
	return 0;
}

KPROBE_VARIANT(on_missing_kprobe, "kstats_test_no_such_tracepoint",
	       "__set_task_comm")(struct pt_regs *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
