/* SPDX-License-Identifier: GPL-2.0 */
/* The current thread's Android process state (doc/design.md "Process state"). */
#ifndef KSTATS_BPF_PROCESS_STATE_H
#define KSTATS_BPF_PROCESS_STATE_H

#include <bpf/bpf_core_read.h>
#include "kstats_keys.h"

/* From current->signal->oom_score_adj; a failed read gives UNSPECIFIED. */
static __always_inline enum kstats_process_state kstats_current_process_state(void)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	short adj;

	if (BPF_CORE_READ_INTO(&adj, task, signal, oom_score_adj))
		return KSTATS_PROCESS_STATE_UNSPECIFIED;
	return kstats_process_state_from_adj(adj);
}

#endif /* KSTATS_BPF_PROCESS_STATE_H */
