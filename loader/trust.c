// SPDX-License-Identifier: GPL-2.0
/*
 * Whoever can write an object, the directory holding it, or any directory
 * above that, can put code into the kernel.  So the loader accepts only
 * paths whose every component, after resolving symlinks, is owned by root
 * and writable by nobody else.  An object is judged on the descriptor it
 * is read from, and its directories on the path that descriptor was opened
 * by: what is trusted is what is loaded, whatever a link pointed at before.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kstats_fileio.h"
#include "trust.h"

static int judge(const char *path, const char *comp, const struct stat *st,
		 bool leaf, char *why, size_t len)
{
	/* "dir/x.bpf: /abs/dir is ..." names the given path when they differ. */
	const char *given = strcmp(path, comp) ? path : "", *sep = *given ? ": " : "";

	if (st->st_uid) {
		snprintf(why, len, "%s%s%s is owned by uid %u, not root, so its owner "
			 "could load code into the kernel; run: chown root %s",
			 given, sep, comp, (unsigned int)st->st_uid, comp);
		return -EPERM;
	}
	/* Above the leaf, a sticky root directory (/tmp) keeps root's entries. */
	if (!leaf && S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX))
		return 0;
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, len, "%s%s%s is %s-writable (mode %04o), so others "
			 "could load code into the kernel; run: chmod go-w %s", given,
			 sep, comp, st->st_mode & S_IWOTH ? "world" : "group",
			 (unsigned int)(st->st_mode & 07777), comp);
		return -EPERM;
	}
	return 0;
}

static int check_component(const char *path, const char *comp, bool leaf,
			   char *why, size_t len)
{
	const char *given = strcmp(path, comp) ? path : "", *sep = *given ? ": " : "";
	struct stat st;

	if (stat(comp, &st)) {
		int ret = -errno;

		snprintf(why, len, "%s%scannot stat %s: %s", given, sep, comp,
			 strerror(errno));
		return ret;
	}
	return judge(path, comp, &st, leaf, why, len);
}

int check_trusted(const char *path, char *why, size_t len)
{
	return kstats_check_path_up(path, check_component, why, len);
}

int check_trusted_fd(const char *path, const char *real, int fd, char *why, size_t len)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	return judge(path, real, &st, true, why, len) ?:
	       kstats_check_path_up(real, check_component, why, len);
}
