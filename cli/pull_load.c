// SPDX-License-Identifier: GPL-2.0
/* kstats pull: the state at start, and the pull a crash interrupted. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kstats_fileio.h"
#include "kstats_hooks.h"
#include "pull_run.h"

/* Temp files of an interrupted pull (".NAME.XXXXXX.tmp"), safe to drop under the lock. */
static void remove_temps(const char *dir)
{
	struct dirent *d;
	char path[4096];
	DIR *dp = opendir(dir);
	size_t n;

	if (!dp)
		return;
	while ((d = readdir(dp))) {
		n = strlen(d->d_name);
		if (d->d_name[0] != '.' || n < 5 || strcmp(d->d_name + n - 4, ".tmp"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		unlink(path);
	}
	closedir(dp);
}

static int move_aside(const char *dir, const char *name, const char *why)
{
	char to[256];
	int ret = state_move_aside(dir, name, to, sizeof(to));

	if (ret) {
		fprintf(stderr, "kstats pull: %s/%s is corrupt (%s) and cannot be moved "
			"aside: %s; remove it\n", dir, name, why, strerror(-ret));
		return ret;
	}
	fprintf(stderr, "kstats pull: %s/%s is corrupt (%s); moved to %s/%s\n", dir, name,
		why, dir, to);
	return 0;
}

static int load_one(const char *dir, const char *name, struct pull_state *st)
{
	char path[4096], err[256] = "";
	int ret;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ret = state_load(path, st, err, sizeof(err));
	if (ret == -EBADMSG) {
		ret = move_aside(dir, name, err);
		return ret ? ret : -EBADMSG;
	}
	if (ret && ret != -ENOENT)
		fprintf(stderr, "kstats pull: cannot read %s: %s\n", path, err);
	return ret;
}

static int reconcile(struct pull_run *r)
{
	const char *dir = r->o->state_dir;
	struct pull_state pend;
	int ret = load_one(dir, PULL_PENDING_FILE, &pend);

	if (ret == -ENOENT || ret == -EBADMSG)
		return 0;
	if (ret)
		return ret;
	if (pend.pull_id > r->old.pull_id && pull_atoms_exist(r->o->out_dir, pend.pull_id)) {
		ret = kstats_rename_in(dir, PULL_PENDING_FILE, PULL_STATE_FILE, false);
		if (!ret) {
			if (r->o->verbose)
				fprintf(stderr, "kstats pull: completed interrupted pull %" PRIu64
					"\n", pend.pull_id);
			kstats_hook_point("promoted");
			state_free(&r->old);
			r->old = pend;
			r->lost = false;
			return 0;
		}
	} else {
		ret = kstats_unlink_in(dir, PULL_PENDING_FILE);
		if (!ret)
			kstats_hook_point("discarded");
	}
	state_free(&pend);
	return ret;
}

/* The id after the state's and the newest atoms file's; -EOVERFLOW at the end. */
static int next_id(uint64_t state_id, uint64_t atoms_id, uint64_t *next)
{
	uint64_t last = state_id > atoms_id ? state_id : atoms_id;

	/* Wrapping would make this pull overwrite atoms-0000000000.pb. */
	if (last >= PULL_MAX_ID)
		return -EOVERFLOW;
	*next = last + 1;
	return 0;
}

int pull_load_state(struct pull_run *r)
{
	int ret;

	remove_temps(r->o->state_dir);
	remove_temps(r->o->out_dir);
	ret = load_one(r->o->state_dir, PULL_STATE_FILE, &r->old);
	if (ret == -EBADMSG) {
		r->lost = true;
		fprintf(stderr, "kstats pull: re-baselining every map from its creation "
			"(atoms flagged reset)\n");
	} else if (ret && ret != -ENOENT) {
		return ret;
	}
	ret = reconcile(r);
	if (ret)
		return ret;
	r->boot_changed = *r->old.boot_id && strcmp(r->old.boot_id, r->boot_id);
	ret = next_id(r->old.pull_id, pull_max_atoms_id(r->o->out_dir), &r->pull_id);
	if (ret)
		fprintf(stderr, "kstats pull: pull ids are used up (the state or an atoms "
			"file in %s has id %" PRIu64 "); move the atoms away and remove %s/"
			PULL_STATE_FILE "\n", r->o->out_dir, PULL_MAX_ID, r->o->state_dir);
	return ret;
}
