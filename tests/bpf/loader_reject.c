// SPDX-License-Identifier: GPL-2.0
/* Loader tests: a mandatory program the verifier rejects. */
#include "loader_common.h"

DEFINE_BPF_PROG("raw_tp/task_rename", root, root, on_rejected)(__u64 *ctx)
{
	return *(int *)(long)ctx[0];	/* a scalar is no pointer */
}

char LICENSE[] SEC("license") = "GPL";
