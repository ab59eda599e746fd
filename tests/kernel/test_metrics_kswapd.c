// SPDX-License-Identifier: GPL-2.0
/*
 * KswapdLatency in the running kernel: the raw_tp handlers of kswapd.bpf run
 * with BPF_PROG_TEST_RUN on synthetic (nid, zid, order) / (nid) arguments.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <cmocka.h>

#include "metrics.h"

#define MAP "kswapd_latency_map"

static struct mt_obj obj;

static int setup(void **state)
{
	(void)state;
	return mt_obj_open(&obj, "kswapd", "raw_tp/");
}

static int teardown(void **state)
{
	(void)state;
	mt_obj_close(&obj);
	return 0;
}

static void wake(__u32 nid)
{
	__u64 args[3] = { nid, 2 /* zid */, 0 /* order */ };

	assert_int_equal(mt_run(&obj, "on_kswapd_wake_raw", args, 3), 0);
}

static void sleep_event(__u32 nid)
{
	__u64 args[1] = { nid };

	assert_int_equal(mt_run(&obj, "on_kswapd_sleep_raw", args, 1), 0);
}

static void assert_node_between(__u32 nid, uint64_t lo_us, uint64_t hi_us)
{
	struct bpf_telemetry_accumulator acc;

	assert_int_equal(mt_hist(&obj, MAP, nid, &acc), 0);
	assert_int_equal(mt_bucket_between(&acc, lo_us, hi_us), 0);
}

static void test_wake_to_sleep_bucket(void **state)
{
	static const unsigned int durations_us[] = { 3000, 40000 };
	uint64_t t0, us;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(durations_us) / sizeof(durations_us[0]); i++) {
		__u32 nid = i;

		t0 = mt_clock_ns(CLOCK_MONOTONIC);
		wake(nid);
		us = mt_sleep_us(CLOCK_MONOTONIC, durations_us[i]);
		sleep_event(nid);
		assert_node_between(nid, us, mt_us_since(CLOCK_MONOTONIC, t0));
	}
}

/* Wake fires on every balance pass: 30 ms then 1 ms must count 31 ms. */
static void test_keeps_first_wake(void **state)
{
	uint64_t t0 = mt_clock_ns(CLOCK_MONOTONIC), us;

	(void)state;
	wake(0);
	us = mt_sleep_us(CLOCK_MONOTONIC, 30000);
	wake(0);
	us += mt_sleep_us(CLOCK_MONOTONIC, 1000);
	sleep_event(0);
	assert_node_between(0, us, mt_us_since(CLOCK_MONOTONIC, t0));
}

static void test_nodes_are_separate(void **state)
{
	uint64_t t0 = mt_clock_ns(CLOCK_MONOTONIC), us0, us1, hi1;

	(void)state;
	wake(0);
	wake(1);
	us1 = mt_sleep_us(CLOCK_MONOTONIC, 2000);
	sleep_event(1);
	hi1 = mt_us_since(CLOCK_MONOTONIC, t0);
	us0 = us1 + mt_sleep_us(CLOCK_MONOTONIC, 30000);
	sleep_event(0);
	assert_node_between(1, us1, hi1);
	assert_node_between(0, us0, mt_us_since(CLOCK_MONOTONIC, t0));
}

static void test_unmatched_sleep_counts_nothing(void **state)
{
	(void)state;
	sleep_event(3);
	wake(2);
	sleep_event(2);
	sleep_event(2);	/* the second sleep has no wake */
	mt_expect_total(&obj, MAP, 1);
}

/* Node ids past the map's size are dropped, not folded into another node. */
static void test_node_out_of_range(void **state)
{
	(void)state;
	wake(16);
	sleep_event(16);
	mt_expect_total(&obj, MAP, 0);
}

int main(void)
{
	struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wake_to_sleep_bucket),
		cmocka_unit_test(test_keeps_first_wake),
		cmocka_unit_test(test_nodes_are_separate),
		cmocka_unit_test(test_unmatched_sleep_counts_nothing),
		cmocka_unit_test(test_node_out_of_range),
	};

	return MT_MAIN("kswapd", tests, setup, teardown, NULL);
}
