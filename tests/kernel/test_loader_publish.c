// SPDX-License-Identifier: GPL-2.0
/*
 * kstats-loader publication is all or nothing: when one pin cannot be
 * renamed into place, the pins already published are taken back, so no
 * half-pinned object (and no published link next to a restored one) stays.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "kstats_pins.h"
#include "ltest.h"

static int setup(void **state)
{
	return ltest_setup(state, 'p', false);
}

static int pins_named(const char *dir, const char *prefix)
{
	struct dirent *d;
	int n = 0;
	DIR *dp = opendir(dir);

	while (dp && (d = readdir(dp)))
		n += !strncmp(d->d_name, prefix, strlen(prefix));
	if (dp)
		closedir(dp);
	return n;
}

/* A directory where the program pin goes makes its rename fail (EISDIR). */
static void test_failed_commit_unpublishes(void **state)
{
	struct ltest *t = *state;
	char prog_pin[512], map_pin[512];

	assert_int_equal(ltest_add(t, "tests/bpf/loader_count.bpf", "lc"), 0);
	assert_int_equal(kstats_pin_path(prog_pin, sizeof(prog_pin), t->kt.pin_dir,
					 "prog", "lc", "tp_btf/task_rename"), 0);
	assert_int_equal(kstats_pin_path(map_pin, sizeof(map_pin), t->kt.pin_dir,
					 "map", "lc", "rename_count_map"), 0);
	assert_int_equal(mkdir(t->kt.pin_dir, 0750) && errno != EEXIST, 0);
	assert_int_equal(mkdir(prog_pin, 0700), 0);

	assert_int_equal(ltest_run(t, NULL), 0);
	assert_string_equal(ltest_outcome(t, "lc", NULL), "FAILED_PIN");
	assert_true(ltest_output_has(t, "cannot publish"));
	assert_int_not_equal(access(map_pin, F_OK), 0);
	assert_int_equal(pins_named(t->kt.pin_dir, "map_lc_"), 0);
	assert_int_equal(pins_named(t->kt.pin_dir, "link_lc_"), 0);
	assert_int_equal(pins_named(t->kt.pin_dir, "tmp_"), 0);

	/* Once the obstacle is gone, the next run publishes everything. */
	assert_int_equal(rmdir(prog_pin), 0);
	assert_int_equal(ltest_run(t, NULL), 0);
	assert_string_equal(ltest_outcome(t, "lc", NULL), "LOADED");
	assert_int_equal(access(map_pin, F_OK), 0);
	assert_int_equal(access(prog_pin, F_OK), 0);
	assert_int_equal(pins_named(t->kt.pin_dir, "link_lc_"), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_failed_commit_unpublishes, setup,
						ltest_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
