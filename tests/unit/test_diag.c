// SPDX-License-Identifier: GPL-2.0
/*
 * kstats' pin directory check (cli/diag.c) as a user who cannot pass a
 * directory above the pins: the message names the real errno.  It said
 * "cannot access ...: Success" because the fix hint, evaluated before
 * strerror(errno) in the same call, reset errno (issue 25).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "asuser.h"
#include "kstats.h"
#include "ktest.h"

/* As nobody (65534): the check's return, its message in msg. */
static int check_pin_dir(void *pin_dir, char *msg, size_t len)
{
	return kstats_check_pin_dir(pin_dir, msg, len);
}

static void test_denied_names_errno(void **state)
{
	char dir[64], pins[96], msg[512];
	int ret;

	(void)state;
	if (geteuid()) {
		skip();	/* needs root to drop to another user */
		return;
	}
	assert_int_equal(ktest_tmpdir(dir, sizeof(dir), "diag"), 0);	/* 0700 root: nobody cannot pass */
	snprintf(pins, sizeof(pins), "%s/kernelstats", dir);
	assert_int_equal(mkdir(pins, 0755), 0);
	ret = asuser_run(&(struct asuser){ .uid = 65534, .gid = 65534 }, check_pin_dir,
			 pins, msg, sizeof(msg));
	rmdir(pins);
	rmdir(dir);
	assert_int_equal(ret, -EACCES);
	assert_non_null(strstr(msg, strerror(EACCES)));
	assert_null(strstr(msg, "Success"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_denied_names_errno),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
