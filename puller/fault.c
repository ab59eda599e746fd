// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection for the crash tests: kstats pull --fault POINT (or
 * KSTATS_FAULT=POINT) SIGKILLs itself at POINT.  "needs" tells a test what
 * the pull must see to reach the point: "events" (atoms to write), "quiet"
 * (none), "always", or "after:P" (a previous pull killed at P).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pull.h"

const struct pull_fault_point pull_fault_points[] = {
	{ "locked", "always", "lock held, nothing read yet" },
	{ "read", "always", "maps read, nothing written" },
	{ "pending-partial", "events", "half of the pending state's temp file written" },
	{ "pending-temp", "events", "pending state's temp file complete, not renamed" },
	{ "pending", "events", "state.pending in place, atoms not written" },
	{ "atoms-partial", "events", "half of the atoms temp file written" },
	{ "atoms-temp", "events", "atoms temp file complete, not renamed" },
	{ "atoms", "events", "atoms file in place, state not promoted" },
	{ "state-partial", "quiet", "no atoms: half of the state's temp file written" },
	{ "state-temp", "quiet", "no atoms: state's temp file complete, not renamed" },
	{ "committed", "always", "state committed, retention not run" },
	{ "promoted", "after:atoms", "start: interrupted pull's pending state promoted" },
	{ "discarded", "after:pending", "start: unfinished pull's pending state dropped" },
};
const size_t pull_nfault_points = sizeof(pull_fault_points) / sizeof(pull_fault_points[0]);

static const char *fault_point;

int pull_fault_set(const char *name)
{
	size_t i;

	for (i = 0; i < pull_nfault_points; i++)
		if (!strcmp(name, pull_fault_points[i].name)) {
			fault_point = pull_fault_points[i].name;
			return 0;
		}
	return -EINVAL;
}

void pull_fault(const char *point)
{
	if (fault_point && !strcmp(fault_point, point)) {
		fprintf(stderr, "kstats pull: fault point %s: SIGKILL\n", point);
		kill(getpid(), SIGKILL);
	}
}
