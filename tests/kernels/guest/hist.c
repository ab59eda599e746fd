// SPDX-License-Identifier: GPL-2.0
/* Histogram maps read through libkstats, keyed by their first key column. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest.h"
#include "kstats_pins.h"
#include "kstats_reader.h"

struct rows {
	struct kstats_map *map;
	int64_t *data;
	size_t nrows, ncols, nkey;
};

static int rows_read(const struct lab *lab, const char *obj, const char *map,
		     struct rows *r)
{
	char obj_path[512], pin[512], err[KSTATS_ERR_LEN] = "";
	struct kstats_map_opts o = { .obj_path = obj_path, .map_name = map,
				     .pin_path = pin };
	size_t max;
	int ret;

	memset(r, 0, sizeof(*r));
	snprintf(obj_path, sizeof(obj_path), "%s/%s.bpf", lab->obj_dir, obj);
	kstats_pin_path(pin, sizeof(pin), lab->pin_dir, "map", obj, map);
	ret = kstats_map_open(&o, &r->map, err, sizeof(err));
	if (ret)
		goto out;
	r->ncols = kstats_map_ncols(r->map);
	r->nkey = kstats_map_nkey_cols(r->map);
	max = kstats_map_max_rows(r->map);
	r->data = calloc(max, r->ncols * sizeof(*r->data));
	ret = r->data ? kstats_map_read(r->map, r->data, max, &r->nrows, err,
					sizeof(err)) : -ENOMEM;
out:
	if (ret)
		lab_info("read %s/%s: %s", obj, map, *err ? err : strerror(-ret));
	return ret;
}

static void rows_free(struct rows *r)
{
	free(r->data);
	kstats_map_close(r->map);
}

static bool all_zero(const int64_t *v, size_t n)
{
	while (n--)
		if (v[n])
			return false;
	return true;
}

/* Zero rows are left out: ARRAY maps hold one per possible key. */
int hist_read(const struct lab *lab, const char *obj, const char *map,
	      struct hist *h)
{
	struct rows r;
	size_t i, b;
	int ret = rows_read(lab, obj, map, &r);

	memset(h, 0, sizeof(*h));
	if (!ret && (r.nkey < 1 || r.ncols - r.nkey != BPF_TELEMETRY_NR_BUCKETS)) {
		lab_info("%s/%s is not a keyed log2 histogram", obj, map);
		ret = -EINVAL;
	}
	for (i = 0; !ret && i < r.nrows; i++) {
		const int64_t *row = r.data + i * r.ncols;

		if (all_zero(row + r.nkey, BPF_TELEMETRY_NR_BUCKETS))
			continue;
		if (h->nkeys == LAB_MAX_KEYS) {
			lab_info("%s/%s has over %d non-zero keys", obj, map, LAB_MAX_KEYS);
			ret = -E2BIG;
			break;
		}
		h->keys[h->nkeys] = row[0];
		for (b = 0; b < BPF_TELEMETRY_NR_BUCKETS; b++)
			h->buckets[h->nkeys][b] = (uint64_t)row[r.nkey + b];
		h->nkeys++;
	}
	rows_free(&r);
	return ret;
}

static const uint64_t *hist_find(const struct hist *h, int64_t key)
{
	size_t i;

	for (i = 0; i < h->nkeys; i++)
		if (h->keys[i] == key)
			return h->buckets[i];
	return NULL;
}

uint64_t hist_key_total(const struct hist *h, int64_t key)
{
	const uint64_t *b = hist_find(h, key);
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; b && i < BPF_TELEMETRY_NR_BUCKETS; i++)
		sum += b[i];
	return sum;
}

uint64_t hist_bucket_total(const struct hist *h, unsigned int bucket)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < h->nkeys; i++)
		sum += h->buckets[i][bucket];
	return sum;
}

uint64_t hist_total(const struct hist *h)
{
	uint64_t sum = 0;
	unsigned int b;

	for (b = 0; b < BPF_TELEMETRY_NR_BUCKETS; b++)
		sum += hist_bucket_total(h, b);
	return sum;
}

/* Keys may appear between the reads, never disappear: counts only grow. */
int hist_delta(const struct hist *before, const struct hist *after,
	       struct hist *delta)
{
	const uint64_t *old;
	size_t i, b;

	memset(delta, 0, sizeof(*delta));
	for (i = 0; i < after->nkeys; i++) {
		old = hist_find(before, after->keys[i]);
		delta->keys[i] = after->keys[i];
		for (b = 0; b < BPF_TELEMETRY_NR_BUCKETS; b++) {
			uint64_t was = old ? old[b] : 0;

			if (after->buckets[i][b] < was)
				return -EINVAL;
			delta->buckets[i][b] = after->buckets[i][b] - was;
		}
		delta->nkeys++;
	}
	for (i = 0; i < before->nkeys; i++)
		if (!hist_find(after, before->keys[i]))
			return -EINVAL;
	return 0;
}

/* Value columns of a struct kstats_name are its characters, in order. */
int hist_name(const struct lab *lab, const char *obj, const char *map,
	      int64_t id, char *name, size_t len)
{
	struct rows r;
	size_t i, c, n;
	int ret = rows_read(lab, obj, map, &r);

	if (ret)
		return ret;
	ret = -ENOENT;
	for (i = 0; i < r.nrows; i++) {
		const int64_t *row = r.data + i * r.ncols;

		if (r.nkey != 1 || row[0] != id)
			continue;
		for (c = r.nkey, n = 0; c < r.ncols && n + 1 < len && row[c]; c++)
			name[n++] = (char)row[c];
		name[n] = 0;
		ret = n ? 0 : -ENODATA;
		break;
	}
	rows_free(&r);
	return ret;
}
