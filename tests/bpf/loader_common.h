/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the loader's test objects: task:task_rename fires on every
 * prctl(PR_SET_NAME), so a test triggers it exactly N times, and the count
 * is kept per tgid so concurrent tests never see each other's renames.
 */
#ifndef KSTATS_TEST_LOADER_COMMON_H
#define KSTATS_TEST_LOADER_COMMON_H

#include "vmlinux.h"
#include "bpf_telemetry.h"

#define RENAME_COUNT_ENTRIES 1024

static __always_inline int count_rename(void *count_map)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u64 one = 1, *n = bpf_map_lookup_elem(count_map, &tgid);

	if (n)
		__sync_fetch_and_add(n, 1);
	else
		bpf_map_update_elem(count_map, &tgid, &one, BPF_NOEXIST);
	return 0;
}

#endif
