// SPDX-License-Identifier: GPL-2.0
/* Pin ownership: copied in as object "a_b"; see loader_owner_a.c. */
#include "loader_common.h"

DEFINE_BPF_MAP(c, HASH, __u32, __u64, RENAME_COUNT_ENTRIES);

DEFINE_BPF_TRACEPOINT(task_rename, root, root, on_rename)(__u64 *ctx)
{
	return count_rename(&c);
}

char LICENSE[] SEC("license") = "GPL";
