/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Loader tests: one map whose shape each loader_shape_*.c changes in one
 * respect only (type, key size, value size, max_entries or flags).  Key and
 * value keep their type names, so only the shape check can tell them apart.
 */
#include "loader_common.h"

#ifndef SHAPE_TYPE
#define SHAPE_TYPE HASH
#endif
#ifndef SHAPE_ENTRIES
#define SHAPE_ENTRIES RENAME_COUNT_ENTRIES
#endif
#ifndef SHAPE_FLAGS
#define SHAPE_FLAGS 0
#endif

struct shape_key {
	__u32 tgid;
#ifdef SHAPE_WIDE_KEY
	__u32 pad;
#endif
};

struct shape_value {
	__u64 count;
#ifdef SHAPE_WIDE_VALUE
	__u64 pad;
#endif
};

/* One level more, so SHAPE_TYPE expands before the macro pastes it. */
#define SHAPE_MAP(type, entries, flags)					\
	DEFINE_BPF_MAP_UGMF(shape_map, type, struct shape_key,		\
			    struct shape_value, entries, root, root, 0600, flags)
SHAPE_MAP(SHAPE_TYPE, SHAPE_ENTRIES, SHAPE_FLAGS);

DEFINE_BPF_TRACEPOINT(task_rename, root, root, on_rename)(__u64 *ctx)
{
	struct shape_key key = { .tgid = bpf_get_current_pid_tgid() >> 32 };
	struct shape_value one = { .count = 1 };

	bpf_map_update_elem(&shape_map, &key, &one, BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
