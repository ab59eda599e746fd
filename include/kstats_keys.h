/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Key types and enums shared by the BPF programs, the atom mapping and the
 * CLI (DESIGN.md "Built-in metrics").  Enum values are part of the map and
 * atom format: append only, never renumber.
 *
 * Output maps (pinned as map_<obj>_<map>):
 *   kswapd         kswapd_latency_map          key __u32 node_id
 *   directReclaim  direct_reclaim_latency_map  key enum kstats_process_state
 *   compaction     compaction_duration_map     key __u32 (0: system-wide)
 *   cma            cma_alloc_latency_map       key __u32 pool id
 *                  cma_pool_names_map          __u32 id -> struct kstats_name
 *   dmabuf         dmabuf_request_sizes_map    key __u32 exporter id
 *                  dmabuf_exporter_names_map   __u32 id -> struct kstats_name
 *   suspendResume  suspend_resume_latency_map  key enum kstats_suspend_phase
 */
#ifndef KSTATS_KEYS_H
#define KSTATS_KEYS_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#define KSTATS_NAME_MAX 32

/* Value of the id -> name dictionaries of CMA pools and dma-buf exporters. */
struct kstats_name {
	char name[KSTATS_NAME_MAX];
};

/* Android ProcessList adj bands, by oom_score_adj. */
enum kstats_process_state {
	KSTATS_PROCESS_STATE_UNSPECIFIED = 0,
	KSTATS_PROCESS_STATE_NATIVE = 1,		/* <= -1000 */
	KSTATS_PROCESS_STATE_SYSTEM = 2,		/* -999..-801 */
	KSTATS_PROCESS_STATE_PERSISTENT = 3,		/* -800..-1 */
	KSTATS_PROCESS_STATE_FOREGROUND = 4,		/* 0..99 */
	KSTATS_PROCESS_STATE_VISIBLE = 5,		/* 100..199 */
	KSTATS_PROCESS_STATE_PERCEPTIBLE = 6,		/* 200..499 */
	KSTATS_PROCESS_STATE_SERVICE_BACKGROUND = 7,	/* 500..899 */
	KSTATS_PROCESS_STATE_CACHED = 8,		/* >= 900 */
	KSTATS_PROCESS_STATE_COUNT,
};

static inline enum kstats_process_state kstats_process_state_from_adj(int adj)
{
	if (adj <= -1000)
		return KSTATS_PROCESS_STATE_NATIVE;
	if (adj <= -801)
		return KSTATS_PROCESS_STATE_SYSTEM;
	if (adj <= -1)
		return KSTATS_PROCESS_STATE_PERSISTENT;
	if (adj <= 99)
		return KSTATS_PROCESS_STATE_FOREGROUND;
	if (adj <= 199)
		return KSTATS_PROCESS_STATE_VISIBLE;
	if (adj <= 499)
		return KSTATS_PROCESS_STATE_PERCEPTIBLE;
	if (adj <= 899)
		return KSTATS_PROCESS_STATE_SERVICE_BACKGROUND;
	return KSTATS_PROCESS_STATE_CACHED;
}

/* power:suspend_resume action strings; an unknown action is OTHER. */
enum kstats_suspend_phase {
	KSTATS_SUSPEND_PHASE_OTHER = 0,
	KSTATS_SUSPEND_PHASE_SUSPEND_ENTER,
	KSTATS_SUSPEND_PHASE_SYNC_FILESYSTEMS,
	KSTATS_SUSPEND_PHASE_FREEZE_PROCESSES,
	KSTATS_SUSPEND_PHASE_DPM_PREPARE,
	KSTATS_SUSPEND_PHASE_DPM_SUSPEND,
	KSTATS_SUSPEND_PHASE_DPM_SUSPEND_LATE,
	KSTATS_SUSPEND_PHASE_DPM_SUSPEND_NOIRQ,
	KSTATS_SUSPEND_PHASE_MACHINE_SUSPEND,
	KSTATS_SUSPEND_PHASE_DPM_RESUME_NOIRQ,
	KSTATS_SUSPEND_PHASE_DPM_RESUME_EARLY,
	KSTATS_SUSPEND_PHASE_DPM_RESUME,
	KSTATS_SUSPEND_PHASE_DPM_COMPLETE,
	KSTATS_SUSPEND_PHASE_RESUME_CONSOLE,
	KSTATS_SUSPEND_PHASE_THAW_PROCESSES,
	KSTATS_SUSPEND_PHASE_COUNT,
};

#endif /* KSTATS_KEYS_H */
