// SPDX-License-Identifier: GPL-2.0
/* CompactionDuration: real compaction through /proc/sys/vm/compact_memory. */
#include <stdio.h>

#include "guest.h"
#include "ktest.h"

#define TEST "compaction"
#define OBJ "compaction"
#define MAP "compaction_duration_map"
#define TRIGGERS 3
#define ATTEMPTS 5
#define END "mm_compaction_end"

/*
 * The histogram grows by the tracefs count of ends between the two reads;
 * kcompactd's proactive compaction may overlap a read: retry then.
 */
static void check_growth(const struct lab *lab, const struct trace *tr)
{
	uint64_t a0, a1, b0, b1;
	struct hist before, after;
	long ends = 0, overlap = 1;
	int attempt, i;

	for (attempt = 0; overlap && attempt < ATTEMPTS; attempt++) {
		a0 = ktest_now_ns();
		if (hist_read(lab, OBJ, MAP, &before))
			goto unreadable;
		a1 = ktest_now_ns();
		for (i = 0; i < TRIGGERS; i++)
			if (ktest_compact_memory()) {
				lab_fail(TEST, "cannot write /proc/sys/vm/compact_memory");
				return;
			}
		b0 = ktest_now_ns();
		if (hist_read(lab, OBJ, MAP, &after))
			goto unreadable;
		b1 = ktest_now_ns();
		overlap = trace_count(tr, END, -1, a0, a1) + trace_count(tr, END, -1, b0, b1);
		ends = trace_count(tr, END, -1, a1, b0);
	}
	if (overlap)
		lab_fail(TEST, "every read overlapped a compaction (%d attempts)", ATTEMPTS);
	else if (ends < TRIGGERS)
		lab_fail(TEST, "tracefs saw %ld %s for %d triggers", ends, END, TRIGGERS);
	else if (hist_total(&after) - hist_total(&before) != (uint64_t)ends)
		lab_fail(TEST, "histogram grew by %llu, tracefs saw %ld %s",
			 (unsigned long long)(hist_total(&after) - hist_total(&before)),
			 ends, END);
	else
		lab_pass(TEST, "grew by %ld = tracefs %s count", ends, END);
	return;
unreadable:
	lab_fail(TEST, "cannot read map_%s_%s", OBJ, MAP);
}

void test_compaction(const struct lab *lab)
{
	static const char *const events[] = { "compaction/" END, NULL };
	struct trace tr;

	if (lab_require(lab, TEST, OBJ, MAP))
		return;
	if (trace_start(&tr, "compaction", events)) {
		lab_fail(TEST, "no tracefs instance for %s", END);
		return;
	}
	check_growth(lab, &tr);
	trace_stop(&tr);
}
