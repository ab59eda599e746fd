// SPDX-License-Identifier: GPL-2.0
/*
 * Maps shaped like the cma object's (include/kstats_keys.h), no programs:
 * this kernel has no cma tracepoints, so tests/kernel/test_pull.c pins these
 * under the cma names and writes them to drive hash keys that come and go
 * and the id -> name dictionary through kstats pull.
 */
#include "vmlinux.h"
#include "bpf_telemetry.h"
#include "kstats_keys.h"

DEFINE_BPF_MAP_GRO(cma_alloc_latency_map, HASH, __u32,
		   struct bpf_telemetry_accumulator, 64, kstats);
DEFINE_BPF_MAP_GRO(cma_pool_names_map, HASH, __u32, struct kstats_name, 64, kstats);

char LICENSE[] SEC("license") = "GPL";
