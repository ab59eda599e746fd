// SPDX-License-Identifier: GPL-2.0
/*
 * The reference for bench/handlers: CompactionDuration written in the usual
 * libbpf-tools style (hash start map keyed by tid, lookup-or-init of a
 * per-key histogram in a hash map, log2, __sync_fetch_and_add).  Written here
 * for the comparison; not used by kernelstats.
 */
#include "vmlinux.h"
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
	__uint(max_entries, 1);
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

SEC("raw_tp/mm_compaction_begin")
int ref_begin(__u64 *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 ts = bpf_ktime_get_ns();

	bpf_map_update_elem(&ref_start, &tid, &ts, BPF_ANY);
	return 0;
}

SEC("raw_tp/mm_compaction_end")
int ref_end(__u64 *ctx)
{
	static const struct hist zero;
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), key = 0;
	struct hist *h;
	__u64 *tsp, slot;

	tsp = bpf_map_lookup_elem(&ref_start, &tid);
	if (!tsp)
		return 0;
	slot = log2l((bpf_ktime_get_ns() - *tsp) / 1000);
	bpf_map_delete_elem(&ref_start, &tid);
	h = bpf_map_lookup_elem(&ref_hists, &key);
	if (!h) {
		bpf_map_update_elem(&ref_hists, &key, &zero, BPF_NOEXIST);
		h = bpf_map_lookup_elem(&ref_hists, &key);
		if (!h)
			return 0;
	}
	if (slot >= MAX_SLOTS)
		slot = MAX_SLOTS - 1;
	__sync_fetch_and_add(&h->slots[slot], 1);
	return 0;
}

SEC("raw_tp/mm_compaction_begin")
int empty(__u64 *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
