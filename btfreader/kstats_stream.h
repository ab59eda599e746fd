/* SPDX-License-Identifier: GPL-2.0 */
/* libkstats event streams (doc/streams.md).  The library's threads block every signal: hand
 * SIGINT and SIGTERM to kstats_stream_wait().  0 (or an id) or -errno, the reason in err. */
#ifndef KSTATS_STREAM_H
#define KSTATS_STREAM_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "kstats_reader.h"

struct kstats_stream;

struct kstats_stream_opts {
	const char *obj_path;	/* the .bpf object: BTF and .kstats.streams */
	const char *stream;	/* stream name; NULL: the object's only stream */
	const char *pin_dir;	/* its maps are pinned there as map_<obj>_<map> */
};

/* One record, decoded from the ring in place for a consumer: valid during the callback. */
struct kstats_stream_record {
	uint64_t seq;		/* 0, 1, 2... in ring order, per open stream */
	uint64_t ts_ns;		/* the record's CLOCK_MONOTONIC stamp */
	const int64_t *vals;	/* one per column of kstats_stream_columns() */
};

/* Runs on the consumer's own thread, in seq order; may call request_stop. */
typedef void (*kstats_consumer_fn)(void *ctx, const struct kstats_stream_record *rec);

struct kstats_stream_stats {
	uint64_t delivered;	/* records read from the ring (by the furthest consumer) */
	uint64_t malformed;	/* records of the wrong size: read, not passed on */
	uint64_t kernel_drops;	/* failed reserves since the object was loaded */
	uint64_t kernel_drops_at_open;
};

struct kstats_consumer_stats {
	uint64_t handled;	/* records passed to the callback */
	uint64_t dropped;	/* records it fell too far behind for: gaps in its seqs */
};

/* Root's own directory of stream claims (created 0700 when missing). */
#define KSTATS_STREAM_LOCK_DIR "/run/kernelstats-watch"

/* A second reader of the ring, anywhere, gets -EBUSY. */
int kstats_stream_open(const struct kstats_stream_opts *opts,
		       struct kstats_stream **out, char *err, size_t errlen);
void kstats_stream_close(struct kstats_stream *s);
const char *kstats_stream_name(const struct kstats_stream *s);
/* The record's columns after the header, as a map without a key; valid until the close. */
const struct kstats_map *kstats_stream_columns(const struct kstats_stream *s);
uint32_t kstats_stream_record_size(const struct kstats_stream *s);

/* Before the start: it may trail the fastest consumer by queue_len records (a power of two
 * up) before it loses records itself, rather than the kernel for all; returns its id. */
int kstats_stream_add_consumer(struct kstats_stream *s, uint32_t queue_len,
			       kstats_consumer_fn fn, void *ctx, char *err, size_t errlen);
/* Once per open. */
int kstats_stream_start(struct kstats_stream *s, char *err, size_t errlen);
/* Blocks sigs and waits: the signal number, 0 on a stop request, -ETIME after timeout_ms. */
int kstats_stream_wait(struct kstats_stream *s, const sigset_t *sigs, int timeout_ms);
void kstats_stream_request_stop(struct kstats_stream *s);
/* Every consumer reads the ring up to where it ended at the stop; the reader's error. */
int kstats_stream_stop(struct kstats_stream *s, char *err, size_t errlen);

/* 0, -ESTALE: the pin names another ring (a reload), -ENOENT: nothing pinned there. */
int kstats_stream_check_pin(struct kstats_stream *s, char *err, size_t errlen);
int kstats_stream_get_stats(struct kstats_stream *s, struct kstats_stream_stats *st,
			    char *err, size_t errlen);
int kstats_stream_consumer_stats(const struct kstats_stream *s, int id,
				 struct kstats_consumer_stats *st);

#endif /* KSTATS_STREAM_H */
