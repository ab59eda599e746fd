// SPDX-License-Identifier: GPL-2.0
/*
 * The physical floor for bench/handlers: a begin+end pair doing only what
 * any duration metric must (read the clock and store the start; read the
 * clock, take the start and add once), with no bucket, no lookup of the
 * output row and no bounds.  Two forms, for the two start-slot kinds the
 * metrics use: task local storage (per thread) and an ARRAY slot (per
 * node).  Not used by kernelstats.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} floor_task_start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} floor_slot_start SEC(".maps");

__u64 floor_total;

static __always_inline void floor_begin(__u64 *start)
{
	if (start)
		*start = bpf_ktime_get_ns();
}

static __always_inline void floor_end(__u64 *start)
{
	if (start)
		__sync_fetch_and_add(&floor_total, bpf_ktime_get_ns() - *start);
}

static __always_inline __u64 *task_slot(__u64 flags)
{
	return bpf_task_storage_get(&floor_task_start, bpf_get_current_task_btf(), 0, flags);
}

static __always_inline __u64 *array_slot(void)
{
	__u32 key = 0;

	return bpf_map_lookup_elem(&floor_slot_start, &key);
}

SEC("raw_tp/mm_compaction_begin")
int floor_task_begin(__u64 *ctx)
{
	floor_begin(task_slot(BPF_LOCAL_STORAGE_GET_F_CREATE));
	return 0;
}

SEC("raw_tp/mm_compaction_end")
int floor_task_end(__u64 *ctx)
{
	floor_end(task_slot(0));
	return 0;
}

SEC("raw_tp/mm_vmscan_kswapd_wake")
int floor_slot_begin(__u64 *ctx)
{
	floor_begin(array_slot());
	return 0;
}

SEC("raw_tp/mm_vmscan_kswapd_sleep")
int floor_slot_end(__u64 *ctx)
{
	floor_end(array_slot());
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
