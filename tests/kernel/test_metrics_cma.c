// SPDX-License-Identifier: GPL-2.0
/*
 * CmaAllocationLatency in the running kernel.  This kernel has no CMA (no
 * cma_alloc_* tracepoints), but raw_tp programs load and test-run without
 * their tracepoint: the handlers run with BPF_PROG_TEST_RUN, and the pool
 * name argument points at real kernel memory (tests/bpf/kmem.c), so the
 * probe read of the name is the one under test.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "metrics.h"

#define MAP "cma_alloc_latency_map"
#define NAMES "cma_pool_names_map"

static struct mt_env env = { .name = "cma" };

/* 6.18 argument lists; only ctx[0] (the name) is read. */
static void alloc_start(__u64 name)
{
	__u64 args[3] = { name, 16 /* count */, 4 /* align */ };

	assert_int_equal(mt_run(&env.obj, "on_cma_alloc_start_raw", args, 3), 0);
}

static void alloc_finish(__u64 name)
{
	__u64 args[6] = { name, 0x1000 /* pfn */, 0 /* page */, 16, 4, 0 };

	assert_int_equal(mt_run(&env.obj, "on_cma_alloc_finish_raw", args, 6), 0);
}

struct interval {
	uint64_t lo_us, hi_us;
};

static struct interval timed_alloc(__u64 name, unsigned int us)
{
	uint64_t t0 = mt_clock_ns(CLOCK_MONOTONIC);
	struct interval iv;

	alloc_start(name);
	iv.lo_us = mt_sleep_us(CLOCK_MONOTONIC, us);
	alloc_finish(name);
	iv.hi_us = mt_us_since(CLOCK_MONOTONIC, t0);
	return iv;
}

static void assert_named(__u32 id, const char *want)
{
	struct kstats_name name;

	assert_int_equal(mt_dict_name(&env.obj, NAMES, id, &name), 0);
	assert_string_equal(name.name, want);
}

static void test_pool_latency_and_name(void **state)
{
	struct bpf_telemetry_accumulator acc;
	__u64 pool = mt_kmem_str(&env.kmem, "reserved");
	struct interval iv;

	(void)state;
	assert_true(pool);
	iv = timed_alloc(pool, 8000);
	assert_int_equal(mt_hist(&env.obj, MAP, mt_name_hash("reserved"), &acc), 0);
	assert_int_equal(mt_bucket_between(&acc, iv.lo_us, iv.hi_us), 0);
	assert_named(mt_name_hash("reserved"), "reserved");
}

static void test_pools_are_separate(void **state)
{
	struct bpf_telemetry_accumulator a, b;
	__u64 p1 = mt_kmem_str(&env.kmem, "linux,cma"), p2 = mt_kmem_str(&env.kmem, "secure");
	struct interval iv1, iv2;

	(void)state;
	iv1 = timed_alloc(p1, 1000);
	iv2 = timed_alloc(p2, 20000);
	assert_int_equal(mt_hist(&env.obj, MAP, mt_name_hash("linux,cma"), &a), 0);
	assert_int_equal(mt_hist(&env.obj, MAP, mt_name_hash("secure"), &b), 0);
	assert_int_equal(mt_bucket_between(&a, iv1.lo_us, iv1.hi_us), 0);
	assert_int_equal(mt_bucket_between(&b, iv2.lo_us, iv2.hi_us), 0);
	assert_named(mt_name_hash("linux,cma"), "linux,cma");
	assert_named(mt_name_hash("secure"), "secure");
}

/* FNV-1a collides on these two: the second name takes the next id. */
static void test_colliding_names_stay_exact(void **state)
{
	struct bpf_telemetry_accumulator acc;
	__u64 a = mt_kmem_str(&env.kmem, "costarring"), b = mt_kmem_str(&env.kmem, "liquid");
	__u32 id = mt_name_hash("costarring");

	(void)state;
	assert_int_equal(mt_name_hash("liquid"), id);
	timed_alloc(a, 100);
	timed_alloc(b, 100);
	timed_alloc(b, 100);
	assert_named(id, "costarring");
	assert_named(id + 1, "liquid");
	assert_int_equal(mt_hist(&env.obj, MAP, id, &acc), 0);
	assert_int_not_equal(mt_single_bucket(&acc), -1);
	assert_int_equal(mt_hist(&env.obj, MAP, id + 1, &acc), 0);
	assert_int_equal(mt_single_bucket(&acc), -1);	/* two events */
}

/* Names longer than KSTATS_NAME_MAX - 1 are kept truncated. */
static void test_long_name_truncated(void **state)
{
	const char *longname = "a-very-long-cma-pool-name-from-devicetree";
	char prefix[KSTATS_NAME_MAX] = "";

	(void)state;
	memcpy(prefix, longname, sizeof(prefix) - 1);
	timed_alloc(mt_kmem_str(&env.kmem, longname), 100);
	assert_named(mt_name_hash(prefix), prefix);
}

static void test_unmatched_finish_counts_nothing(void **state)
{
	__u64 pool = mt_kmem_str(&env.kmem, "reserved");
	__u32 id = mt_name_hash("reserved");
	struct kstats_name name;

	(void)state;
	alloc_finish(pool);
	mt_expect_total(&env.obj, MAP, 0);
	assert_int_equal(mt_dict_name(&env.obj, NAMES, id, &name), -ENOENT);
	alloc_start(pool);
	alloc_finish(pool);
	alloc_finish(pool);
	mt_expect_total(&env.obj, MAP, 1);
}

int main(void)
{
	struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool_latency_and_name),
		cmocka_unit_test(test_pools_are_separate),
		cmocka_unit_test(test_colliding_names_stay_exact),
		cmocka_unit_test(test_long_name_truncated),
		cmocka_unit_test(test_unmatched_finish_counts_nothing),
	};

	return MT_MAIN("cma", tests, mt_env_setup, mt_env_teardown, &env);
}
