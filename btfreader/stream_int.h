/* SPDX-License-Identifier: GPL-2.0 */
/* Event streams inside libkstats: stream.c opens and claims, stream_ring.c reads (streams.md). */
#ifndef KSTATS_STREAM_INT_H
#define KSTATS_STREAM_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <sys/param.h>

#include "kstats_meta.h"
#include "kstats_stream.h"
#include "map_internal.h"

#define CACHELINE 64

/* A column: one 8-byte load ending where it ends (the header's 8 bytes keep it inside the
 * record), shifted right past the bytes before it, masked to its size unless signed. */
struct leaf {
	uint32_t end8, shift;		/* offset + size - 8, 64 - 8 * size */
	uint64_t mask;
};

struct consumer {
	/* The ring position it holds.  CAS'd by itself to publish, by a faster consumer to
	 * take it over (overrun_gen odd meanwhile, resume_seq the seq at the new pos). */
	alignas(CACHELINE) _Atomic uint64_t pos;
	_Atomic uint32_t overrun_gen;
	_Atomic uint64_t resume_seq;
	_Atomic int sleeping;		/* how it waits, if it does */
	/* Its own, stored at each publish: read by the stats.  Handled: next_seq - dropped. */
	alignas(CACHELINE) _Atomic uint64_t next_seq, dropped, malformed;
	uint64_t published;		/* the pos it last stored */
	uint64_t lag_max;		/* bytes it may trail the fastest before it is overrun */
	struct kstats_stream *s;
	kstats_consumer_fn fn;
	void *ctx;
	pthread_t thread;
	int64_t vals[];			/* one per column of s->cols */
};

struct kstats_stream {
	char name[KSTATS_NAME_LEN];
	int ring_fd, lock_fd, lock_dir_fd, stop_fd, sig_fd, wake_fd;
	char lock_name[32];		/* in KSTATS_STREAM_LOCK_DIR */
	char ring_pin[PATH_MAX];
	struct stat ring_st;		/* the ring pin's inode when opened */
	uint32_t ring_id;
	/* The ring as the kernel maps it: consumer_pos's page writable, then producer_pos's
	 * page and the data pages twice in a row, read-only. */
	uint64_t *cons_pos;
	const uint64_t *prod_pos;
	const unsigned char *data;
	size_t prod_len;
	uint64_t ring_mask, stride;	/* stride: a record of layout.size with its header */
	struct kstats_map *drops;	/* the drop counter; its BTF is the object's */
	struct kstats_layout layout;	/* the whole record, header first */
	struct kstats_map cols;		/* layout's columns after the header */
	struct leaf *leaves;		/* one per column of cols */
	struct consumer **consumers;
	size_t nconsumers;
	bool started;
	int reader_err;			/* a consumer's failed poll */
	alignas(CACHELINE) _Atomic uint32_t wake_seq;	/* futex word of sleeping consumers */
	_Atomic bool stopping;
	uint64_t drops_at_open;
};

#endif /* KSTATS_STREAM_INT_H */
