// SPDX-License-Identifier: GPL-2.0
/* The fix a permission denial names: what this user lacks. */
#include <errno.h>
#include <grp.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kstats_fix.h"

/* Whether this process is in group kstats (effective or supplementary). */
static bool in_group(void)
{
	struct group *g = getgrnam(KSTATS_GROUP);
	gid_t groups[256];
	int n, i;

	if (!g)
		return false;
	if (getegid() == g->gr_gid)
		return true;
	n = getgroups(sizeof(groups) / sizeof(groups[0]), groups);
	for (i = 0; i < n; i++)
		if (groups[i] == g->gr_gid)
			return true;
	return false;
}

/* CAP_BPF (39) or CAP_SYS_ADMIN (21) in the effective set. */
static bool may_use_bpf(void)
{
	unsigned long long eff = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return eff & (1ull << 39 | 1ull << 21);
}

/* The fix for a denial: what this user lacks, not a fixed recipe. */
const char *kstats_perm_fix(void)
{
	if (!in_group())
		return KSTATS_FIX_PERM;
	if (!may_use_bpf())
		return "needs CAP_BPF (already in group " KSTATS_GROUP ")";
	return "root-only (the pin's mode, or bpffs mounted 0700); needs root";
}

void kstats_add_fix(char *msg, size_t len, int err)
{
	size_t n = strlen(msg);

	if ((err == -EPERM || err == -EACCES) && !strstr(msg, "; needs ") &&
	    !strstr(msg, "root-only") && n < len)
		snprintf(msg + n, len - n, "; %s", kstats_perm_fix());
	else if ((err == -EMFILE || err == -ENFILE) && n < len)
		snprintf(msg + n, len - n, "; raise the open files limit (ulimit -n)");
}
