// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kstats_pins.h"
#include "kstats_stream.h"
#include "stream.h"

int kstream_col(const struct kstats_stream *s, const char *name)
{
	const struct kstats_map *m = kstats_stream_columns(s);
	size_t i;

	for (i = 0; i < kstats_map_ncols(m); i++)
		if (!strcmp(kstats_map_column(m, i)->name, name))
			return (int)i;
	return -ENOENT;
}

int kstream_flood_load(struct ktest *t, struct kstream_flood *f)
{
	struct bpf_map *map;
	char pin[512];
	int ret;

	memset(f, 0, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "%s/tests/bpf", t->build);
	snprintf(f->path, sizeof(f->path), "%s/" KSTREAM_FLOOD_OBJ ".bpf", f->dir);
	f->obj = bpf_object__open_file(f->path, NULL);
	if (!f->obj)
		return -errno;
	bpf_object__for_each_map(map, f->obj) {
		ret = kstats_pin_path(pin, sizeof(pin), t->pin_dir, "map",
				      KSTREAM_FLOOD_OBJ, bpf_map__name(map));
		if (!ret)
			ret = bpf_map__set_pin_path(map, pin);
		if (ret)
			goto err_out;
	}
	ret = bpf_object__load(f->obj);
	if (!ret)
		return 0;
err_out:
	kstream_flood_close(f);
	return ret;
}

int kstream_flood_run(struct kstream_flood *f, const char *prog, unsigned int repeat)
{
	unsigned char pkt[64] = {};
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = pkt, .data_size_in = sizeof(pkt),
		    .repeat = repeat);
	struct bpf_program *p = bpf_object__find_program_by_name(f->obj, prog);

	if (!p)
		return -ENOENT;
	return bpf_prog_test_run_opts(bpf_program__fd(p), &run) ? -errno : 0;
}

void kstream_flood_close(struct kstream_flood *f)
{
	bpf_object__close(f->obj);
	f->obj = NULL;
}

void krecorder_init(struct krecorder *r, size_t ncols)
{
	memset(r, 0, sizeof(*r));
	r->ncols = ncols;
	r->filter_col = -1;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
}

static int grow(struct krecorder *r)
{
	size_t cap = r->cap ? r->cap * 2 : 1024;
	uint64_t *seq = realloc(r->seq, cap * sizeof(*seq));
	uint64_t *ts;
	int64_t *vals;

	if (seq)
		r->seq = seq;
	ts = seq ? realloc(r->ts, cap * sizeof(*ts)) : NULL;
	if (ts)
		r->ts = ts;
	vals = ts ? realloc(r->vals, cap * r->ncols * sizeof(*vals)) : NULL;
	if (!vals)
		return -ENOMEM;
	r->vals = vals;
	r->cap = cap;
	return 0;
}

void krecorder_fn(void *ctx, const struct kstats_stream_record *rec)
{
	struct krecorder *r = ctx;

	pthread_mutex_lock(&r->lock);
	while (r->gated)
		pthread_cond_wait(&r->cond, &r->lock);
	pthread_mutex_unlock(&r->lock);
	atomic_fetch_add(&r->calls, 1);
	if (r->filter_col >= 0 && rec->vals[r->filter_col] != r->filter_val)
		return;
	if (r->n == r->cap && grow(r)) {
		fprintf(stderr, "krecorder: out of memory\n");
		abort();
	}
	r->seq[r->n] = rec->seq;
	r->ts[r->n] = rec->ts_ns;
	memcpy(r->vals + r->n * r->ncols, rec->vals, r->ncols * sizeof(*r->vals));
	r->n++;
}

void krecorder_gate(struct krecorder *r, bool shut)
{
	pthread_mutex_lock(&r->lock);
	r->gated = shut;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

int64_t krecorder_val(const struct krecorder *r, size_t i, size_t col)
{
	return r->vals[i * r->ncols + col];
}

void krecorder_free(struct krecorder *r)
{
	free(r->seq);
	free(r->ts);
	free(r->vals);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
}
