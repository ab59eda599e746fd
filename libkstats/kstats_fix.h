/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fixes that error messages name, shared by every consumer of libkstats
 * (the kstats command, the JNI binding), so that a failure reads the same
 * everywhere.
 */
#ifndef KSTATS_FIX_H
#define KSTATS_FIX_H

#include <stddef.h>

#define KSTATS_FIX_LOAD "run kstats-loader"
#define KSTATS_FIX_STATUS "see kstats status"
#define KSTATS_GROUP "kstats"
#define KSTATS_FIX_PERM "needs CAP_BPF and group " KSTATS_GROUP

/*
 * The fix for a permission denial, for this user: KSTATS_FIX_PERM outside
 * group kstats, else what a member still lacks (CAP_BPF, or root).
 */
const char *kstats_perm_fix(void);
/* Appends "; <kstats_perm_fix()>" when err is EPERM/EACCES. */
void kstats_add_fix(char *msg, size_t len, int err);

#endif /* KSTATS_FIX_H */
