/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the event-stream tests: the flood object (tests/bpf/
 * stream_flood.c) pinned in a test's pin dir and fed with
 * BPF_PROG_TEST_RUN, and a consumer that records what it receives and can
 * be held shut to play a stalled consumer.
 */
#ifndef KSTATS_TEST_STREAM_H
#define KSTATS_TEST_STREAM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ktest.h"

#define KSTREAM_FLOOD_OBJ "stream_flood"

struct bpf_object;
struct kstats_stream;
struct kstats_stream_record;

struct kstream_flood {
	struct bpf_object *obj;
	char path[300];		/* the object, for kstats_stream_opts.obj_path */
	char dir[256];		/* its directory, for kstats watch --obj-dir */
};

/* Loads the flood object with its maps pinned under t->pin_dir. */
int kstream_flood_load(struct ktest *t, struct kstream_flood *f);
/* One BPF_PROG_TEST_RUN of prog with repeat runs: repeat attempted records. */
int kstream_flood_run(struct kstream_flood *f, const char *prog, unsigned int repeat);
void kstream_flood_close(struct kstream_flood *f);
/* Index of the stream's column named name, or -ENOENT. */
int kstream_col(const struct kstats_stream *s, const char *name);

/* Consumer context: every record's seq, ts_ns and column values. */
struct krecorder {
	size_t ncols;
	int filter_col;		/* keep rows whose vals[filter_col] == filter_val; -1: all */
	int64_t filter_val;
	uint64_t *seq, *ts;
	int64_t *vals;		/* n rows of ncols */
	size_t n, cap;
	atomic_size_t calls;	/* records received, kept or not */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool gated;		/* while set, the callback blocks */
};

void krecorder_init(struct krecorder *r, size_t ncols);
void krecorder_fn(void *ctx, const struct kstats_stream_record *rec);
void krecorder_gate(struct krecorder *r, bool shut);
void krecorder_free(struct krecorder *r);
/* Row i's column col. */
int64_t krecorder_val(const struct krecorder *r, size_t i, size_t col);

#endif /* KSTATS_TEST_STREAM_H */
