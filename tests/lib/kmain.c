// SPDX-License-Identifier: GPL-2.0
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "kmain.h"
#include "ktest.h"

int ktest_main(const char *name, const struct CMUnitTest *tests, size_t n,
	       int (*group_setup)(void **state), int (*group_teardown)(void **state))
{
	const char *missing = ktest_missing_feature();

	if (missing) {
		printf("SKIP: %s: %s\n", name, missing);
		return 0;
	}
	return _cmocka_run_group_tests(name, tests, n, group_setup, group_teardown);
}
