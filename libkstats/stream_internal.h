/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libkstats event-stream internals: stream.c opens a stream and its ring,
 * stream_queue.c runs the reader and consumer threads and their queues.
 */
#ifndef KSTATS_STREAM_INTERNAL_H
#define KSTATS_STREAM_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "kstats_meta.h"
#include "kstats_stream.h"
#include "map_internal.h"

#define CACHELINE 64
#define MAX_QUEUE_LEN (1u << 24)
#define STAGE_RECORDS 64	/* records per copy into the queues, within one consume pass */
#define TAIL_EVERY 64		/* records per tail update by a consumer */
#define WAKE_BACKLOG 4096		/* records that wake a sleeping consumer mid-pass */
#define HDR_PREFIX "hdr."
#define TAG_RING 0
#define TAG_STOP 1

struct consumer {
	/* The reader's own. */
	alignas(CACHELINE) uint32_t next;	/* the next slot to fill */
	uint32_t tail_seen;		/* the reader's last look at tail */
	uint32_t wake_backlog;
	_Atomic uint64_t dropped;
	/* Written by the reader, a batch at a time: slots before head are full. */
	alignas(CACHELINE) _Atomic uint32_t head;
	/* Written by the consumer. */
	alignas(CACHELINE) _Atomic uint32_t tail;
	_Atomic uint64_t handled;
	/* Rarely written.  wake_seq is the futex word: every wakeup bumps it. */
	alignas(CACHELINE) _Atomic uint32_t sleeping;
	_Atomic uint32_t wake_seq;
	_Atomic bool closed;
	struct kstats_stream *s;
	kstats_consumer_fn fn;
	void *ctx;
	unsigned char *slots;		/* (seq, raw record) * (mask + 1) */
	size_t slots_len;
	uint32_t mask;
	int64_t *vals;
	pthread_t thread;
	bool started;
};

/*
 * What decoding needs of a column, packed for the per-record loop: one
 * 8-byte load ending where the column ends (the 8-byte header comes first,
 * so it begins inside the record), shifted right past the bytes before the
 * column (little-endian) and masked to its size unless signed.
 */
struct leaf {
	uint32_t end8;			/* offset + size - 8 */
	uint32_t shift;			/* 64 - 8 * size */
	uint64_t mask;
};

struct kstats_stream {
	char name[KSTATS_NAME_LEN];
	int ring_fd, lock_fd, lock_dir_fd, epoll_fd, stop_fd, wake_fd, sig_fd;
	char lock_name[32];		/* in KSTATS_STREAM_LOCK_DIR */
	char ring_pin[PATH_MAX];
	struct stat ring_st;		/* the ring pin's inode when opened */
	uint32_t ring_id;
	struct ring_buffer *rb;
	struct kstats_map *drops;	/* the drop counter; its BTF is the object's */
	struct kstats_layout layout;	/* the whole record, header first */
	size_t first_col;		/* first column after the header */
	struct leaf *leaves;		/* layout.cols[first_col...], packed */
	size_t nleaves;
	bool leaves_flat;		/* all 8 bytes, in order, back to back: one memcpy */
	size_t slot_size;		/* a queue slot: seq, then the record padded to 8 bytes */
	unsigned char *stage;		/* STAGE_RECORDS slots, filled by the reader */
	uint32_t nstaged;
	struct consumer **consumers;
	size_t nconsumers;
	pthread_t reader;
	bool running, started;
	int reader_err;
	uint64_t next_seq;		/* reader only */
	_Atomic uint64_t delivered, malformed;
	_Atomic bool stop_requested;
	uint64_t drops_at_open;
};

/* Fills the decoding plan (leaves...) from the record's layout. */
int kstats_stream_plan(struct kstats_stream *s, const char *record, char *err, size_t errlen);

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "struct leaf's loads are little-endian");

static inline int64_t kstats_leaf_value(const unsigned char *rec, const struct leaf *l)
{
	uint64_t w;

	memcpy(&w, rec + l->end8, sizeof(w));
	return ((int64_t)w >> l->shift) & (int64_t)l->mask;
}

/* A record's columns, one int64 each (kstats_stream_record.vals). */
static inline void kstats_stream_decode(const struct leaf *l, const struct leaf *end, bool flat,
					const unsigned char *rec, int64_t *vals)
{
	if (flat) {
		/* All 8 bytes wide: end8 is the first one's offset. */
		memcpy(vals, rec + l->end8, (size_t)(end - l) * sizeof(*vals));
		return;
	}
	/* Two at a time: the loop's own instructions cost as much as a column's. */
	for (; end - l >= 2; l += 2, vals += 2) {
		vals[0] = kstats_leaf_value(rec, &l[0]);
		vals[1] = kstats_leaf_value(rec, &l[1]);
	}
	if (l != end)
		*vals = kstats_leaf_value(rec, l);
}

/* The ring's record callback (ring_buffer__new): the reader thread's work. */
int kstats_stream_on_record(void *ctx, void *data, size_t size);
void kstats_consumer_free(struct consumer *c);

#endif /* KSTATS_STREAM_INTERNAL_H */
