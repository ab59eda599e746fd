// SPDX-License-Identifier: GPL-2.0
/* The pull's crash points, for the test build of kstats and the tests (hooks.h). */
#include "hooks.h"

const struct kstats_fault_point kstats_fault_points[] = {
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
const size_t kstats_nfault_points = sizeof(kstats_fault_points) / sizeof(kstats_fault_points[0]);
