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
#include <sys/stat.h>

#include "kstats_meta.h"
#include "kstats_stream.h"
#include "map_types.h"

#define CACHELINE 64
#define MAX_QUEUE_LEN (1u << 24)
#define PUBLISH_EVERY 64		/* records per head update, within one consume pass */
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
	size_t slot_size, slots_len;
	uint32_t mask;
	int64_t *vals;
	pthread_t thread;
	bool started;
};

/* What decoding needs of a column, packed for the per-record loop. */
struct leaf {
	uint32_t offset;
	uint8_t size;
	bool is_signed;
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

/* The ring's record callback (ring_buffer__new): the reader thread's work. */
int kstats_stream_on_record(void *ctx, void *data, size_t size);
void kstats_consumer_free(struct consumer *c);

#endif /* KSTATS_STREAM_INTERNAL_H */
