// SPDX-License-Identifier: GPL-2.0
/*
 * The key_enum label rule for the kstats dump tests: an ARRAY map (whose
 * keys BTF must see as plain ints) labelled by enum kstats_suspend_phase.
 * Its own object: the .kstats.types entries of DEFINE_BPF_HISTOGRAM_ENUM and
 * DEFINE_BPF_STREAM conflict in one object (a const enum and a non-const
 * pointer in one section).
 */
#include "vmlinux.h"
#include "bpf_telemetry.h"

DEFINE_BPF_MAP_GRO(dump_phase_map, ARRAY, __u32, struct bpf_telemetry_accumulator,
		   KSTATS_SUSPEND_PHASE_COUNT, kstats);
DEFINE_BPF_HISTOGRAM_ENUM(dump_phase_map, "TestPhaseLatency", KSTATS_UNIT_USEC,
			  kstats_suspend_phase);

/* Never fires here (power:suspend_resume); the test writes the values. */
DEFINE_BPF_TRACEPOINT(suspend_resume, root, kstats, on_dump_enum_never)(__u64 *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
