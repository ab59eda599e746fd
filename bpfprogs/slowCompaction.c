// SPDX-License-Identifier: GPL-2.0
/*
 * slow_compaction stream: one record per compaction (mm_compaction_begin ->
 * mm_compaction_end, per thread) that took at least the threshold in
 * slow_compaction_config_map (0: the 1 ms default).  kstats watch prints it.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include "bpf_stream.h"
#include "bpf_process_state.h"

#define SLOW_COMPACTION_DEFAULT_NS 1000000ull

struct slow_compaction_event {
	struct kstats_stream_hdr hdr;	/* ts_ns: the end of the compaction */
	__u64 duration_ns;
	__u32 pid;
	__u32 tid;
	__s32 order;		/* -1: a whole-zone compaction (kcompactd, compact_memory) */
	__s32 status;		/* the kernel's enum compact_result */
	enum kstats_process_state state;
	bool sync;		/* sync (not async) migration */
	char comm[16];
};

struct slow_compaction_config {
	__u64 min_duration_ns;	/* 0: SLOW_COMPACTION_DEFAULT_NS */
};

DEFINE_BPF_TASK_START_MAP(slow_compaction_start_map);
DEFINE_BPF_MAP(slow_compaction_config_map, ARRAY, __u32,
	       struct slow_compaction_config, 1);
DEFINE_BPF_STREAM(slow_compaction, slow_compaction_event, 256 * 1024, kstats);

static __always_inline __u64 min_duration_ns(void)
{
	__u32 zero = 0;
	struct slow_compaction_config *cfg =
		bpf_map_lookup_elem(&slow_compaction_config_map, &zero);

	return cfg && cfg->min_duration_ns ? cfg->min_duration_ns
					   : SLOW_COMPACTION_DEFAULT_NS;
}

DEFINE_BPF_TRACEPOINT(mm_compaction_begin, root, kstats, on_slow_compaction_begin)
(__u64 *ctx)
{
	SAVE_FIRST_TASK_START_TIME(slow_compaction_start_map);
	return 0;
}

/* mm_compaction_end(struct compact_control *cc, zone_start, zone_end, sync, status) */
DEFINE_BPF_TRACEPOINT(mm_compaction_end, root, kstats, on_slow_compaction_end)
(__u64 *ctx)
{
	struct compact_control *cc = (void *)ctx[0];
	__u64 duration = TAKE_TASK_ELAPSED_NS(slow_compaction_start_map);
	__u64 id = bpf_get_current_pid_tgid();
	struct slow_compaction_event *e;

	if (duration == KSTATS_NO_START || duration < min_duration_ns())
		return 0;
	e = BPF_STREAM_RESERVE(slow_compaction);
	if (!e)
		return 0;
	e->duration_ns = duration;
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->order = BPF_CORE_READ(cc, order);
	e->sync = ctx[3] & 1;
	e->status = (__s32)ctx[4];
	e->state = kstats_current_process_state();
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	BPF_STREAM_SUBMIT(slow_compaction, e);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
