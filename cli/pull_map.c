// SPDX-License-Identifier: GPL-2.0
/*
 * kstats pull, one histogram map: read it, turn each key's per-bucket
 * deltas against its baseline into atoms, and record the new baseline.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kstats.h"
#include "kstats_pins.h"
#include "pull_run.h"

/* The map, read, with the end of its window taken right after. */
static int read_map(const struct pull_metric *pm, const char *pin,
		    struct metric_read *mr, char *err, size_t errlen)
{
	int ret = kstats_histmap_read(pm->h->obj_path, pm->h->map, pin, &mr->hm,
				      err, errlen);

	pull_now(&mr->end_boot, &mr->end_real);
	if (!ret && (!mr->hm.nkey || mr->hm.nkey > PULL_MAX_KEY_COLS)) {
		snprintf(err, errlen, "a histogram with %zu key columns: atoms take 1..%d",
			 mr->hm.nkey, PULL_MAX_KEY_COLS);
		ret = -EINVAL;
	}
	return ret;
}

/* The id -> name dictionary; a missing or unreadable one only loses names. */
static void read_names(const struct pull_run *r, const struct pull_metric *pm,
		       struct metric_read *mr)
{
	char err[KSTATS_ERR_LEN] = "";

	if (!*pm->h->names_map)
		return;
	if (kstats_names_read(pm->h->obj_path, pm->h->obj, pm->h->names_map,
			      r->o->pin_dir, &mr->names, err, sizeof(err)) && r->o->verbose)
		fprintf(stderr, "kstats pull: %s/%s: names unavailable: %s\n",
			pm->h->obj, pm->h->names_map, err);
}

/* One row: its atoms and its new baseline in k. */
static int process_row(struct pull_run *r, const struct pull_metric *pm,
		       const struct metric_read *mr, const struct window *w,
		       const struct pull_map_state *old, const int64_t *row,
		       struct pull_key *k)
{
	size_t nkey = mr->hm.nkey, i;
	const struct pull_key *prev;
	const char *name;
	uint64_t cur[PULL_NR_BUCKETS];
	int32_t buckets[PULL_NR_BUCKETS];
	struct delta_key dk;
	int ret;

	memset(k, 0, sizeof(*k));
	memcpy(k->key, row, nkey * sizeof(*row));
	for (i = 0; i < PULL_NR_BUCKETS; i++)
		cur[i] = (uint64_t)row[nkey + i];
	name = kstats_names_find(mr->names, k->key[0]) ?: "";
	prev = old ? state_find_key(old, k->key) : NULL;
	delta_begin(&dk, cur, prev ? prev->base : NULL, mr->hm.width);
	while (delta_next_atom(&dk, buckets)) {
		ret = pull_emit_atom(r, pm, w, k->key, nkey, name, buckets,
				     dk.chunks == 1 ? dk.anomalies : 0);
		if (ret)
			return ret;
	}
	delta_new_base(&dk, cur, mr->hm.width, k->base);
	return 0;
}

static bool all_zero(const uint64_t *base)
{
	size_t b;

	for (b = 0; b < PULL_NR_BUCKETS; b++)
		if (base[b])
			return false;
	return true;
}

static int process_map(struct pull_run *r, const struct pull_metric *pm,
		       const struct metric_read *mr)
{
	const struct pull_map_state *old = state_find_map(&r->old, pm->h->obj, pm->h->map);
	struct pull_map_state ms = { .map_id = mr->hm.map_id, .nkey_cols = mr->hm.nkey,
				     .start_boot_ns = mr->end_boot,
				     .start_real_ns = mr->end_real };
	struct window w = { .end_boot = mr->end_boot, .end_real = mr->end_real };
	bool same = old && !r->boot_changed && old->map_id == mr->hm.map_id &&
		    old->nkey_cols == mr->hm.nkey;
	size_t i;
	int ret = 0;

	if (same) {
		w.start_boot = old->start_boot_ns;
		w.start_real = old->start_real_ns;
	} else {
		pull_creation_time(r, pm, mr, &w.start_boot, &w.start_real);
		w.reset = old || r->boot_changed || r->lost;
		old = NULL;
	}
	window_settle(&w);
	snprintf(ms.obj, sizeof(ms.obj), "%s", pm->h->obj);
	snprintf(ms.map, sizeof(ms.map), "%s", pm->h->map);
	ms.keys = calloc(mr->hm.nrows ?: 1, sizeof(*ms.keys));
	if (!ms.keys)
		return -ENOMEM;
	for (i = 0; i < mr->hm.nrows && !ret; i++) {
		ret = process_row(r, pm, mr, &w, old, mr->hm.rows + i * mr->hm.ncols,
				  &ms.keys[ms.nkeys]);
		/* An all-zero baseline is the same as none: keep the state small. */
		if (!ret && !all_zero(ms.keys[ms.nkeys].base))
			ms.nkeys++;
	}
	if (!ret)
		ret = state_add_map(&r->new, &ms);
	free(ms.keys);
	return ret;
}

/* A map not pulled keeps its old baseline for the next pull. */
int pull_carry_over(struct pull_run *r, const char *obj, const char *map)
{
	const struct pull_map_state *old = state_find_map(&r->old, obj, map);
	struct pull_map_state ms;
	int ret;

	if (!old || state_find_map(&r->new, obj, map))
		return 0;
	ms = *old;
	/* Map ids restart at boot: an old one must not match a map of this boot. */
	if (r->boot_changed)
		ms.map_id = 0;
	ms.keys = malloc((old->nkeys ?: 1) * sizeof(*ms.keys));
	if (!ms.keys)
		return -ENOMEM;
	memcpy(ms.keys, old->keys, old->nkeys * sizeof(*ms.keys));
	ret = state_add_map(&r->new, &ms);
	free(ms.keys);
	return ret;
}

/* A map that cannot be read keeps its baseline; the pull exits non-zero. */
static int map_failed(struct pull_run *r, const struct pull_metric *pm, int err,
		      char *msg, size_t len)
{
	if (!*msg)
		snprintf(msg, len, "%s", strerror(-err));
	kstats_add_fix(msg, len, err);
	fprintf(stderr, "kstats pull: %s/%s: %s\n", pm->h->obj, pm->h->map, msg);
	r->maps_failed++;
	r->maps_denied += err == -EPERM || err == -EACCES;
	return pull_carry_over(r, pm->h->obj, pm->h->map);
}

int pull_map(struct pull_run *r, const struct pull_metric *pm)
{
	struct metric_read mr = {};
	char pin[4096], err[KSTATS_ERR_LEN] = "";
	int ret;

	ret = kstats_pin_path(pin, sizeof(pin), r->o->pin_dir, "map", pm->h->obj,
			      pm->h->map);
	if (ret)
		return ret;
	/*
	 * A pin can be gone while its map lives on (a loader swap in
	 * progress): keep the baseline, or that map's next pull would emit
	 * again what was already emitted.
	 */
	if (access(pin, F_OK)) {
		if (errno != ENOENT)
			return map_failed(r, pm, -errno, err, sizeof(err));
		if (r->o->verbose)
			fprintf(stderr, "kstats pull: %s/%s: not pinned (object not loaded), "
				"skipped\n", pm->h->obj, pm->h->map);
		return pull_carry_over(r, pm->h->obj, pm->h->map);
	}
	ret = read_map(pm, pin, &mr, err, sizeof(err));
	if (ret) {
		ret = map_failed(r, pm, ret, err, sizeof(err));
		goto out;
	}
	r->maps_read++;
	read_names(r, pm, &mr);
	ret = process_map(r, pm, &mr);
out:
	kstats_histmap_free(&mr.hm);
	kstats_names_free(mr.names);
	return ret;
}
