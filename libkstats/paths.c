// SPDX-License-Identifier: GPL-2.0
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kstats_paths.h"

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * From the binary's own directory, so an installed tree can move with its
 * PREFIX: <dir>/bpf in a build tree, else <dir>/../lib/kernelstats/bpf.
 */
const char *kstats_default_obj_dir(void)
{
	static char dir[PATH_MAX];
	char exe[PATH_MAX], *slash;
	ssize_t n;

	if (dir[0])
		return dir;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return KSTATS_INSTALLED_OBJ_DIR;
	*slash = '\0';
	if (snprintf(dir, sizeof(dir), "%s/bpf", exe) < (int)sizeof(dir) && is_dir(dir))
		return dir;
	if (snprintf(dir, sizeof(dir), "%s/../lib/kernelstats/bpf", exe) < (int)sizeof(dir) &&
	    realpath(dir, exe))
		return strcpy(dir, exe);
	dir[0] = '\0';
	return KSTATS_INSTALLED_OBJ_DIR;
}
