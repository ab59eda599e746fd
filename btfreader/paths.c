// SPDX-License-Identifier: GPL-2.0
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kstats_paths.h"

#ifndef KSTATS_BPFDIR
#define KSTATS_BPFDIR "/usr/local/lib/kernelstats/bpf"
#endif

static int tree_obj_dir(char *buf, size_t len)
{
	struct stat st;
	char *slash;
	ssize_t n;

	n = readlink("/proc/self/exe", buf, len - 1);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (!slash || (size_t)(slash - buf) + sizeof("/bpf") > len)
		return -1;
	strcpy(slash, "/bpf");
	return stat(buf, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

const char *kstats_default_obj_dir(void)
{
	static char tree[PATH_MAX];
	static const char *dir;

	if (!dir)
		dir = tree_obj_dir(tree, sizeof(tree)) ? KSTATS_BPFDIR : tree;
	return dir;
}
