// SPDX-License-Identifier: GPL-2.0
/*
 * SuspendResumeLatency in the running kernel.  power:suspend_resume exists
 * here but a test cannot suspend the machine, so the raw_tp handler runs
 * under BPF_PROG_TEST_RUN with (action, val, start), action pointing at
 * real kernel memory (tests/bpf/kmem.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <cmocka.h>

#include "metrics.h"

#define MAP "suspend_resume_latency_map"

static struct mt_env env = { .name = "suspendResume" };

static void event(__u64 action, int start)
{
	__u64 args[3] = { action, 3 /* val: PM_SUSPEND_MEM */, start };

	assert_true(action);
	assert_int_equal(mt_run(&env.obj, "on_suspend_resume_raw", args, 3), 0);
}

/* Boot time: the clock the handler uses. */
static uint64_t sleep_us(unsigned int us)
{
	return mt_sleep_us(CLOCK_BOOTTIME, us);
}

static uint64_t now_ns(void)
{
	return mt_clock_ns(CLOCK_BOOTTIME);
}

static uint64_t us_since(uint64_t t0_ns)
{
	return mt_us_since(CLOCK_BOOTTIME, t0_ns);
}

static uint64_t phase_total(__u32 phase)
{
	uint64_t total;

	assert_int_equal(mt_key_total(&env.obj, MAP, phase, &total), 0);
	return total;
}

static void assert_phase_between(__u32 phase, uint64_t lo_us, uint64_t hi_us)
{
	struct bpf_telemetry_accumulator acc;

	assert_int_equal(mt_hist(&env.obj, MAP, phase, &acc), 0);
	assert_int_equal(mt_bucket_between(&acc, lo_us, hi_us), 0);
}

/* Each kernel action string lands on its own enum value, and only there. */
static void test_every_phase_has_its_key(void **state)
{
	__u32 phase, p;

	(void)state;
	for (phase = 1; phase < KSTATS_SUSPEND_PHASE_COUNT; phase++) {
		__u64 action = mt_kmem_str(&env.kmem, kstats_suspend_phase_names[phase]);

		event(action, 1);
		event(action, 0);
		for (p = 0; p < KSTATS_SUSPEND_PHASE_COUNT; p++)
			assert_int_equal(phase_total(p), p <= phase && p > 0);
	}
}

static void test_unknown_action_is_other(void **state)
{
	static const char *const unknown[] = {
		"my_driver_suspend", "dpm_suspen", "dpm_suspend_noirqs", "",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		__u64 action = mt_kmem_str(&env.kmem, unknown[i]);

		event(action, 1);
		event(action, 0);
	}
	assert_int_equal(phase_total(KSTATS_SUSPEND_PHASE_OTHER), 4);
	assert_int_equal(phase_total(KSTATS_SUSPEND_PHASE_DPM_SUSPEND), 0);
	assert_int_equal(phase_total(KSTATS_SUSPEND_PHASE_DPM_SUSPEND_NOIRQ), 0);
}

/* Phases nest (suspend_enter holds sync_filesystems): each pairs itself. */
static void test_nested_phases(void **state)
{
	__u64 outer = mt_kmem_str(&env.kmem, "suspend_enter");
	__u64 inner = mt_kmem_str(&env.kmem, "sync_filesystems");
	uint64_t t_outer = now_ns(), t_inner, inner_us, inner_hi, outer_us;

	(void)state;
	event(outer, 1);
	outer_us = sleep_us(2000);
	t_inner = now_ns();
	event(inner, 1);
	inner_us = sleep_us(5000);
	event(inner, 0);
	inner_hi = us_since(t_inner);
	outer_us += inner_us + sleep_us(30000);
	event(outer, 0);
	assert_phase_between(KSTATS_SUSPEND_PHASE_SYNC_FILESYSTEMS, inner_us, inner_hi);
	assert_phase_between(KSTATS_SUSPEND_PHASE_SUSPEND_ENTER, outer_us,
			     us_since(t_outer));
}

/* The kernel leaves begins unmatched on error paths: the latest one counts. */
static void test_latest_begin_wins(void **state)
{
	__u64 action = mt_kmem_str(&env.kmem, "suspend_enter");
	uint64_t t0, us;

	(void)state;
	event(action, 1);
	sleep_us(40000);
	t0 = now_ns();
	event(action, 1);
	us = sleep_us(1500);
	event(action, 0);
	assert_phase_between(KSTATS_SUSPEND_PHASE_SUSPEND_ENTER, us, us_since(t0));
}

static void test_unmatched_end_counts_nothing(void **state)
{
	__u64 a = mt_kmem_str(&env.kmem, "dpm_resume"), b = mt_kmem_str(&env.kmem, "dpm_complete");
	__u32 p;

	(void)state;
	event(a, 0);
	event(b, 1);
	event(a, 0);	/* another action's begin does not close this one */
	event(b, 0);
	event(b, 0);
	for (p = 0; p < KSTATS_SUSPEND_PHASE_COUNT; p++)
		assert_int_equal(phase_total(p), p == KSTATS_SUSPEND_PHASE_DPM_COMPLETE);
}

int main(void)
{
	struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_phase_has_its_key),
		cmocka_unit_test(test_unknown_action_is_other),
		cmocka_unit_test(test_nested_phases),
		cmocka_unit_test(test_latest_begin_wins),
		cmocka_unit_test(test_unmatched_end_counts_nothing),
	};

	return MT_MAIN("suspendResume", tests, mt_env_setup, mt_env_teardown, &env);
}
