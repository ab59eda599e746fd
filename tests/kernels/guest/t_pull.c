// SPDX-License-Identifier: GPL-2.0
/*
 * kstats pull in the guest: it must succeed and write atom files, which
 * the guest prints as "@@ ATOMS <path>" so that the host can decode them
 * (with protoc, against proto/) from the console.
 */
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#include "guest.h"

#define TEST "kstats pull"

static struct timespec pull_start;
static int atom_files;

static bool newer(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec ||
	       (a->tv_sec == b->tv_sec && a->tv_nsec >= b->tv_nsec);
}

static int find_atoms(const char *path, const struct stat *st, int flag,
		      struct FTW *ftw)
{
	(void)ftw;
	if (flag == FTW_F && S_ISREG(st->st_mode) && st->st_size &&
	    newer(&st->st_mtim, &pull_start) && strstr(path, "atom")) {
		printf("@@ ATOMS %s\n", path);
		atom_files++;
	}
	return 0;
}

void test_pull(const struct lab *lab)
{
	const char *help[] = { "kstats", "pull", "--help", NULL };
	const char *pull[] = { "kstats", "pull", "--obj-dir", lab->obj_dir,
			       "--pin-dir", lab->pin_dir, NULL };
	static char out[16384];
	int ret;

	if (lab_run_tool(lab, help, out, sizeof(out))) {
		lab_skip(TEST, "not built (kstats pull --help failed)");
		return;
	}
	clock_gettime(CLOCK_REALTIME, &pull_start);
	ret = lab_run_tool(lab, pull, out, sizeof(out));
	if (ret) {
		lab_fail(TEST, "exit status %d: %.200s", ret, out);
		return;
	}
	/* The atom directory is the puller's default: find what it wrote. */
	nftw("/", find_atoms, 16, FTW_PHYS | FTW_MOUNT);
	if (!atom_files)
		lab_fail(TEST, "wrote no atom file (no new file named *atom*)");
	else
		lab_pass(TEST, "%d atom file(s)", atom_files);
}
