// SPDX-License-Identifier: GPL-2.0
/* The histogram path: a map of key leaves and BPF_TELEMETRY_NR_BUCKETS counters. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf_telemetry.h"
#include "map_internal.h"

static int histmap_open(const char *obj_path, const char *map_name, const char *pin,
			struct kstats_histmap *h, char *err, size_t errlen)
{
	struct kstats_map_opts mo = { .obj_path = obj_path, .map_name = map_name, .pin_path = pin };
	char own_err[KSTATS_ERR_LEN];
	int ret = kstats_map_open(&mo, &h->map, err, errlen);
	size_t i;

	if (ret && ret != -ENOENT && obj_path) {
		mo.obj_path = NULL;
		if (!kstats_map_open(&mo, &h->map, own_err, sizeof(own_err)))
			ret = 0;
	}
	if (ret)
		return ret;
	h->ncols = kstats_map_ncols(h->map);
	h->nkey = kstats_map_nkey_cols(h->map);
	if (h->ncols - h->nkey != BPF_TELEMETRY_NR_BUCKETS)
		return kstats_fail(err, errlen, EINVAL, "value is not a %d-bucket accumulator",
				   BPF_TELEMETRY_NR_BUCKETS);
	h->width = h->map->cols[h->nkey].size;
	for (i = h->nkey; i < h->ncols; i++)
		if (h->map->cols[i].size != h->width || h->map->cols[i].is_signed)
			return kstats_fail(err, errlen, EINVAL,
					   "bucket counters are not one unsigned width");
	h->rows = calloc(kstats_map_max_rows(h->map) ?: 1, h->ncols * sizeof(*h->rows));
	return h->rows ? 0 : -ENOMEM;
}

int kstats_histmap_read(const char *obj_path, const char *map_name, const char *pin,
			struct kstats_histmap *h, char *err, size_t errlen)
{
	int ret, tries;

	for (tries = 0; tries < 2; tries++) {
		ret = h->map ? 0 : histmap_open(obj_path, map_name, pin, h, err, errlen);
		if (ret) {
			kstats_histmap_free(h);
			return ret;
		}
		ret = kstats_map_read(h->map, h->rows, kstats_map_max_rows(h->map),
				      &h->nrows, err, errlen);
		if (ret != -ESTALE)
			break;
		kstats_histmap_free(h);
		*err = 0;
	}
	if (ret)
		h->nrows = 0;
	else
		h->map_id = kstats_map_id(h->map);
	return ret;
}

void kstats_histmap_free(struct kstats_histmap *h)
{
	kstats_map_close(h->map);
	free(h->rows);
	memset(h, 0, sizeof(*h));
}
