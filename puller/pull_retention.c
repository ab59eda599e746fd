// SPDX-License-Identifier: GPL-2.0
/* kstats pull: drops the oldest atom files past --max-age/--max-files/--max-bytes. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "kstats.h"
#include "kstats_fileio.h"
#include "pull_run.h"

int pull_apply_retention(const struct pull_opts *o)
{
	struct dirent **ents;
	struct stat *st;
	uint64_t total = 0, removed_bytes = 0;
	time_t now = time(NULL);
	char path[4096];
	int n, i, removed = 0, ret = 0;

	n = scandir(o->out_dir, &ents, kstats_atoms_filter, alphasort);
	if (n < 0)
		return -errno;
	st = calloc(n ? n : 1, sizeof(*st));
	if (!st) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", o->out_dir, ents[i]->d_name);
		if (!stat(path, &st[i]))
			total += st[i].st_size;
	}
	/* Oldest first; the newest file is always kept. */
	for (i = 0; i < n - 1; i++) {
		bool too_many = o->max_files && (uint64_t)(n - removed) > o->max_files;
		bool too_big = o->max_bytes && total > o->max_bytes;
		bool too_old = o->max_age_s && now > st[i].st_mtime &&
			       (uint64_t)(now - st[i].st_mtime) > o->max_age_s;

		if (!too_many && !too_big && !too_old)
			break;
		snprintf(path, sizeof(path), "%s/%s", o->out_dir, ents[i]->d_name);
		if (unlink(path)) {
			ret = -errno;
			break;
		}
		total -= st[i].st_size;
		removed_bytes += st[i].st_size;
		removed++;
	}
	if (removed) {
		fprintf(stderr, "kstats pull: retention removed %d atom file(s), %" PRIu64
			" bytes (--max-age/--max-files/--max-bytes)\n", removed, removed_bytes);
		kstats_fsync_dir(o->out_dir);
	}
out:
	for (i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
	free(st);
	return ret;
}
