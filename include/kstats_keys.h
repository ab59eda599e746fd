/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Key types and enums shared by the BPF programs, the atom mapping and the
 * CLI (doc/design.md "Built-in metrics").  Enum values are part of the map and
 * atom format: append only, never renumber.
 *
 * Output maps (pinned as map_<obj>_<map>):
 *   kswapd         kswapd_latency_map          key kstats_node_id
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

/* A NUMA node id; the typedef is what tells tools to label it "node N". */
typedef __u32 kstats_node_id;

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
	/* Appended: the other trace_suspend_resume() actions of the kernel. */
	KSTATS_SUSPEND_PHASE_CPU_OFF,
	KSTATS_SUSPEND_PHASE_CPU_ON,
	KSTATS_SUSPEND_PHASE_SYSCORE_SUSPEND,
	KSTATS_SUSPEND_PHASE_SYSCORE_RESUME,
	KSTATS_SUSPEND_PHASE_ACPI_SUSPEND,
	KSTATS_SUSPEND_PHASE_COUNT,
};

/*
 * The kernel's action string of each phase (TPS() in kernel/power/,
 * drivers/base/power/main.c, drivers/base/syscore.c, kernel/cpu.c and
 * drivers/acpi/sleep.c).  BPF matches the action against this table, so it
 * must stay in step with the enum; OTHER's entry is only its display name.
 */
#define KSTATS_SUSPEND_ACTION_MAX KSTATS_NAME_MAX

static const char kstats_suspend_phase_names[KSTATS_SUSPEND_PHASE_COUNT]
					    [KSTATS_SUSPEND_ACTION_MAX]
	__attribute__((unused)) = {
	[KSTATS_SUSPEND_PHASE_OTHER] = "other",
	[KSTATS_SUSPEND_PHASE_SUSPEND_ENTER] = "suspend_enter",
	[KSTATS_SUSPEND_PHASE_SYNC_FILESYSTEMS] = "sync_filesystems",
	[KSTATS_SUSPEND_PHASE_FREEZE_PROCESSES] = "freeze_processes",
	[KSTATS_SUSPEND_PHASE_DPM_PREPARE] = "dpm_prepare",
	[KSTATS_SUSPEND_PHASE_DPM_SUSPEND] = "dpm_suspend",
	[KSTATS_SUSPEND_PHASE_DPM_SUSPEND_LATE] = "dpm_suspend_late",
	[KSTATS_SUSPEND_PHASE_DPM_SUSPEND_NOIRQ] = "dpm_suspend_noirq",
	[KSTATS_SUSPEND_PHASE_MACHINE_SUSPEND] = "machine_suspend",
	[KSTATS_SUSPEND_PHASE_DPM_RESUME_NOIRQ] = "dpm_resume_noirq",
	[KSTATS_SUSPEND_PHASE_DPM_RESUME_EARLY] = "dpm_resume_early",
	[KSTATS_SUSPEND_PHASE_DPM_RESUME] = "dpm_resume",
	[KSTATS_SUSPEND_PHASE_DPM_COMPLETE] = "dpm_complete",
	[KSTATS_SUSPEND_PHASE_RESUME_CONSOLE] = "resume_console",
	[KSTATS_SUSPEND_PHASE_THAW_PROCESSES] = "thaw_processes",
	[KSTATS_SUSPEND_PHASE_CPU_OFF] = "CPU_OFF",
	[KSTATS_SUSPEND_PHASE_CPU_ON] = "CPU_ON",
	[KSTATS_SUSPEND_PHASE_SYSCORE_SUSPEND] = "syscore_suspend",
	[KSTATS_SUSPEND_PHASE_SYSCORE_RESUME] = "syscore_resume",
	[KSTATS_SUSPEND_PHASE_ACPI_SUSPEND] = "acpi_suspend",
};

#endif /* KSTATS_KEYS_H */
