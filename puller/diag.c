// SPDX-License-Identifier: GPL-2.0
/* Maps failures to exit codes and to the fix the message names. */
#include <errno.h>
#include <grp.h>
#include <unistd.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include "kstats.h"

int kstats_exit_code(int err)
{
	switch (-err) {
	case 0:
		return KSTATS_EXIT_OK;
	case EPERM:
	case EACCES:
		return KSTATS_EXIT_PERM;
	case ENOENT:
	case ENODEV:
		return KSTATS_EXIT_NOT_LOADED;
	default:
		return KSTATS_EXIT_ERROR;
	}
}

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
}

static bool on_bpffs(const char *path)
{
	struct statfs st;

	return !statfs(path, &st) && st.f_type == BPF_FS_MAGIC;
}

/* The nearest existing ancestor of path, into buf. */
static void existing_ancestor(const char *path, char *buf, size_t len)
{
	struct stat st;
	char *slash;

	snprintf(buf, len, "%s", path);
	while (stat(buf, &st) && (slash = strrchr(buf, '/'))) {
		if (slash == buf) {
			buf[1] = 0;
			return;
		}
		*slash = 0;
	}
}

int kstats_check_pin_dir(const char *pin_dir, char *msg, size_t len)
{
	char anc[PATH_MAX];
	struct stat st;

	if (!stat(pin_dir, &st)) {
		if (on_bpffs(pin_dir))
			return 0;
		snprintf(msg, len, "%s is not on bpffs (bpffs is not mounted there); "
			 KSTATS_FIX_LOAD ", which mounts it, or: mount -t bpf bpf /sys/fs/bpf",
			 pin_dir);
		return -ENODEV;
	}
	if (errno == EACCES) {
		/* Not strerror(errno): kstats_perm_fix() may change errno first. */
		snprintf(msg, len, "cannot access %s: %s; %s", pin_dir, strerror(EACCES),
			 kstats_perm_fix());
		return -EACCES;
	}
	existing_ancestor(pin_dir, anc, sizeof(anc));
	if (!on_bpffs(anc)) {
		snprintf(msg, len, "bpffs is not mounted (no bpffs at %s or above); "
			 KSTATS_FIX_LOAD ", which mounts it, or: mount -t bpf bpf /sys/fs/bpf",
			 pin_dir);
		return -ENODEV;
	}
	snprintf(msg, len, "nothing is loaded: %s does not exist; " KSTATS_FIX_LOAD, pin_dir);
	return -ENOENT;
}
