/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Why an object is not loaded, said one way by every tool: the loader's
 * line per object, kstats status, kstats dump's message and its footer.
 */
#ifndef KSTATS_WHY_H
#define KSTATS_WHY_H

#include <stddef.h>

#include "kstats_fix.h"
#include "kstats_status.h"

/* Room for a line with any reason the loader writes. */
#define KSTATS_WHY_LEN 4096

/*
 * The outcome line of object o into buf: "OUTCOME: reason (critical)"
 * (no ": " without a reason); o NULL (the status does not name it): "its
 * map is not pinned".  Returns the fix for a metric of o that is not
 * loaded: "" when the loader skipped o (SKIPPED_*: this kernel's doing, a
 * new run changes nothing), KSTATS_FIX_STATUS when it failed,
 * KSTATS_FIX_LOAD when the status does not name o or o's map is gone
 * since it loaded.
 */
const char *kstats_why(const struct kstats_status_obj *o, char *buf, size_t len);

#endif /* KSTATS_WHY_H */
