// SPDX-License-Identifier: GPL-2.0
/*
 * kstats pull: reads every histogram map of the objects, turns per-key,
 * per-bucket deltas against the state into atoms, appends them to the
 * atoms directory and updates the state (pull_run.h: the jobs and the
 * crash safety).  Which atom carries a histogram comes from the schema.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kstats.h"
#include "kstats_fileio.h"
#include "kstats_hooks.h"
#include "pull_run.h"

static void warn_line(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "kstats pull: warning: %s\n", line);
}

/* The objects' histograms, each checked against the schema (warnings). */
static int catalog(struct pull_run *r, struct kstats_snapshot *cat,
		   struct pull_metric **out)
{
	const struct pull_opts *o = r->o;
	struct atom_check c = { .atom = &kernelstats__atom__descriptor,
				.warn = warn_line };
	char err[KSTATS_ERR_LEN] = "";
	struct atom_shape *shapes;
	struct pull_metric *pms;
	size_t i;
	int ret = kstats_snapshot_init(cat, o->obj_dir, err, sizeof(err));

	if (ret) {
		fprintf(stderr, "kstats pull: %s\n", err);
		return ret;
	}
	kstats_snapshot_unique(cat, pull_loader_status(r), "pull");
	kstats_snapshot_as_loaded(cat, pull_loader_status(r), o->status_file, o->pin_dir);
	shapes = calloc(cat->nhists, sizeof(*shapes));
	pms = calloc(cat->nhists, sizeof(*pms));
	if (shapes && pms) {
		atom_check_catalog(&c, cat, shapes);
		for (i = 0; i < cat->nhists; i++) {
			pms[i].h = &cat->hists[i];
			pms[i].shape = shapes[i];
		}
	}
	free(shapes);
	*out = pms;
	return pms ? 0 : -ENOMEM;
}

/* Every histogram with an atom; the others, and maps of objects gone, keep their baselines. */
static int pull_maps(struct pull_run *r, const struct pull_metric *pms, size_t n)
{
	size_t i;
	int ret = 0;

	for (i = 0; !ret && i < n; i++)
		ret = pms[i].shape.oneof ? pull_map(r, &pms[i]) :
		      pull_carry_over(r, pms[i].h->obj, pms[i].h->map);
	for (i = 0; !ret && i < r->old.nmaps; i++)
		ret = pull_carry_over(r, r->old.maps[i].obj, r->old.maps[i].map);
	return ret;
}

static void run_free(struct pull_run *r)
{
	size_t i;

	for (i = 0; i < r->natoms; i++)
		atom_slot_free(r->atoms[i]);
	free(r->atoms);
	state_free(&r->old);
	state_free(&r->new);
	kstats_status_free(&r->status);
}

int pull_run(const struct pull_opts *o)
{
	struct pull_run r = { .o = o };
	struct kstats_snapshot cat = {};
	struct pull_metric *pms = NULL;
	char atoms_file[64] = "";
	int ret, lock_fd = -1;

	ret = kstats_boot_id(r.boot_id, sizeof(r.boot_id));
	if (ret) {
		fprintf(stderr, "kstats pull: cannot read the boot id: %s\n", strerror(-ret));
		return KSTATS_EXIT_ERROR;
	}
	if (catalog(&r, &cat, &pms)) {
		ret = KSTATS_EXIT_USAGE;
		goto out;
	}
	ret = pull_take_lock(o, &lock_fd);
	if (ret) {
		ret = ret == -EBUSY ? KSTATS_EXIT_BUSY : KSTATS_EXIT_ERROR;
		goto out;
	}
	kstats_hook_point("locked");
	ret = pull_load_state(&r);
	if (ret) {
		ret = KSTATS_EXIT_ERROR;
		goto out;
	}
	ret = pull_maps(&r, pms, cat.nhists);
	if (ret) {
		fprintf(stderr, "kstats pull: %s\n", strerror(-ret));
		ret = KSTATS_EXIT_ERROR;
		goto out;
	}
	kstats_hook_point("read");
	if (!r.maps_read && !r.maps_failed) {
		fprintf(stderr, "kstats pull: no histogram map is pinned under %s; "
			KSTATS_FIX_LOAD "\n", o->pin_dir);
		ret = KSTATS_EXIT_NOT_LOADED;
		goto out;
	}
	ret = pull_commit(&r, atoms_file, sizeof(atoms_file));
	if (ret) {
		fprintf(stderr, "kstats pull: cannot write %s: %s\n",
			r.natoms ? "the atoms or the state" : "the state", strerror(-ret));
		ret = KSTATS_EXIT_ERROR;
		goto out;
	}
	kstats_hook_point("committed");
	if (r.natoms)
		printf("kstats pull: pull %" PRIu64 ": %zu atoms from %u maps -> %s/%s\n",
		       r.pull_id, r.natoms, r.maps_read, o->out_dir, atoms_file);
	else
		printf("kstats pull: pull %" PRIu64 ": no new counts in %u maps\n",
		       r.pull_id, r.maps_read);
	pull_apply_retention(o, r.boot_id);
	if (!r.maps_failed)
		ret = KSTATS_EXIT_OK;
	else
		ret = r.maps_denied == r.maps_failed ? KSTATS_EXIT_PERM : KSTATS_EXIT_ERROR;
out:
	run_free(&r);
	free(pms);
	kstats_snapshot_free(&cat);
	if (lock_fd >= 0)
		close(lock_fd);
	return ret;
}
