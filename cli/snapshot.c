// SPDX-License-Identifier: GPL-2.0
/* The catalog of histograms and one read of their pinned maps. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "hist.h"
#include "kstats.h"
#include "kstats_objmeta.h"
#include "kstats_pins.h"
#include "kstats_status.h"
#include "delta.h"

int kstats_each_object(const char *obj_dir, const char *tool,
		       int (*fn)(void *ctx, const char *path, const char *obj,
				 const struct kstats_objmeta *meta), void *ctx)
{
	struct kstats_objmeta meta;
	char path[4096], obj[KSTATS_OBJ_LEN], err[4096 + 256];
	struct dirent **ents;
	int n = kstats_scan_objects(obj_dir, &ents), i, ret = 0, r;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", obj_dir, ents[i]->d_name);
		free(ents[i]);
		if (ret || kstats_obj_name(path, obj, sizeof(obj)))
			continue;
		r = kstats_objmeta_read(path, &meta, err, sizeof(err));
		/* One bad file (empty, garbage, a dangling link) must not hide the rest. */
		if (r && r != -ENOMEM && tool)
			fprintf(stderr, "kstats %s: warning: %s; skipped (fix or remove it)\n",
				tool, err);
		if (r == -ENOMEM)
			ret = r;
		if (r)
			continue;
		ret = fn(ctx, path, obj, &meta);
		kstats_objmeta_free(&meta);
	}
	if (n >= 0)
		free(ents);
	return n < 0 ? n : ret;
}

static int add_object(void *ctx, const char *path, const char *obj,
		      const struct kstats_objmeta *meta)
{
	struct kstats_snapshot *s = ctx;
	struct kstats_hist *h = realloc(s->hists, (s->nhists + meta->nhists) * sizeof(*h) ?: 1);
	size_t i;

	if (!h)
		return -ENOMEM;
	s->hists = h;
	for (i = 0; i < meta->nhists; i++) {
		h = &s->hists[s->nhists++];
		memset(h, 0, sizeof(*h));
		snprintf(h->metric, sizeof(h->metric), "%s", meta->hists[i].metric);
		snprintf(h->obj, sizeof(h->obj), "%s", obj);
		snprintf(h->obj_path, sizeof(h->obj_path), "%s", path);
		snprintf(h->map, sizeof(h->map), "%s", meta->hists[i].map);
		snprintf(h->names_map, sizeof(h->names_map), "%s", meta->hists[i].names_map);
		snprintf(h->key_enum, sizeof(h->key_enum), "%s", meta->hists[i].key_enum);
		h->unit = meta->hists[i].unit;
		h->selected = true;
	}
	return 0;
}

int kstats_snapshot_init(struct kstats_snapshot *s, const char *obj_dir,
			 char *err, size_t errlen)
{
	int ret;

	memset(s, 0, sizeof(*s));
	ret = kstats_each_object(obj_dir, "dump", add_object, s);
	if (ret)
		snprintf(err, errlen, "cannot read object directory %s: %s%s", obj_dir,
			 strerror(-ret), ret == -ENOMEM ? "" : "; pass --obj-dir");
	else if (!s->nhists)
		ret = kstats_fail(err, errlen, ENOENT, "no histogram in the objects of %s; "
				  "pass --obj-dir", obj_dir);
	if (ret)
		kstats_snapshot_free(s);
	return ret;
}

/* LOADED 2; a program still attached (a failed re-run keeps it) 1; else 0. */
static int load_rank(const struct kstats_status *st, const char *obj)
{
	const struct kstats_status_obj *o = st ? kstats_status_obj(st, obj) : NULL;
	size_t i;

	if (o && o->outcome == KSTATS_LOADED)
		return 2;
	for (i = 0; o && i < o->nprogs; i++)
		if (o->progs[i].prog_id)
			return 1;
	return 0;
}

/* The one loader/metric.c keeps: an older loader's second object is never exported. */
void kstats_snapshot_unique(struct kstats_snapshot *s, const struct kstats_status *st,
			    const char *tool)
{
	bool later;
	size_t i, j;

	for (i = 0; i < s->nhists; i++) {
		struct kstats_hist *h = &s->hists[i], *first;

		for (j = 0; j < i && !kstats_metric_same(s->hists[j].metric, h->metric); j++)
			;
		if (j == i)
			continue;
		first = &s->hists[j];
		later = load_rank(st, h->obj) > load_rank(st, first->obj);
		fprintf(stderr, "kstats %s: warning: metric %s is declared by objects %s "
			"and %s; showing %s's only: remove the other (" KSTATS_FIX_STATUS ")\n",
			tool, h->metric, first->obj, h->obj, later ? h->obj : first->obj);
		if (later)
			*first = *h;
		memmove(h, h + 1, (s->nhists - i - 1) * sizeof(*h));
		s->nhists--;
		i--;
	}
}

/*
 * Each map is decoded with the object as the loader loaded it, kept beside the status
 * file (loader/object.c), not with a newer one on disk whose maps it refused to replace
 * until the next boot (doc/loader.md, Upgrades).
 */
void kstats_snapshot_as_loaded(struct kstats_snapshot *s, const struct kstats_status *st,
			       const char *status_file, const char *pin_dir)
{
	const char *slash = strrchr(status_file, '/');
	char copy[sizeof(s->hists->obj_path)];
	size_t i;
	int n;

	if (!st || !st->pin_dir || strcmp(st->pin_dir, pin_dir))
		return;
	for (i = 0; i < s->nhists; i++) {
		struct kstats_hist *h = &s->hists[i];

		h->detached = !load_rank(st, h->obj);
		n = snprintf(copy, sizeof(copy), "%.*s/%s.bpf",
			     slash ? (int)(slash - status_file) : 1,
			     slash ? status_file : ".", h->obj);
		if (n < (int)sizeof(copy) && !access(copy, R_OK))
			memcpy(h->obj_path, copy, n + 1);
	}
}

int kstats_snapshot_select(struct kstats_snapshot *s, char *const *names, int n,
			   char *err, size_t errlen)
{
	char known[1024];
	size_t i, len;
	int k;

	for (i = 0; i < s->nhists; i++)
		s->hists[i].selected = !n;
	for (k = 0; k < n; k++) {
		bool found = false;

		for (i = 0; i < s->nhists; i++)
			if (!strcasecmp(s->hists[i].metric, names[k]))
				found = s->hists[i].selected = true;
		if (found)
			continue;
		for (i = 0, len = 0, *known = 0; i < s->nhists && len < sizeof(known); i++)
			len += snprintf(known + len, sizeof(known) - len, "%s%s", len ? ", " : "",
					s->hists[i].metric);
		return kstats_fail(err, errlen, EINVAL, "unknown metric '%s'; known metrics: %s",
				   names[k], known);
	}
	return 0;
}

int kstats_hist_fetch(struct kstats_hist *h, const char *pin_dir, char *err, size_t errlen)
{
	char pin[4096];
	int ret = kstats_pin_path(pin, sizeof(pin), pin_dir, "map", h->obj, h->map);

	if (ret)
		return ret;
	if (access(pin, F_OK)) {
		ret = -errno;
		kstats_histmap_free(&h->hm);	/* holds no unloaded map alive */
		if (ret == -ENOENT)
			return 1;	/* not loaded */
	} else {
		ret = kstats_histmap_read(h->obj_path, h->map, pin, &h->hm, err, errlen);
	}
	if (ret && !*err)
		snprintf(err, errlen, "%s: %s", pin, strerror(-ret));
	return ret;
}

/* Labels once per map: a reload with other columns is another map id. */
static int read_hist(struct kstats_hist *h, const char *pin_dir, char *err,
		     size_t errlen)
{
	const int64_t *row;
	size_t r, i;
	int ret = kstats_hist_fetch(h, pin_dir, err, errlen);

	free(h->series);
	h->series = NULL;
	h->nseries = 0;
	if (ret == 1) {
		kstats_names_free(h->names);
		h->names = NULL;
	}
	if (!ret && h->labels_of != h->hm.map_id) {
		ret = kstats_labels_init(h, h->hm.map, err, errlen);
		h->labels_of = ret ? 0 : h->hm.map_id;
	}
	if (!ret && *h->names_map && h->nlabels)
		ret = kstats_hist_names(h, pin_dir, err, errlen);
	if (!ret && !(h->series = calloc(h->hm.nrows ?: 1, sizeof(*h->series))))
		ret = -ENOMEM;
	for (r = 0; !ret && r < h->hm.nrows; r++) {
		row = h->hm.rows + r * h->hm.ncols;
		for (i = 0; i < h->nlabels; i++)
			h->series[r].key[i] = row[i];
		for (i = 0; i < BPF_TELEMETRY_NR_BUCKETS; i++)
			h->series[r].buckets[i] = (uint64_t)row[h->hm.nkey + i];
		kstats_labels_resolve(h, &h->series[r]);
		h->nseries++;
	}
	if (!ret)
		keyed_sort(h->series, h->nseries, sizeof(*h->series), h->nlabels);
	h->loaded = !ret;
	if (ret < 0 && !*err)
		snprintf(err, errlen, "%s: %s", h->map, strerror(-ret));
	return ret < 0 ? ret : 0;
}

/* A pin directory missing or not on bpffs: nothing loaded; unreadable: all read_err. */
int kstats_snapshot_read(struct kstats_snapshot *s, const char *pin_dir)
{
	char err[4096 + 512] = "";	/* a pin path and why */
	size_t i;
	int ret, dir_ret = kstats_check_pin_dir(pin_dir, err, sizeof(err)), first = dir_ret;

	if (dir_ret)
		fprintf(stderr, "kstats dump: %s\n", err);
	clock_gettime(CLOCK_REALTIME, &s->realtime);
	clock_gettime(CLOCK_BOOTTIME, &s->boottime);
	for (i = 0; i < s->nhists; i++) {
		struct kstats_hist *h = &s->hists[i];

		if (!h->selected)
			continue;
		h->read_err = dir_ret == -ENOENT || dir_ret == -ENODEV ? 0 : dir_ret;
		h->loaded = false;
		*err = 0;
		ret = dir_ret ? 0 : read_hist(h, pin_dir, err, sizeof(err));
		if (!ret)
			continue;
		h->read_err = ret;
		first = first ?: ret;
		kstats_add_fix(err, sizeof(err), ret);
		fprintf(stderr, "kstats dump: %s: %s\n", h->metric, err);
	}
	return first;
}

int kstats_snapshot_dup(struct kstats_snapshot *d, const struct kstats_snapshot *s)
{
	size_t i;

	*d = *s;
	d->hists = calloc(s->nhists ?: 1, sizeof(*d->hists));
	if (!d->hists)
		return -ENOMEM;
	for (i = 0; i < s->nhists; i++) {
		struct kstats_hist *h = &d->hists[i];

		*h = s->hists[i];
		h->hm.map = NULL;	/* the handles stay s's; the id and width are kept */
		h->hm.rows = NULL;
		h->names = NULL;
		h->series = calloc(h->nseries ?: 1, sizeof(*h->series));
		if (!h->series) {
			d->nhists = i;
			kstats_snapshot_free(d);
			return -ENOMEM;
		}
		if (h->nseries)
			memcpy(h->series, s->hists[i].series, h->nseries * sizeof(*h->series));
	}
	return 0;
}

void kstats_snapshot_subtract(struct kstats_snapshot *cur,
			      const struct kstats_snapshot *prev)
{
	unsigned int anomalies;
	struct delta_key dk;
	size_t i, j;

	cur->is_delta = true;
	cur->since_realtime = prev->realtime;
	cur->since_boottime = prev->boottime;
	for (i = 0; i < cur->nhists && i < prev->nhists; i++) {
		struct kstats_hist *c = &cur->hists[i];
		const struct kstats_hist *p = &prev->hists[i];

		if (!c->loaded || !p->loaded || c->hm.map_id != p->hm.map_id)
			continue;	/* a new map: everything it holds is new */
		anomalies = 0;
		for (j = 0; j < c->nseries; j++) {
			const struct kstats_series *ps =
				keyed_find(p->series, p->nseries, sizeof(*ps), c->nlabels,
					   c->series[j].key);

			if (!ps)
				continue;
			/* The pull's per-bucket deltas (state.c). */
			delta_begin(&dk, c->series[j].buckets, ps->buckets, c->hm.width);
			memcpy(c->series[j].buckets, dk.pending, sizeof(c->series[j].buckets));
			anomalies += dk.anomalies;
		}
		if (anomalies)
			fprintf(stderr, "kstats dump: warning: %s: %u buckets went backwards "
				"in map %u; shown as 0 (doc/pull.md, Deltas)\n", c->metric,
				anomalies, c->hm.map_id);
	}
}

void kstats_snapshot_free(struct kstats_snapshot *s)
{
	size_t i;

	for (i = 0; i < s->nhists; i++) {
		free(s->hists[i].series);
		kstats_histmap_free(&s->hists[i].hm);
		kstats_names_free(s->hists[i].names);
	}
	free(s->hists);
	memset(s, 0, sizeof(*s));
}
