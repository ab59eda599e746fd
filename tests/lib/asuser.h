/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Runs a check in a forked child that dropped root for another uid and gid
 * (tests pick numbers no account has: the kernel checks numbers, not
 * names), with exactly the given supplementary groups and capabilities.
 */
#ifndef KSTATS_TEST_ASUSER_H
#define KSTATS_TEST_ASUSER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct asuser {
	uid_t uid;
	gid_t gid;
	const gid_t *groups;	/* ngroups supplementary groups */
	size_t ngroups;
	uint64_t caps;		/* effective and permitted, 1ull << CAP_... */
};

/* Drops this process to u: 0 or -errno (for a child that stays). */
int asuser_drop(const struct asuser *u);

/* In the child: 0 when all is as expected, else nonzero and why in msg. */
typedef int (*asuser_fn)(void *arg, char *msg, size_t len);

/*
 * Returns fn(arg, msg, len) as run in a child dropped to u, with what it
 * wrote into msg; a failed drop returns its -errno ("cannot drop
 * privileges" in msg).  Fails the test when the child dies.
 */
int asuser_run(const struct asuser *u, asuser_fn fn, void *arg, char *msg,
	       size_t len);

#endif /* KSTATS_TEST_ASUSER_H */
