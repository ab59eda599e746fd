// SPDX-License-Identifier: GPL-2.0
/*
 * The references for bench/handlers: the metrics written in the usual
 * libbpf-tools style (hash start map keyed by tid or node, lookup-or-init of
 * a per-key histogram in a hash map, log2, __sync_fetch_and_add).  Written
 * here for the comparison; not used by kernelstats.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#define MAX_SLOTS 32

struct hist {
	__u64 slots[MAX_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, __u64);
} ref_start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct hist);
} ref_hists SEC(".maps");

static __always_inline __u64 log2_u32(__u32 v)
{
	__u32 shift, r;

	r = (v > 0xFFFF) << 4; v >>= r;
	shift = (v > 0xFF) << 3; v >>= shift; r |= shift;
	shift = (v > 0xF) << 2; v >>= shift; r |= shift;
	shift = (v > 0x3) << 1; v >>= shift; r |= shift;
	r |= (v >> 1);
	return r;
}

static __always_inline __u64 log2l(__u64 v)
{
	__u32 hi = v >> 32;

	return hi ? log2_u32(hi) + 32 : log2_u32(v);
}

static __always_inline int ref_start_at(__u32 key)
{
	__u64 ts = bpf_ktime_get_ns();

	bpf_map_update_elem(&ref_start, &key, &ts, BPF_ANY);
	return 0;
}

static __always_inline int ref_end_at(__u32 start_key, __u32 hist_key)
{
	static const struct hist zero;
	struct hist *h;
	__u64 *tsp, slot;

	tsp = bpf_map_lookup_elem(&ref_start, &start_key);
	if (!tsp)
		return 0;
	slot = log2l((bpf_ktime_get_ns() - *tsp) / 1000);
	bpf_map_delete_elem(&ref_start, &start_key);
	h = bpf_map_lookup_elem(&ref_hists, &hist_key);
	if (!h) {
		bpf_map_update_elem(&ref_hists, &hist_key, &zero, BPF_NOEXIST);
		h = bpf_map_lookup_elem(&ref_hists, &hist_key);
		if (!h)
			return 0;
	}
	if (slot >= MAX_SLOTS)
		slot = MAX_SLOTS - 1;
	__sync_fetch_and_add(&h->slots[slot], 1);
	return 0;
}

SEC("raw_tp/mm_compaction_begin")
int ref_compaction_begin(__u64 *ctx)
{
	return ref_start_at((__u32)bpf_get_current_pid_tgid());
}

SEC("raw_tp/mm_compaction_end")
int ref_compaction_end(__u64 *ctx)
{
	return ref_end_at((__u32)bpf_get_current_pid_tgid(), 0);
}

SEC("raw_tp/mm_vmscan_kswapd_wake")
int ref_kswapd_wake(__u64 *ctx)
{
	return ref_start_at((__u32)ctx[0]);
}

SEC("raw_tp/mm_vmscan_kswapd_sleep")
int ref_kswapd_sleep(__u64 *ctx)
{
	return ref_end_at((__u32)ctx[0], (__u32)ctx[0]);
}

SEC("raw_tp/mm_vmscan_direct_reclaim_begin")
int ref_reclaim_begin(__u64 *ctx)
{
	return ref_start_at((__u32)bpf_get_current_pid_tgid());
}

SEC("raw_tp/mm_vmscan_direct_reclaim_end")
int ref_reclaim_end(__u64 *ctx)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	short adj = BPF_CORE_READ(task, signal, oom_score_adj);

	return ref_end_at((__u32)bpf_get_current_pid_tgid(), adj < 0 ? 0 : adj / 100);
}

SEC("raw_tp/mm_compaction_begin")
int empty(__u64 *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
