// SPDX-License-Identifier: GPL-2.0
/*
 * DirectReclaimLatency in the running kernel: the raw_tp handlers run with
 * BPF_PROG_TEST_RUN in this thread, so current->signal->oom_score_adj is
 * ours; we set it through /proc/self/oom_score_adj and restore it after.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <cmocka.h>

#include "metrics.h"

#define MAP "direct_reclaim_latency_map"

static struct mt_obj obj;
static int saved_adj;

static int setup(void **state)
{
	(void)state;
	if (mt_get_oom_score_adj(&saved_adj))
		return -1;
	return mt_obj_open(&obj, "directReclaim", "raw_tp/");
}

static int teardown(void **state)
{
	int ret = mt_set_oom_score_adj(saved_adj);

	(void)state;
	mt_obj_close(&obj);
	return ret;
}

static void begin(void)
{
	__u64 args[2] = { 0 /* order */, 0xcc0 /* GFP_KERNEL */ };

	assert_int_equal(mt_run(&obj, "on_direct_reclaim_begin_raw", args, 2), 0);
}

static void end(void)
{
	__u64 args[1] = { 32 /* nr_reclaimed */ };

	assert_int_equal(mt_run(&obj, "on_direct_reclaim_end_raw", args, 1), 0);
}

static uint64_t state_count(__u32 state)
{
	uint64_t total;

	assert_int_equal(mt_key_total(&obj, MAP, state, &total), 0);
	return total;
}

static void check_case(const struct mt_adj_case *c)
{
	uint64_t before[KSTATS_PROCESS_STATE_COUNT];
	__u32 s;
	int adj;

	for (s = 0; s < KSTATS_PROCESS_STATE_COUNT; s++)
		before[s] = state_count(s);
	assert_int_equal(mt_set_oom_score_adj(c->adj), 0);
	assert_int_equal(mt_get_oom_score_adj(&adj), 0);
	assert_int_equal(adj, c->adj);
	begin();
	end();
	for (s = 0; s < KSTATS_PROCESS_STATE_COUNT; s++)
		assert_int_equal(state_count(s), before[s] + (s == c->state));
}

/* Both edges of every band, checked key by key in the kernel. */
static void check_band_edges(bool negative)
{
	size_t i;

	for (i = 0; i < mt_adj_band_edges_len; i++)
		if ((mt_adj_band_edges[i].adj < 0) == negative)
			check_case(&mt_adj_band_edges[i]);
}

static void test_state_non_negative_adj(void **state)
{
	(void)state;
	check_band_edges(false);
}

/* Going below oom_score_adj_min (0 here) needs CAP_SYS_RESOURCE. */
static void test_state_negative_adj_with_cap_sys_resource(void **state)
{
	(void)state;
	if (mt_set_oom_score_adj(-1) == -EACCES) {
		printf("# no CAP_SYS_RESOURCE: cannot go below oom_score_adj 0\n");
		skip();
	}
	check_band_edges(true);
}

static void test_latency_bucket(void **state)
{
	static const unsigned int durations_us[] = { 1500, 25000 };
	struct bpf_telemetry_accumulator acc;
	uint64_t t0, us;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(durations_us) / sizeof(durations_us[0]); i++) {
		assert_int_equal(mt_set_oom_score_adj(i ? 950 : 0), 0);
		t0 = mt_clock_ns(CLOCK_MONOTONIC);
		begin();
		us = mt_sleep_us(CLOCK_MONOTONIC, durations_us[i]);
		end();
		assert_int_equal(mt_hist(&obj, MAP, i ? KSTATS_PROCESS_STATE_CACHED :
					 KSTATS_PROCESS_STATE_FOREGROUND, &acc), 0);
		assert_int_equal(mt_bucket_between(&acc, us,
						   mt_us_since(CLOCK_MONOTONIC, t0)), 0);
	}
}

static void test_unmatched_end_counts_nothing(void **state)
{
	(void)state;
	end();
	begin();
	end();
	end();
	mt_expect_total(&obj, MAP, 1);
}

int main(void)
{
	struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state_non_negative_adj),
		cmocka_unit_test(test_state_negative_adj_with_cap_sys_resource),
		cmocka_unit_test(test_latency_bucket),
		cmocka_unit_test(test_unmatched_end_counts_nothing),
	};

	return MT_MAIN("directReclaim", tests, setup, teardown, NULL);
}
