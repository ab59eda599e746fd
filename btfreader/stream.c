// SPDX-License-Identifier: GPL-2.0
/* Event streams: a reader thread per claimed ring, a thread and an SPSC queue per consumer. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "kstats_tool.h"
#include "kstats_objmeta.h"
#include "kstats_pins.h"
#include "kstats_stream.h"
#include "map_internal.h"

#define CACHELINE 64
#define MAX_QUEUE_LEN (1u << 24)
#define STAGE_RECORDS 64	/* records per copy into the queues, within one consume pass */
#define TAIL_EVERY 64		/* records per tail update by a consumer */
#define WAKE_BACKLOG 4096	/* records that wake a sleeping consumer mid-pass */

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
};

/* One 8-byte load ending where the column ends (inside the record: the header is 8 bytes),
 * shifted right past the bytes before it and masked to its size unless signed. */
struct leaf {
	uint32_t end8;			/* offset + size - 8 */
	uint32_t shift;			/* 64 - 8 * size */
	uint64_t mask;
};

struct kstats_stream {
	char name[KSTATS_NAME_LEN];
	int ring_fd, lock_fd, lock_dir_fd, stop_fd, sig_fd;
	char lock_name[32];		/* in KSTATS_STREAM_LOCK_DIR */
	char ring_pin[PATH_MAX];
	struct stat ring_st;		/* the ring pin's inode when opened */
	uint32_t ring_id;
	struct ring_buffer *rb;
	struct kstats_map *drops;	/* the drop counter; its BTF is the object's */
	struct kstats_layout layout;	/* the whole record, header first */
	struct kstats_map cols;		/* layout's columns after the header */
	struct leaf *leaves;		/* one per column of cols */
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
	uint64_t drops_at_open;
};

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "struct leaf's loads are little-endian");

static inline int64_t leaf_value(const unsigned char *rec, const struct leaf *l)
{
	uint64_t w;

	memcpy(&w, rec + l->end8, sizeof(w));
	return ((int64_t)w >> l->shift) & (int64_t)l->mask;
}

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
		vals[0] = leaf_value(rec, &l[0]);
		vals[1] = leaf_value(rec, &l[1]);
	}
	if (l != end)
		*vals = leaf_value(rec, l);
}

static void add(_Atomic uint64_t *counter, uint64_t n)
{
	/* Single writer: no locked add needed, readers see whole values. */
	atomic_store_explicit(counter, atomic_load_explicit(counter, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

static void wake_consumer(struct consumer *c)
{
	atomic_fetch_add(&c->wake_seq, 1);
	syscall(SYS_futex, (uint32_t *)&c->wake_seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Wakes a sleeping consumer at a pass's end, or mid-pass once its backlog is worth a
 * futex call and two context switches. */
static void publish(struct consumer *c, bool pass_end)
{
	/* seq_cst store then load, against the consumer's store then load. */
	if (atomic_load_explicit(&c->head, memory_order_relaxed) != c->next)
		atomic_store(&c->head, c->next);
	else if (!pass_end)
		return;
	if (!atomic_load(&c->sleeping))
		return;
	/* Asleep, it is not writing tail: reading it costs no bouncing. */
	if (!pass_end &&
	    c->next - atomic_load_explicit(&c->tail, memory_order_relaxed) < c->wake_backlog)
		return;
	if (atomic_exchange(&c->sleeping, 0))
		wake_consumer(c);
}

/* As much of the staged run as fits (the rest is c's loss); one look at tail per run. */
static void enqueue_run(struct consumer *c, const unsigned char *run, uint32_t n)
{
	size_t slot_size = c->s->slot_size;
	uint32_t room = c->mask + 1 - (c->next - c->tail_seen), at, first;

	if (room < n) {
		c->tail_seen = atomic_load_explicit(&c->tail, memory_order_acquire);
		room = c->mask + 1 - (c->next - c->tail_seen);
		if (room < n) {
			add(&c->dropped, n - room);
			n = room;
		}
	}
	at = c->next & c->mask;
	first = n < c->mask + 1 - at ? n : c->mask + 1 - at;
	memcpy(c->slots + at * slot_size, run, first * slot_size);
	memcpy(c->slots, run + first * slot_size, (n - first) * slot_size);
	c->next += n;
}

static void flush(struct kstats_stream *s, bool pass_end)
{
	size_t i;

	/* First: handled + dropped never exceeds it. */
	atomic_store_explicit(&s->delivered, s->next_seq, memory_order_release);
	for (i = 0; i < s->nconsumers; i++) {
		if (s->nstaged)
			enqueue_run(s->consumers[i], s->stage, s->nstaged);
		publish(s->consumers[i], pass_end);
	}
	s->nstaged = 0;
}

static int kstats_stream_on_record(void *ctx, void *data, size_t size)
{
	struct kstats_stream *s = ctx;
	unsigned char *slot = s->stage + s->nstaged * s->slot_size;

	if (size != s->layout.size) {
		add(&s->malformed, 1);
		return 0;
	}
	memcpy(slot, &s->next_seq, sizeof(s->next_seq));
	memcpy(slot + sizeof(s->next_seq), data, size);
	s->next_seq++;
	if (++s->nstaged == STAGE_RECORDS)
		flush(s, false);
	return 0;
}

/*
 * Reads are destructive: the ring is claimed with flock on a file named by its map id in
 * a root-only directory (a name anyone could take first, such as an abstract socket, would
 * let any user stop root's watch); bpffs refuses to open the pin itself (EIO).  The lock
 * goes when its holder dies, the file when it closes: check the name still gives the file.
 */
static int lock_dir_open(char *err, size_t errlen)
{
	struct stat st = {};
	int fd;

	if (mkdir(KSTATS_STREAM_LOCK_DIR, 0700) && errno != EEXIST)
		return kstats_fail(err, errlen, errno, "cannot create %s: %s%s",
				   KSTATS_STREAM_LOCK_DIR, strerror(errno),
				   errno == EACCES ? " (run kstats watch as root)" : "");
	fd = open(KSTATS_STREAM_LOCK_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return kstats_fail(err, errlen, errno, "%s: %s", KSTATS_STREAM_LOCK_DIR,
				   strerror(errno));
	if (fstat(fd, &st) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		close(fd);
		return kstats_fail(err, errlen, EPERM, "%s is not a directory of this user's "
				   "alone (owner uid %u, mode %04o), so others could claim "
				   "streams; run: %s %s", KSTATS_STREAM_LOCK_DIR,
				   (unsigned int)st.st_uid, (unsigned int)(st.st_mode & 07777),
				   st.st_uid == geteuid() ? "chmod 0700" : "rm -r",
				   KSTATS_STREAM_LOCK_DIR);
	}
	return fd;
}

static int claim_ring(struct kstats_stream *s, const char *pin, char *err, size_t errlen)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	struct stat held, named;
	int fd, ret, tries;

	if (bpf_obj_get_info_by_fd(s->ring_fd, &info, &len))
		return kstats_fail(err, errlen, errno, "%s: %s", pin, strerror(errno));
	if (info.type != BPF_MAP_TYPE_RINGBUF)
		return kstats_fail(err, errlen, EINVAL, "%s: not a ring buffer but %s", pin,
				   libbpf_bpf_map_type_str(info.type));
	s->ring_id = info.id;
	snprintf(s->ring_pin, sizeof(s->ring_pin), "%s", pin);
	s->lock_dir_fd = lock_dir_open(err, errlen);
	if (s->lock_dir_fd < 0)
		return s->lock_dir_fd;
	snprintf(s->lock_name, sizeof(s->lock_name), "ring-%u", info.id);
	for (tries = 0; tries < 100; tries++) {
		fd = openat(s->lock_dir_fd, s->lock_name,
			    O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
		if (fd < 0)
			return kstats_fail(err, errlen, errno, "%s/%s: %s", KSTATS_STREAM_LOCK_DIR,
					   s->lock_name, strerror(errno));
		if (flock(fd, LOCK_EX | LOCK_NB))
			ret = errno == EWOULDBLOCK ?
			      kstats_fail(err, errlen, EBUSY, "stream %s already has a reader "
					  "(one per ring buffer: reads are destructive); stop the "
					  "other kstats watch", s->name) :
			      kstats_fail(err, errlen, errno, "flock: %s", strerror(errno));
		else if (fstat(fd, &held) || !S_ISREG(held.st_mode))
			ret = kstats_fail(err, errlen, EINVAL, "%s/%s: not a regular file",
					  KSTATS_STREAM_LOCK_DIR, s->lock_name);
		else if (fstatat(s->lock_dir_fd, s->lock_name, &named, AT_SYMLINK_NOFOLLOW) ||
			 named.st_ino != held.st_ino || named.st_dev != held.st_dev)
			ret = 1;	/* removed by its holder meanwhile: again */
		else
			break;
		close(fd);
		if (ret < 0)
			return ret;
	}
	if (tries < 100) {
		s->lock_fd = fd;	/* open only while locked: its close removes the file */
		return 0;
	}
	return kstats_fail(err, errlen, EBUSY, "stream %s: its claim keeps being removed; "
			   "stop the other kstats watch", s->name);
}

static const struct kstats_stream_meta *
pick_stream(const struct kstats_objmeta *meta, const struct kstats_stream_opts *o,
	    char *err, size_t errlen)
{
	const struct kstats_stream_meta *sm = NULL;
	char names[256] = "";
	size_t i, n = 0;

	if (o->stream)
		sm = kstats_objmeta_stream(meta, o->stream);
	else if (meta->nstreams == 1)
		sm = &meta->streams[0];
	if (sm)
		return sm;
	for (i = 0; i < meta->nstreams; i++)
		n += snprintf(names + n, n < sizeof(names) ? sizeof(names) - n : 0, "%s%s",
			      i ? ", " : "", meta->streams[i].name);
	if (o->stream)
		kstats_fail(err, errlen, ENOENT, "%s has no stream %s; it has: %s", o->obj_path,
			    o->stream, meta->nstreams ? names : "none");
	else
		kstats_fail(err, errlen, ENOENT, "%s has %zu streams; name one of: %s",
			    o->obj_path, meta->nstreams, meta->nstreams ? names : "none");
	return NULL;
}

static int kstats_stream_plan(struct kstats_stream *s, const char *record,
			      char *err, size_t errlen)
{
	const struct kstats_column *c = s->layout.cols;
	size_t first = 0, i;

	if (!s->layout.ncols || strcmp(c->name, "hdr.ts_ns") || c->offset || c->size != 8)
		return kstats_fail(err, errlen, EINVAL, "struct %s does not begin with "
				   "struct kstats_stream_hdr hdr", record);
	while (first < s->layout.ncols &&
	       !strncmp(c[first].name, "hdr.", 4))
		first++;
	s->cols.cols = s->layout.cols + first;
	s->cols.ncols = s->layout.ncols - first;
	s->leaves = calloc(s->cols.ncols + 1, sizeof(*s->leaves));
	s->slot_size = sizeof(uint64_t) + (s->layout.size + 7) / 8 * 8;
	s->stage = malloc(STAGE_RECORDS * s->slot_size);
	if (!s->leaves || !s->stage)
		return kstats_fail(err, errlen, ENOMEM, "out of memory");
	s->leaves_flat = true;
	for (c = s->cols.cols, i = 0; i < s->cols.ncols; c++, i++) {
		unsigned int bits = 8 * c->size;

		if (c->offset + c->size < 8)
			return kstats_fail(err, errlen, EINVAL, "struct %s: %s overlaps the header",
					   record, c->name);
		s->leaves[i] = (struct leaf){ .end8 = c->offset + c->size - 8, .shift = 64 - bits,
					      .mask = c->is_signed || bits == 64 ? UINT64_MAX :
						      (UINT64_C(1) << bits) - 1 };
		s->leaves_flat &= c->size == 8 && c->offset == c[-i].offset + 8 * i;
	}
	return 0;
}

/* cols borrows the drop counter's types (the object's BTF). */
static int open_columns(struct kstats_stream *s, const struct kstats_stream_opts *o,
			const struct kstats_stream_meta *sm, const char *pin,
			char *err, size_t errlen)
{
	/* pin_once: the drops of the ring held, whatever the pin names later. */
	struct kstats_map_opts mo = { .obj_path = o->obj_path, .map_name = sm->drops,
				      .pin_path = pin, .pin_once = true };
	struct kstats_stream_stats st;
	int id, ret;

	ret = kstats_map_open(&mo, &s->drops, err, errlen);
	if (ret)
		return ret;
	if (kstats_map_ncols(s->drops) != 2 || kstats_map_max_rows(s->drops) != 1)
		return kstats_fail(err, errlen, EINVAL,
				   "%s: a drops map is one __u32 -> __u64", pin);
	ret = kstats_stream_get_stats(s, &st, err, errlen);
	if (ret)
		return ret;
	s->drops_at_open = st.kernel_drops;
	s->cols.types = s->drops->types;
	id = btf__find_by_name_kind(kstats_map_btf(&s->cols), sm->record, BTF_KIND_STRUCT);
	if (id < 0)
		return kstats_fail(err, errlen, ENOENT,
				   "stream %s: no struct %s in the object's BTF",
				   sm->name, sm->record);
	ret = kstats_layout_build(kstats_map_btf(&s->cols), id, sm->record, false, &s->layout,
				  err, errlen);
	return ret ? ret : kstats_stream_plan(s, sm->record, err, errlen);
}

static int open_ring(struct kstats_stream *s, const char *pin, char *err, size_t errlen)
{
	int ret;

	s->ring_fd = kstats_pin_get(pin, 0, &s->ring_st);
	if (s->ring_fd < 0) {
		ret = -s->ring_fd;
		if (ret == ENOENT)
			return kstats_fail(err, errlen, ret,
					   "%s is not pinned; " KSTATS_FIX_LOAD, pin);
		return kstats_fail(err, errlen, ret, "%s: %s%s", pin, strerror(ret),
				   ret == EACCES ? " (stream rings are root-only: run kstats "
				   "watch as root)" : "");
	}
	ret = claim_ring(s, pin, err, errlen);
	if (ret)
		return ret;
	s->rb = ring_buffer__new(s->ring_fd, kstats_stream_on_record, s, NULL);
	if (!s->rb && errno == EPERM)
		return kstats_fail(err, errlen, errno, "%s: the ring was frozen "
				   "(BPF_MAP_FREEZE) and can no longer be read; "
				   KSTATS_FIX_LOAD " to recreate it", pin);
	if (!s->rb)
		return kstats_fail(err, errlen, errno, "%s: cannot map the ring: %s", pin,
				   strerror(errno));
	s->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->stop_fd < 0)
		return kstats_fail(err, errlen, errno, "eventfd: %s", strerror(errno));
	return 0;
}

int kstats_stream_open(const struct kstats_stream_opts *o, struct kstats_stream **out,
		       char *err, size_t errlen)
{
	const struct kstats_stream_meta *sm;
	struct kstats_objmeta meta;
	struct kstats_stream *s;
	char obj[KSTATS_NAME_LEN], pin[PATH_MAX], drops_pin[PATH_MAX];
	int ret;

	ret = kstats_objmeta_read(o->obj_path, &meta, err, errlen);
	if (ret)
		return ret;
	s = calloc(1, sizeof(*s));
	if (!s) {
		kstats_objmeta_free(&meta);
		return kstats_fail(err, errlen, ENOMEM, "out of memory");
	}
	s->ring_fd = s->lock_fd = s->lock_dir_fd = s->stop_fd = s->sig_fd = -1;
	ret = -ENOENT;
	sm = pick_stream(&meta, o, err, errlen);
	if (sm) {
		snprintf(s->name, sizeof(s->name), "%s", sm->name);
		ret = kstats_obj_name(o->obj_path, obj, sizeof(obj)) ?:
		      kstats_pin_path(pin, sizeof(pin), o->pin_dir, "map", obj, sm->ringbuf) ?:
		      kstats_pin_path(drops_pin, sizeof(drops_pin), o->pin_dir, "map", obj,
				      sm->drops);
		if (ret)
			kstats_fail(err, errlen, -ret, "%s: bad object or pin name", o->obj_path);
		else
			ret = open_ring(s, pin, err, errlen) ?:
			      open_columns(s, o, sm, drops_pin, err, errlen);
	}
	kstats_objmeta_free(&meta);
	if (ret) {
		kstats_stream_close(s);
		return ret;
	}
	*out = s;
	return 0;
}

static void consumer_free(struct consumer *c)
{
	if (c->slots)
		munmap(c->slots, c->slots_len);
	free(c->vals);
	free(c);
}

void kstats_stream_close(struct kstats_stream *s)
{
	size_t i;

	if (!s)
		return;
	kstats_stream_stop(s, NULL, 0);
	for (i = 0; i < s->nconsumers; i++)
		consumer_free(s->consumers[i]);
	free(s->consumers);
	ring_buffer__free(s->rb);
	kstats_map_close(s->drops);
	kstats_layout_free(&s->layout);
	free(s->leaves);
	free(s->stage);
	if (s->lock_fd >= 0)	/* while still holding it: see claim_ring */
		unlinkat(s->lock_dir_fd, s->lock_name, 0);
	/* Those never opened are -1: close fails with EBADF, harmlessly. */
	close(s->ring_fd);
	close(s->lock_fd);
	close(s->lock_dir_fd);
	close(s->stop_fd);
	close(s->sig_fd);
	free(s);
}

const char *kstats_stream_name(const struct kstats_stream *s) { return s->name; }
uint32_t kstats_stream_record_size(const struct kstats_stream *s) { return s->layout.size; }
const struct kstats_map *kstats_stream_columns(const struct kstats_stream *s) { return &s->cols; }

int kstats_stream_check_pin(struct kstats_stream *s, char *err, size_t errlen)
{
	struct stat st;
	int ret = kstats_pin_changed(s->ring_pin, &s->ring_st);

	if (ret == -ENOENT)
		return kstats_fail(err, errlen, ENOENT, "stream %s: its ring is no longer "
				   "pinned (unloaded); run kstats watch again once it is loaded",
				   s->name);
	if (ret <= 0)
		return ret < 0 ? kstats_fail(err, errlen, -ret, "%s: %s", s->ring_pin,
					     strerror(-ret)) : 0;
	/* Pinned anew: the same ring again, or a reload's new one. */
	if (!stat(s->ring_pin, &st) && kstats_pin_id(s->ring_pin) == s->ring_id) {
		s->ring_st = st;
		return 0;
	}
	return kstats_fail(err, errlen, ESTALE, "stream %s was reloaded: %s is another "
			   "ring now; run kstats watch again to read it", s->name, s->ring_pin);
}

int kstats_stream_get_stats(struct kstats_stream *s, struct kstats_stream_stats *st,
			    char *err, size_t errlen)
{
	int64_t row[2];
	size_t nrows;
	int ret = kstats_map_read(s->drops, row, 1, &nrows, err, errlen);

	st->delivered = atomic_load_explicit(&s->delivered, memory_order_relaxed);
	st->malformed = atomic_load_explicit(&s->malformed, memory_order_relaxed);
	st->kernel_drops = !ret && nrows ? (uint64_t)row[1] : 0;
	st->kernel_drops_at_open = s->drops_at_open;
	return ret;
}

int kstats_stream_consumer_stats(const struct kstats_stream *s, int id,
				 struct kstats_consumer_stats *st)
{
	const struct consumer *c;

	if (id < 0 || (size_t)id >= s->nconsumers)
		return -ENOENT;
	c = s->consumers[id];
	st->handled = atomic_load_explicit(&c->handled, memory_order_relaxed);
	st->dropped = atomic_load_explicit(&c->dropped, memory_order_relaxed);
	return 0;
}

static uint32_t deliver_run(struct consumer *c, uint32_t tail, uint32_t head)
{
	const struct kstats_stream *s = c->s;
	/* Locals: the callback could write anything as far as the compiler knows. */
	const struct leaf *leaves = s->leaves, *leaves_end = leaves + s->cols.ncols;
	struct kstats_stream_record rec = { .vals = c->vals };
	size_t slot_size = s->slot_size;
	const unsigned char *slot, *end;
	kstats_consumer_fn fn = c->fn;
	bool flat = s->leaves_flat;
	int64_t *vals = c->vals;
	void *ctx = c->ctx;
	uint32_t n, at;

	while (tail != head) {
		at = tail & c->mask;
		n = head - tail < TAIL_EVERY ? head - tail : TAIL_EVERY;
		n = n < c->mask + 1 - at ? n : c->mask + 1 - at;
		slot = c->slots + (size_t)at * slot_size;
		for (end = slot + n * slot_size; slot != end; slot += slot_size) {
			rec.data = slot + sizeof(rec.seq);
			memcpy(&rec.seq, slot, sizeof(rec.seq));
			/* hdr.ts_ns, checked at open */
			memcpy(&rec.ts_ns, rec.data, sizeof(rec.ts_ns));
			kstats_stream_decode(leaves, leaves_end, flat, rec.data, vals);
			fn(ctx, &rec);
		}
		tail += n;
		atomic_store_explicit(&c->tail, tail, memory_order_release);
		add(&c->handled, n);
	}
	return tail;
}

static void *consumer_main(void *arg)
{
	struct consumer *c = arg;
	uint32_t tail = 0, seen;
	bool closed;

	for (;;) {
		tail = deliver_run(c, tail, atomic_load_explicit(&c->head, memory_order_acquire));
		seen = atomic_load(&c->wake_seq);
		atomic_store(&c->sleeping, 1);
		/* Closed after the reader was joined: the head read next is final. */
		closed = atomic_load(&c->closed);
		if (atomic_load(&c->head) == tail) {
			if (closed)
				break;
			syscall(SYS_futex, (uint32_t *)&c->wake_seq, FUTEX_WAIT_PRIVATE, seen,
				NULL, NULL, 0);
		}
		atomic_store(&c->sleeping, 0);
	}
	return NULL;
}

/* The reader never blocks on a consumer: a full queue loses that one's copy. */
static void *reader_main(void *arg)
{
	struct kstats_stream *s = arg;
	struct pollfd pfd[2] = { { .fd = ring_buffer__epoll_fd(s->rb), .events = POLLIN },
				 { .fd = s->stop_fd, .events = POLLIN } };
	int ret;

	do {
		if (poll(pfd, 2, -1) < 0 && errno != EINTR) {
			ret = -errno;
			break;
		}
		/* After the stop too: drains the ring. */
		ret = ring_buffer__consume(s->rb);
		flush(s, true);
	} while (ret >= 0 && !(pfd[1].revents & POLLIN));
	s->reader_err = ret < 0 ? ret : 0;
	if (s->reader_err)
		kstats_stream_request_stop(s);
	return NULL;
}

int kstats_stream_add_consumer(struct kstats_stream *s, uint32_t queue_len,
			       kstats_consumer_fn fn, void *ctx, char *err, size_t errlen)
{
	size_t size = (sizeof(struct consumer) + CACHELINE - 1) / CACHELINE * CACHELINE, off;
	struct consumer *c, **all;

	if (s->started)
		return kstats_fail(err, errlen, EBUSY,
				   "stream %s: add consumers before starting it", s->name);
	if (!queue_len || queue_len > MAX_QUEUE_LEN)
		return kstats_fail(err, errlen, EINVAL, "queue of %u records: use 1..%u",
				   queue_len, MAX_QUEUE_LEN);
	all = realloc(s->consumers, (s->nconsumers + 1) * sizeof(*all));
	if (all)
		s->consumers = all;
	c = all ? aligned_alloc(CACHELINE, size) : NULL;
	if (!c)
		return kstats_fail(err, errlen, ENOMEM, "out of memory");
	memset(c, 0, size);
	c->s = s;
	c->fn = fn;
	c->ctx = ctx;
	/* The next power of two, at least 2, less one. */
	c->mask = queue_len < 2 ? 1 : UINT32_MAX >> __builtin_clz(queue_len - 1);
	c->wake_backlog = c->mask < WAKE_BACKLOG * 4 ? (c->mask + 1) / 4 : WAKE_BACKLOG;
	c->slots_len = ((size_t)c->mask + 1) * s->slot_size;
	/* Faulted in now, not on the reader's first lap; the writes too: under a shadow-paging
	 * hypervisor each page's first user write still traps to the host. */
	c->slots = mmap(NULL, c->slots_len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (c->slots == MAP_FAILED)
		c->slots = NULL;
	for (off = 0; c->slots && off < c->slots_len; off += 4096)
		((volatile unsigned char *)c->slots)[off] = 0;
	c->vals = calloc(s->cols.ncols + 1, sizeof(*c->vals));
	if (!c->slots || !c->vals) {
		consumer_free(c);
		return kstats_fail(err, errlen, ENOMEM, "queue of %u records: out of memory",
				   queue_len);
	}
	s->consumers[s->nconsumers] = c;
	return (int)s->nconsumers++;
}

static void join_consumers(struct kstats_stream *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		atomic_store(&s->consumers[i]->closed, true);
		wake_consumer(s->consumers[i]);
		pthread_join(s->consumers[i]->thread, NULL);
	}
	s->running = false;
}

int kstats_stream_start(struct kstats_stream *s, char *err, size_t errlen)
{
	sigset_t all, old;
	size_t i;
	int ret = 0;

	if (s->started)
		return kstats_fail(err, errlen, EINVAL, "stream %s was started before; "
				   "a stream starts once: open it again", s->name);
	s->started = true;
	/* Threads inherit the mask: signals go to the caller's thread only. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	s->running = true;
	for (i = 0; i < s->nconsumers && !ret; i++)
		ret = -pthread_create(&s->consumers[i]->thread, NULL, consumer_main,
				      s->consumers[i]);
	if (ret)
		i--;
	else
		ret = -pthread_create(&s->reader, NULL, reader_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		s->reader_err = ret;
		join_consumers(s, i);
		return kstats_fail(err, errlen, -ret, "cannot start threads: %s", strerror(-ret));
	}
	return 0;
}

int kstats_stream_stop(struct kstats_stream *s, char *err, size_t errlen)
{
	if (s->running) {
		kstats_stream_request_stop(s);
		pthread_join(s->reader, NULL);
		join_consumers(s, s->nconsumers);
	}
	if (s->reader_err && err)
		return kstats_fail(err, errlen, -s->reader_err, "stream %s: reading the ring: %s",
				   s->name, strerror(-s->reader_err));
	return s->reader_err;
}

/* Never read: stop_fd stays readable, so every later wait returns 0 too. */
void kstats_stream_request_stop(struct kstats_stream *s)
{
	eventfd_write(s->stop_fd, 1);
}

int kstats_stream_wait(struct kstats_stream *s, const sigset_t *sigs, int timeout_ms)
{
	struct pollfd pfd[2] = { { .fd = s->stop_fd, .events = POLLIN },
				 { .fd = -1, .events = POLLIN } };
	struct signalfd_siginfo si;
	int n;

	if (sigs) {
		pthread_sigmask(SIG_BLOCK, sigs, NULL);
		n = signalfd(s->sig_fd, sigs, SFD_CLOEXEC | SFD_NONBLOCK);
		if (n < 0)
			return -errno;
		s->sig_fd = pfd[1].fd = n;
	}
	do
		n = poll(pfd, 2, timeout_ms);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (!n)
		return -ETIME;
	if (pfd[0].revents & POLLIN)
		return 0;
	if (read(pfd[1].fd, &si, sizeof(si)) != sizeof(si))
		return -errno;
	return (int)si.ssi_signo;
}
