// SPDX-License-Identifier: GPL-2.0
/*
 * Pin ownership: copied in as object "a", its map b_c and program b_on_rename
 * pin as map_a_b_c and link_a_b_on_rename, the names that object "a_b"
 * (loader_owner_ab.c) gives its map c and program on_rename.
 */
#include "loader_common.h"

DEFINE_BPF_MAP(b_c, HASH, __u32, __u64, RENAME_COUNT_ENTRIES);

DEFINE_BPF_TRACEPOINT(task_rename, root, root, b_on_rename)(__u64 *ctx)
{
	return count_rename(&b_c);
}

char LICENSE[] SEC("license") = "GPL";
