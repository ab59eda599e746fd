// SPDX-License-Identifier: GPL-2.0
/*
 * SuspendResumeLatency: power:suspend_resume(action, val, start), from
 * start=true to start=false of the same action, keyed by phase.  Boot-time
 * clock: a phase spans the time the machine slept.
 */
#include "vmlinux.h"
#include "bpf_telemetry.h"

/* Keyed by the action string itself, so unknown actions pair exactly too. */
DEFINE_BPF_MAP(suspend_start_map, HASH, struct kstats_name, __u64, 32);
/* Key: enum kstats_suspend_phase (an ARRAY key must be a BTF int). */
DEFINE_BPF_MAP_GRO(suspend_resume_latency_map, ARRAY, __u32,
		   struct bpf_telemetry_accumulator, KSTATS_SUSPEND_PHASE_COUNT,
		   kstats);
DEFINE_BPF_HISTOGRAM_ENUM(suspend_resume_latency_map, "SuspendResumeLatency",
			  KSTATS_UNIT_USEC, kstats_suspend_phase);

#define ACTION_WORDS (KSTATS_SUSPEND_ACTION_MAX / 8)

union action {
	struct kstats_name name;
	__u64 words[ACTION_WORDS];
};

static __always_inline __u64 table_word(__u32 phase, __u32 word)
{
	__u64 w;

	__builtin_memcpy(&w, &kstats_suspend_phase_names[phase][word * 8], 8);
	return w;
}

/*
 * Unrolled with constant indices, every table word folds into an immediate:
 * the table costs no .rodata map and the match is a few dozen compares.
 */
static __always_inline __u32 phase_of(const union action *a)
{
	__u32 i, w;
	bool same;

#pragma unroll
	for (i = 1; i < KSTATS_SUSPEND_PHASE_COUNT; i++) {
		same = true;
#pragma unroll
		for (w = 0; w < ACTION_WORDS; w++)
			same &= a->words[w] == table_word(i, w);
		if (same)
			return i;
	}
	return KSTATS_SUSPEND_PHASE_OTHER;
}

/*
 * ctx: action, val, start (unchanged since 3.16).  A begin overwrites: the
 * kernel emits begins without an end on its error paths (enter_state()
 * returning -EBUSY after "suspend_enter"), and phases never nest in
 * themselves, so the latest begin is the one an end closes.
 */
DEFINE_BPF_TRACEPOINT(suspend_resume, root, kstats, on_suspend_resume)
(__u64 *ctx)
{
	__u64 now = bpf_ktime_get_boot_ns();
	union action action;
	__u32 bucket, phase;

	kstats_name_read(&action.name, (const void *)ctx[0]);
	if ((__u8)ctx[2]) {
		SAVE_START_TIME_AT(suspend_start_map, &action.name, now);
		return 0;
	}
	bucket = GET_LATENCY_BUCKET_AT(suspend_start_map, &action.name, now);
	if (bucket == BPF_TELEMETRY_INVALID_BUCKET)
		return 0;
	phase = phase_of(&action);
	INCREMENT_ACCUMULATOR(suspend_resume_latency_map, &phase, bucket);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
