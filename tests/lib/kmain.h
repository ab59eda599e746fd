/* SPDX-License-Identifier: GPL-2.0 */
/* A kernel test's main() (cmocka; ktest.c stays without it for the guest). */
#ifndef KSTATS_TEST_KMAIN_H
#define KSTATS_TEST_KMAIN_H

#include <stddef.h>

struct CMUnitTest;
/*
 * "SKIP: name: why" and 0 when the kernel cannot run the tests
 * (ktest_missing_feature()), else the result of the n tests run as group
 * name between group_setup and group_teardown (or NULL).
 */
int ktest_main(const char *name, const struct CMUnitTest *tests, size_t n,
	       int (*group_setup)(void **state), int (*group_teardown)(void **state));
#define KTEST_MAIN(name, tests, setup, teardown) \
	ktest_main(name, tests, sizeof(tests) / sizeof((tests)[0]), setup, teardown)

#endif /* KSTATS_TEST_KMAIN_H */
