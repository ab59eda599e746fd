// SPDX-License-Identifier: GPL-2.0
/* kstats pull, one histogram map: its per-key deltas into atoms, its new baselines. */
#include <errno.h>
#include <glob.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "kstats_fileio.h"
#include "kstats_hooks.h"
#include "kstats_pins.h"
#include "pull.h"

void pull_now(uint64_t *boot, uint64_t *real)
{
	*boot = kstats_clock_ns(CLOCK_BOOTTIME);
	*real = kstats_clock_ns(CLOCK_REALTIME);
	kstats_hook_clock(boot, real);
}

/* Earliest load time (boot-time ns) of a pinned program of obj using map_id. */
static bool prog_created(const char *pin_dir, const char *obj, uint32_t map_id,
			 uint64_t *boot)
{
	char pattern[4096];
	glob_t g;
	size_t i;
	bool found = false;

	if (kstats_pin_path(pattern, sizeof(pattern) - 1, pin_dir, "prog", obj, "*") ||
	    glob(pattern, 0, NULL, &g))
		return false;
	for (i = 0; i < g.gl_pathc; i++) {
		LIBBPF_OPTS(bpf_obj_get_opts, opts, .file_flags = BPF_F_RDONLY);
		__u32 ids[64], len = sizeof(struct bpf_prog_info), k;
		struct bpf_prog_info info = { .nr_map_ids = 64, .map_ids = (__u64)(unsigned long)ids };
		int fd = bpf_obj_get_opts(g.gl_pathv[i], &opts);

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len)) {
			for (k = 0; k < info.nr_map_ids && k < 64; k++)
				if (ids[k] == map_id && (!found || info.load_time < *boot)) {
					*boot = info.load_time;
					found = true;
				}
		}
		close(fd);
	}
	globfree(&g);
	return found;
}

/* A map's first window starts at its creation: loader status, program load time or boot. */
static void creation_time(const struct pull_run *r, const struct kstats_hist *h,
			  struct window *w)
{
	const struct kstats_status_map *m = kstats_status_map_by_id(&r->status, h->hm.map_id);
	const char *how = "the loader status";

	w->start_real = 0;
	if (m && m->created_boot_ns) {
		w->start_boot = m->created_boot_ns;
		w->start_real = m->created_real_ns;
	} else if (prog_created(r->o->pin_dir, h->obj, h->hm.map_id, &w->start_boot)) {
		how = "its programs' load time";
	} else {
		how = "boot (creation time unknown)";
		w->start_boot = 0;
	}
	if (w->start_boot > w->end_boot)
		w->start_boot = w->end_boot;
	if (!w->start_real)
		w->start_real = w->end_real - (w->end_boot - w->start_boot);
	if (r->o->verbose)
		fprintf(stderr, "kstats pull: %s/%s: map id %u, window starts at %s\n",
			h->obj, h->map, h->hm.map_id, how);
}

/* w: its end; kstats_hist_fetch() read h->hm. */
static int process_map(struct pull_run *r, const struct kstats_hist *h,
		       const struct atom_shape *shape, struct window w)
{
	const struct pull_map_state *old = state_find_map(&r->old, h->obj, h->map);
	const struct kstats_histmap *hm = &h->hm;
	struct pull_map_state ms = { .map_id = hm->map_id, .nkey_cols = hm->nkey,
				     .start_boot_ns = w.end_boot, .start_real_ns = w.end_real };
	static const uint64_t zero[PULL_NR_BUCKETS];
	size_t nkey = hm->nkey, i, b;
	uint64_t cur[PULL_NR_BUCKETS];
	int32_t buckets[PULL_NR_BUCKETS];
	const struct pull_key *prev;
	const int64_t *row;
	struct pull_key *k;
	struct delta_key dk;
	const char *name;
	int ret = 0;

	if (old && !r->boot_changed && old->map_id == hm->map_id && old->nkey_cols == nkey) {
		w.start_boot = old->start_boot_ns;
		w.start_real = old->start_real_ns;
	} else {
		creation_time(r, h, &w);
		w.reset = old || r->boot_changed || r->lost;
		old = NULL;
	}
	window_settle(&w);
	snprintf(ms.obj, sizeof(ms.obj), "%s", h->obj);
	snprintf(ms.map, sizeof(ms.map), "%s", h->map);
	ms.keys = calloc(hm->nrows ?: 1, sizeof(*ms.keys));
	if (!ms.keys)
		return -ENOMEM;
	for (i = 0; i < hm->nrows && !ret; i++) {
		row = hm->rows + i * hm->ncols;
		k = &ms.keys[ms.nkeys];
		memset(k, 0, sizeof(*k));
		memcpy(k->key, row, nkey * sizeof(*row));
		for (b = 0; b < PULL_NR_BUCKETS; b++)
			cur[b] = (uint64_t)row[nkey + b];
		name = kstats_names_find(h->names, k->key[0]) ?: "";
		prev = old ? keyed_find(old->keys, old->nkeys, sizeof(*old->keys), nkey, k->key) :
		       NULL;
		delta_begin(&dk, cur, prev ? prev->base : NULL, hm->width);
		while (!ret && delta_next_atom(&dk, buckets))
			ret = pull_emit_atom(r, shape, &w, k->key, nkey, name, buckets,
					     dk.chunks == 1 ? dk.anomalies : 0);
		delta_new_base(&dk, cur, hm->width, k->base);
		/* An all-zero baseline is the same as none: keep the state small. */
		if (!ret && memcmp(k->base, zero, sizeof(zero)))
			ms.nkeys++;
	}
	if (!ret)
		ret = state_add_map(&r->new, &ms);
	free(ms.keys);
	return ret;
}

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

int pull_map(struct pull_run *r, struct kstats_hist *h, const struct atom_shape *shape)
{
	struct window w = {};
	char err[KSTATS_ERR_LEN] = "", nerr[KSTATS_ERR_LEN] = "";
	int ret = kstats_hist_fetch(h, r->o->pin_dir, err, sizeof(err));

	pull_now(&w.end_boot, &w.end_real);
	/* Gone while its map lives on (a loader swap): keep the baseline, or the next pull
	 * would emit again what was already emitted. */
	if (ret == 1) {
		if (r->o->verbose)
			fprintf(stderr, "kstats pull: %s/%s: not pinned (object not loaded), "
				"skipped\n", h->obj, h->map);
		return pull_carry_over(r, h->obj, h->map);
	}
	if (!ret && (!h->hm.nkey || h->hm.nkey > PULL_MAX_KEY_COLS))
		ret = kstats_fail(err, sizeof(err), EINVAL, "a histogram with %zu key columns: "
				  "atoms take 1..%d", h->hm.nkey, PULL_MAX_KEY_COLS);
	/* A map that cannot be read keeps its baseline; the pull exits non-zero. */
	if (ret) {
		if (!*err)
			snprintf(err, sizeof(err), "%s", strerror(-ret));
		kstats_add_fix(err, sizeof(err), ret);
		fprintf(stderr, "kstats pull: %s/%s: %s\n", h->obj, h->map, err);
		r->maps_failed++;
		r->maps_denied += ret == -EPERM || ret == -EACCES;
		ret = pull_carry_over(r, h->obj, h->map);
		goto out;
	}
	r->maps_read++;
	/* A missing or unreadable id -> name dictionary only loses names. */
	if (*h->names_map && kstats_hist_names(h, r->o->pin_dir, nerr, sizeof(nerr)) && r->o->verbose)
		fprintf(stderr, "kstats pull: %s/%s: names unavailable: %s\n", h->obj,
			h->names_map, nerr);
	ret = process_map(r, h, shape, w);
out:
	kstats_histmap_free(&h->hm);
	kstats_names_free(h->names);
	h->names = NULL;
	return ret;
}
