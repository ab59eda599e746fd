// SPDX-License-Identifier: GPL-2.0
/* Loader tests: loader_count with other code and the same maps (an upgrade). */
#include "loader_common.h"

DEFINE_BPF_MAP(rename_count_map, HASH, __u32, __u64, RENAME_COUNT_ENTRIES);

DEFINE_BPF_TRACEPOINT(task_rename, root, root, on_rename)(__u64 *ctx)
{
	if (!(__u32)bpf_get_current_pid_tgid())
		return 0;	/* never the idle task */
	return count_rename(&rename_count_map);
}

char LICENSE[] SEC("license") = "GPL";
