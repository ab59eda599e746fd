// SPDX-License-Identifier: GPL-2.0
/* One read of a pinned histogram map (kstats_histmap.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "kstats_histmap.h"

#define READ_ATTEMPTS 3

int kstats_pin_map_id(const char *pin, uint32_t *id)
{
	LIBBPF_OPTS(bpf_obj_get_opts, opts, .file_flags = BPF_F_RDONLY);
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int fd = bpf_obj_get_opts(pin, &opts), ret = 0;

	if (fd < 0)
		return -errno;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		ret = -errno;
	*id = info.id;
	close(fd);
	return ret;
}

int kstats_read_rows(struct kstats_map *m, int64_t **rows, size_t *nrows,
		     char *err, size_t errlen)
{
	int ret;

	*rows = calloc(kstats_map_max_rows(m) ?: 1,
		       (kstats_map_ncols(m) ?: 1) * sizeof(**rows));
	if (!*rows)
		return -ENOMEM;
	ret = kstats_map_read(m, *rows, kstats_map_max_rows(m), nrows, err, errlen);
	if (ret) {
		free(*rows);
		*rows = NULL;
	}
	return ret;
}

static int open_map(const char *obj_path, const char *map_name, const char *pin,
		    struct kstats_map **m, char *err, size_t errlen)
{
	struct kstats_map_opts mo = { .obj_path = obj_path, .map_name = map_name,
				      .pin_path = pin };
	char own_err[KSTATS_ERR_LEN];
	int ret = kstats_map_open(&mo, m, err, errlen);

	if (ret && ret != -ENOENT && obj_path) {
		mo.obj_path = NULL;
		if (!kstats_map_open(&mo, m, own_err, sizeof(own_err)))
			ret = 0;
	}
	return ret;
}

static int check_layout(struct kstats_histmap *h, char *err, size_t errlen)
{
	const struct kstats_column *c;
	size_t i;

	h->ncols = kstats_map_ncols(h->map);
	h->nkey = kstats_map_nkey_cols(h->map);
	if (h->ncols - h->nkey != BPF_TELEMETRY_NR_BUCKETS) {
		snprintf(err, errlen, "value is not a %d-bucket accumulator",
			 BPF_TELEMETRY_NR_BUCKETS);
		return -EINVAL;
	}
	h->width = kstats_map_column(h->map, h->nkey)->size;
	for (i = h->nkey; i < h->ncols; i++) {
		c = kstats_map_column(h->map, i);
		if (c->size != h->width || c->is_signed) {
			snprintf(err, errlen, "bucket counters are not one unsigned width");
			return -EINVAL;
		}
	}
	return 0;
}

/* The map id comes from the opened fd; the pin is checked again after the read. */
static int read_once(const char *obj_path, const char *map_name, const char *pin,
		     struct kstats_histmap *h, char *err, size_t errlen)
{
	uint32_t id_after;
	int ret;

	kstats_histmap_free(h);
	ret = open_map(obj_path, map_name, pin, &h->map, err, errlen);
	if (ret)
		return ret;
	h->map_id = kstats_map_id(h->map);
	ret = check_layout(h, err, errlen) ?:
	      kstats_read_rows(h->map, &h->rows, &h->nrows, err, errlen);
	if (ret)
		return ret;
	/* Gone or another map: replaced.  Any other error is its own. */
	ret = kstats_pin_map_id(pin, &id_after);
	if (ret == -ENOENT || (!ret && id_after != h->map_id))
		return -EAGAIN;
	if (ret)
		snprintf(err, errlen, "%s: %s", pin, strerror(-ret));
	return ret;
}

int kstats_histmap_read(const char *obj_path, const char *map_name, const char *pin,
			struct kstats_histmap *h, char *err, size_t errlen)
{
	int ret = -EAGAIN, attempt;

	memset(h, 0, sizeof(*h));
	for (attempt = 0; attempt < READ_ATTEMPTS && ret == -EAGAIN; attempt++)
		ret = read_once(obj_path, map_name, pin, h, err, errlen);
	if (ret == -EAGAIN)
		snprintf(err, errlen, "map was replaced while being read, %d times",
			 READ_ATTEMPTS);
	return ret;
}

void kstats_histmap_free(struct kstats_histmap *h)
{
	kstats_map_close(h->map);
	free(h->rows);
	h->map = NULL;
	h->rows = NULL;
	h->nrows = 0;
}
