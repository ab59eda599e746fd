// SPDX-License-Identifier: GPL-2.0
/* The bucket function of doc/design.md, at both edges of every bucket. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bpf_telemetry.h"

static void test_zero_and_one(void **state)
{
	(void)state;
	assert_int_equal(bpf_telemetry_bucket(0), 0);
	assert_int_equal(bpf_telemetry_bucket(1), 0);
}

static void test_every_edge(void **state)
{
	unsigned int i;

	(void)state;
	for (i = 1; i <= 30; i++) {
		uint64_t lo = 1ull << i, hi = (1ull << (i + 1)) - 1;

		assert_int_equal(bpf_telemetry_bucket(lo), i);
		assert_int_equal(bpf_telemetry_bucket(hi), i);
		assert_int_equal(bpf_telemetry_bucket(lo - 1), i - 1);
	}
}

static void test_saturation(void **state)
{
	(void)state;
	assert_int_equal(bpf_telemetry_bucket(1ull << 31), 31);
	assert_int_equal(bpf_telemetry_bucket((1ull << 32) - 1), 31);
	assert_int_equal(bpf_telemetry_bucket(1ull << 32), 31);
	assert_int_equal(bpf_telemetry_bucket(1ull << 40), 31);
	assert_int_equal(bpf_telemetry_bucket(UINT64_MAX), 31);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zero_and_one),
		cmocka_unit_test(test_every_edge),
		cmocka_unit_test(test_saturation),
	};

	return cmocka_run_group_tests_name("bucket", tests, NULL, NULL);
}
