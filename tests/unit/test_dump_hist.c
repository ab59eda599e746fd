// SPDX-License-Identifier: GPL-2.0
/* The histogram arithmetic of kstats dump (cli/render.c), on known buckets. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "hist.h"
#include "kstats_meta.h"

static void fmt(char *buf, double v, unsigned int unit)
{
	kstats_fmt_value(buf, 32, v, kstats_unit(unit));
}

static void test_units(void **state)
{
	char b[32];

	(void)state;
	fmt(b, 0, KSTATS_UNIT_USEC);		assert_string_equal(b, "0µs");
	fmt(b, 512, KSTATS_UNIT_USEC);		assert_string_equal(b, "512µs");
	fmt(b, 999.96, KSTATS_UNIT_USEC);	assert_string_equal(b, "1ms");
	fmt(b, 1024, KSTATS_UNIT_USEC);		assert_string_equal(b, "1.024ms");
	fmt(b, 16384, KSTATS_UNIT_USEC);	assert_string_equal(b, "16.38ms");
	fmt(b, 1 << 20, KSTATS_UNIT_USEC);	assert_string_equal(b, "1.049s");
	fmt(b, 2147483648.0, KSTATS_UNIT_USEC);	assert_string_equal(b, "2147s");
	fmt(b, 1023, KSTATS_UNIT_BYTES);	assert_string_equal(b, "1023B");
	fmt(b, 1024, KSTATS_UNIT_BYTES);	assert_string_equal(b, "1KiB");
	fmt(b, 1536, KSTATS_UNIT_BYTES);	assert_string_equal(b, "1.5KiB");
	fmt(b, 1 << 20, KSTATS_UNIT_BYTES);	assert_string_equal(b, "1MiB");
	fmt(b, 1u << 31, KSTATS_UNIT_BYTES);	assert_string_equal(b, "2GiB");
	assert_int_equal(kstats_display_width("2.048ms"), 7);
	assert_int_equal(kstats_display_width("512µs"), 5);
}

static void test_bounds(void **state)
{
	unsigned int i;

	(void)state;
	assert_int_equal(kstats_bucket_lo(0), 0);
	assert_int_equal(kstats_bucket_hi(0), 1);
	for (i = 1; i < 31; i++) {
		assert_int_equal(kstats_bucket_lo(i), 1ull << i);
		assert_int_equal(kstats_bucket_hi(i), (1ull << (i + 1)) - 1);
		assert_int_equal(kstats_bucket_lo(i), kstats_bucket_hi(i - 1) + 1);
	}
	assert_int_equal(kstats_bucket_hi(31), UINT64_MAX);
}

static void test_stats(void **state)
{
	uint64_t b[BPF_TELEMETRY_NR_BUCKETS] = { [3] = 5, [4] = 10, [6] = 2 };
	struct kstats_hist_stats st;

	(void)state;
	kstats_hist_stats(b, &st);
	assert_int_equal(st.count, 17);
	/* rank 8.5: 3.5 of the 10 in [16, 32) -> 16 + 16 * 3.5 / 10 */
	assert_true(st.p50 > 21.6 - 1e-9 && st.p50 < 21.6 + 1e-9);
	/* rank 16.83: 1.83 of the 2 in [64, 128) */
	assert_true(st.p99 > 122.56 - 1e-9 && st.p99 < 122.56 + 1e-9);
	assert_false(st.p50_open || st.p99_open);
	assert_true(st.total_min == 5 * 8 + 10 * 16 + 2 * 64);
	assert_true(st.total_max == 5 * 15 + 10 * 31 + 2 * 127);
}

static void test_open_bucket_and_empty(void **state)
{
	uint64_t b[BPF_TELEMETRY_NR_BUCKETS] = { [0] = 1, [31] = 99 };
	struct kstats_hist_stats st;

	(void)state;
	kstats_hist_stats(b, &st);
	assert_true(st.p50_open && st.p99_open);
	assert_true(st.p99 == 2147483648.0);
	assert_true(st.total_max < 0);
	memset(b, 0, sizeof(b));
	kstats_hist_stats(b, &st);
	assert_int_equal(st.count, 0);
	assert_true(st.total_min == 0 && st.total_max == 0);
	assert_true(st.p50 == 0 && st.p99 == 0);
	assert_false(st.p50_open || st.p99_open);
}

/*
 * A rank exactly on a bucket's upper edge stays in that bucket, at its
 * upper bound (Prometheus: the first bucket whose cumulative count reaches
 * the rank), not in the next non-empty bucket.
 */
static void test_rank_on_edge(void **state)
{
	uint64_t b[BPF_TELEMETRY_NR_BUCKETS] = { [3] = 5, [5] = 5 };
	struct kstats_hist_stats st;

	(void)state;
	kstats_hist_stats(b, &st);
	/* rank 5 = all of [8, 16) */
	assert_true(st.p50 == 16.0);
	/* rank 9.9: 4.9 of the 5 in [32, 64) -> 32 + 32 * 4.9 / 5 */
	assert_true(st.p99 > 63.36 - 1e-9 && st.p99 < 63.36 + 1e-9);
	/* 100 in bucket 0 ({0, 1}, width 2): rank 50 -> 1, rank 99 -> 1.98 */
	memset(b, 0, sizeof(b));
	b[0] = 100;
	kstats_hist_stats(b, &st);
	assert_true(st.p50 == 1.0);
	assert_true(st.p99 > 1.98 - 1e-9 && st.p99 < 1.98 + 1e-9);
}

static void test_saturation(void **state)
{
	uint64_t b[BPF_TELEMETRY_NR_BUCKETS] = { [1] = UINT64_MAX, [2] = 5 };
	struct kstats_hist_stats st;

	(void)state;
	assert_int_equal(kstats_add_sat(UINT64_MAX - 1, 1), UINT64_MAX);
	assert_int_equal(kstats_add_sat(UINT64_MAX, 7), UINT64_MAX);
	assert_int_equal(kstats_add_sat(1ull << 40, 1ull << 40), 1ull << 41);
	kstats_hist_stats(b, &st);
	assert_int_equal(st.count, UINT64_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_stats),
		cmocka_unit_test(test_open_bucket_and_empty),
		cmocka_unit_test(test_rank_on_edge),
		cmocka_unit_test(test_saturation),
	};

	return cmocka_run_group_tests_name("dump_hist", tests, NULL, NULL);
}
