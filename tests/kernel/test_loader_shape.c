// SPDX-License-Identifier: GPL-2.0
/*
 * kstats-loader's reuse of a pinned map: each of map type, key size, value
 * size, max_entries and map flags, changed alone (tests/bpf/loader_shape_*.c,
 * same type names), is refused with its own reason, and the pinned map and
 * its counts stay.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "kmain.h"
#include "ltest.h"

static int setup(void **state)
{
	return ltest_setup(state, 's', false);
}

static uint64_t shape_map_id(struct ltest *t)
{
	return ltest_u64(ltest_named(ltest_obj(t, "ls"), "maps", "shape_map"), "map_id");
}

static void test_each_field_alone_refused(void **state)
{
	static const struct { const char *obj, *reason; } variants[] = {
		{ "tests/bpf/loader_shape_type.bpf", "map type is 1, the object wants 9" },
		{ "tests/bpf/loader_shape_key.bpf", "key size is 4, the object wants 8" },
		{ "tests/bpf/loader_shape_value.bpf", "value size is 8, the object wants 16" },
		{ "tests/bpf/loader_shape_entries.bpf", "max_entries is 1024, the object wants 2048" },
		{ "tests/bpf/loader_shape_flags.bpf", "map flags is 0, the object wants 1" },
	};
	struct ltest *t = *state;
	uint64_t map0;
	size_t i;

	assert_int_equal(ltest_add(t, "tests/bpf/loader_shape.bpf", "ls"), 0);
	assert_int_equal(ltest_run(t, NULL), 0);
	assert_string_equal(ltest_outcome(t, "ls", NULL), "LOADED");
	map0 = shape_map_id(t);
	for (i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
		const char *reason;

		assert_int_equal(ltest_add(t, variants[i].obj, "ls"), 0);
		assert_int_equal(ltest_run(t, NULL), 0);
		reason = ltest_str(ltest_obj(t, "ls"), "reason");
		if (strcmp(ltest_outcome(t, "ls", NULL), "REFUSED_INCOMPATIBLE_PIN") ||
		    !reason || !strstr(reason, variants[i].reason))
			fail_msg("%s: outcome %s, reason \"%s\"; want REFUSED_INCOMPATIBLE_PIN, "
				 "\"%s\"", variants[i].obj, ltest_outcome(t, "ls", NULL),
				 reason ? reason : "", variants[i].reason);
		assert_int_equal(shape_map_id(t), map0);
	}
	/* The original shape still loads onto the same map. */
	assert_int_equal(ltest_add(t, "tests/bpf/loader_shape.bpf", "ls"), 0);
	assert_int_equal(ltest_run(t, NULL), 0);
	assert_string_equal(ltest_outcome(t, "ls", NULL), "LOADED");
	assert_int_equal(shape_map_id(t), map0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_each_field_alone_refused, setup,
						ltest_teardown),
	};

	return KTEST_MAIN("loader_shape", tests, NULL, NULL);
}
