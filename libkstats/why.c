// SPDX-License-Identifier: GPL-2.0
/* Why an object is not loaded (contract in kstats_why.h). */
#include <stdio.h>
#include <string.h>

#include "kstats_why.h"

const char *kstats_why(const struct kstats_status_obj *o, char *buf, size_t len)
{
	if (!o) {
		snprintf(buf, len, "its map is not pinned");
		return KSTATS_FIX_LOAD;
	}
	snprintf(buf, len, "%s%s%s%s", o->outcome, *o->reason ? ": " : "", o->reason,
		 o->critical ? " (critical)" : "");
	if (!strncmp(o->outcome, "SKIPPED", 7))
		return "";
	return kstats_status_failed(o) ? KSTATS_FIX_STATUS : KSTATS_FIX_LOAD;
}
