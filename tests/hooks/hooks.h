/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The crash points of the test build of kstats (btfreader/kstats_hooks.h):
 * KSTATS_FAULT=POINT SIGKILLs its pull there.  "needs" tells a test what
 * the pull must see to get there: "events" (atoms to write), "quiet"
 * (none), "always", or "after:P" (a previous pull killed at P).
 */
#ifndef KSTATS_TEST_HOOKS_H
#define KSTATS_TEST_HOOKS_H

#include <stddef.h>

struct kstats_fault_point {
	const char *name;
	const char *needs;
	const char *where;
};

extern const struct kstats_fault_point kstats_fault_points[];
extern const size_t kstats_nfault_points;

#endif /* KSTATS_TEST_HOOKS_H */
