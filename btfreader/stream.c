// SPDX-License-Identifier: GPL-2.0
/*
 * One reader thread per ring buffer, N consumer threads, one bounded
 * single-producer/single-consumer queue per consumer.  The reader never
 * blocks on a consumer: a full queue drops (and counts) that consumer's
 * copy only.  A consumer with nothing to do sleeps on a futex, and the
 * reader wakes it only when it said it was going to sleep.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "kstats_objmeta.h"
#include "map_types.h"
#include "kstats_pins.h"
#include "kstats_stream.h"

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
	int ring_fd, lock_fd, epoll_fd, stop_fd, wake_fd, sig_fd;
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

static void bump(_Atomic uint64_t *counter)
{
	/* Single writer: no locked add needed, readers see whole values. */
	atomic_store_explicit(counter, atomic_load_explicit(counter, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* Fixed-size loads: a variable-length memcpy costs more than the rest. */
static int64_t leaf_value(const unsigned char *rec, const struct leaf *c)
{
	const unsigned char *p = rec + c->offset;
	unsigned int shift = 64 - 8 * c->size;
	uint16_t v16;
	uint32_t v32;
	uint64_t v;

	switch (c->size) {
	case 1: v = *p; break;
	case 2: memcpy(&v16, p, 2); v = v16; break;
	case 4: memcpy(&v32, p, 4); v = v32; break;
	default: memcpy(&v, p, 8); break;
	}
	return c->is_signed ? (int64_t)(v << shift) >> shift : (int64_t)v;
}

static void futex_wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void futex_wait(_Atomic uint32_t *word, uint32_t seen)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
}

static void wake_consumer(struct consumer *c)
{
	atomic_fetch_add(&c->wake_seq, 1);
	futex_wake(&c->wake_seq);
}

/*
 * Reader thread: hands the filled slots to the consumer.  A sleeping one is
 * woken at the end of a pass, or mid-pass once its backlog is worth a
 * futex call and two context switches: waking it for every few records
 * costs more than the records.
 */
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

/* Reader thread: copies one record into c's queue, or counts it lost. */
static void enqueue(struct consumer *c, uint64_t seq, const void *data, uint32_t size)
{
	unsigned char *slot;

	if (c->next - c->tail_seen > c->mask) {
		c->tail_seen = atomic_load_explicit(&c->tail, memory_order_acquire);
		if (c->next - c->tail_seen > c->mask) {
			bump(&c->dropped);
			return;
		}
	}
	slot = c->slots + (size_t)(c->next & c->mask) * c->slot_size;
	memcpy(slot, &seq, sizeof(seq));
	memcpy(slot + sizeof(seq), data, size);
	if (++c->next - atomic_load_explicit(&c->head, memory_order_relaxed) >= PUBLISH_EVERY)
		publish(c, false);
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct kstats_stream *s = ctx;
	size_t i;

	if (size != s->layout.size) {
		bump(&s->malformed);
		return 0;
	}
	for (i = 0; i < s->nconsumers; i++)
		enqueue(s->consumers[i], s->next_seq, data, (uint32_t)size);
	s->next_seq++;
	atomic_store_explicit(&s->delivered, s->next_seq, memory_order_relaxed);
	return 0;
}

static void deliver(struct consumer *c, const unsigned char *slot)
{
	const struct kstats_layout *l = &c->s->layout;
	struct kstats_stream_record rec = { .data = slot + sizeof(rec.seq), .vals = c->vals };
	const struct leaf *leaves = c->s->leaves;
	size_t i, n = l->ncols - c->s->first_col;

	memcpy(&rec.seq, slot, sizeof(rec.seq));
	memcpy(&rec.ts_ns, rec.data, sizeof(rec.ts_ns));	/* hdr.ts_ns, checked at open */
	for (i = 0; i < n; i++)
		c->vals[i] = leaf_value(rec.data, &leaves[i]);
	c->fn(c->ctx, &rec);
	bump(&c->handled);
}

static void *consumer_main(void *arg)
{
	struct consumer *c = arg;
	uint32_t tail = 0, head, seen;

	for (;;) {
		head = atomic_load_explicit(&c->head, memory_order_acquire);
		for (; tail != head; tail++) {
			deliver(c, c->slots + (size_t)(tail & c->mask) * c->slot_size);
			atomic_store_explicit(&c->tail, tail + 1, memory_order_release);
		}
		seen = atomic_load(&c->wake_seq);
		atomic_store(&c->sleeping, 1);
		if (atomic_load(&c->head) != tail)
			goto awake;
		/* Closed after the reader was joined; head is final once reloaded. */
		if (atomic_load(&c->closed)) {
			if (atomic_load(&c->head) == tail)
				break;
			goto awake;
		}
		futex_wait(&c->wake_seq, seen);
awake:
		atomic_store(&c->sleeping, 0);
	}
	return NULL;
}

static void *reader_main(void *arg)
{
	struct kstats_stream *s = arg;
	struct epoll_event ev[2];
	bool stop = false;
	int n, i, ret = 0;

	while (!stop) {
		n = epoll_wait(s->epoll_fd, ev, 2, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			break;
		}
		for (i = 0; i < n; i++)
			stop |= ev[i].data.u32 == TAG_STOP;
		/* After the stop too: drains whatever the ring holds now. */
		ret = ring_buffer__consume(s->rb);
		for (i = 0; i < (int)s->nconsumers; i++)
			publish(s->consumers[i], true);
		if (ret < 0)
			break;
		ret = 0;
	}
	s->reader_err = ret;
	if (ret)
		kstats_stream_request_stop(s);
	return NULL;
}

/*
 * Reads are destructive, so a second reader would steal records: claims
 * the ring with an abstract socket named by its map id, which the kernel
 * releases when the process dies.
 */
static int claim_ring(struct kstats_stream *s, const char *pin, char *err, size_t errlen)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int n;

	if (bpf_obj_get_info_by_fd(s->ring_fd, &info, &len))
		return kstats_fail(err, errlen, errno, "%s: %s", pin, strerror(errno));
	if (info.type != BPF_MAP_TYPE_RINGBUF)
		return kstats_fail(err, errlen, EINVAL, "%s: not a ring buffer but %s", pin,
				   libbpf_bpf_map_type_str(info.type));
	n = snprintf(addr.sun_path + 1, sizeof(addr.sun_path) - 1,
		     "kernelstats-stream-%u", info.id);
	s->lock_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s->lock_fd < 0)
		return kstats_fail(err, errlen, errno, "socket: %s", strerror(errno));
	if (bind(s->lock_fd, (struct sockaddr *)&addr,
		 offsetof(struct sockaddr_un, sun_path) + 1 + n)) {
		if (errno == EADDRINUSE)
			return kstats_fail(err, errlen, EBUSY,
					   "stream %s already has a reader (one per ring buffer: "
					   "reads are destructive); stop the other kstats watch",
					   s->name);
		return kstats_fail(err, errlen, errno, "bind: %s", strerror(errno));
	}
	return 0;
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

static int read_drops(struct kstats_stream *s, uint64_t *drops, char *err, size_t errlen)
{
	int64_t row[2];
	size_t nrows;
	int ret = kstats_map_read(s->drops, row, 1, &nrows, err, errlen);

	if (!ret)
		*drops = nrows ? (uint64_t)row[1] : 0;
	return ret;
}

static int open_drops(struct kstats_stream *s, const struct kstats_stream_opts *o,
		      const char *obj, const struct kstats_stream_meta *sm,
		      char *err, size_t errlen)
{
	char pin[PATH_MAX];
	struct kstats_map_opts mo = { .obj_path = o->obj_path, .map_name = sm->drops,
				      .pin_path = pin };
	int ret;

	ret = kstats_pin_path(pin, sizeof(pin), o->pin_dir, "map", obj, sm->drops);
	if (ret)
		return kstats_fail(err, errlen, -ret, "%s: pin path too long", sm->drops);
	ret = kstats_map_open(&mo, &s->drops, err, errlen);
	if (ret)
		return ret;
	if (kstats_map_ncols(s->drops) != 2 || kstats_map_max_rows(s->drops) != 1)
		return kstats_fail(err, errlen, EINVAL,
				   "%s: a drops map is one __u32 -> __u64", pin);
	return read_drops(s, &s->drops_at_open, err, errlen);
}

static int build_layout(struct kstats_stream *s, const struct kstats_stream_meta *sm,
			char *err, size_t errlen)
{
	const struct btf *btf = kstats_map_btf(s->drops);
	const struct kstats_column *c;
	int id = btf__find_by_name_kind(btf, sm->record, BTF_KIND_STRUCT);
	size_t i;
	int ret;

	if (id < 0)
		return kstats_fail(err, errlen, ENOENT,
				   "stream %s: no struct %s in the object's BTF",
				   sm->name, sm->record);
	ret = kstats_layout_build(btf, id, sm->record, false, &s->layout, err, errlen);
	if (ret)
		return ret;
	c = s->layout.cols;
	if (!s->layout.ncols || strcmp(c->name, HDR_PREFIX "ts_ns") || c->offset || c->size != 8)
		return kstats_fail(err, errlen, EINVAL, "struct %s does not begin with "
				   "struct kstats_stream_hdr hdr", sm->record);
	while (s->first_col < s->layout.ncols &&
	       !strncmp(c[s->first_col].name, HDR_PREFIX, strlen(HDR_PREFIX)))
		s->first_col++;
	s->leaves = calloc(s->layout.ncols - s->first_col + 1, sizeof(*s->leaves));
	if (!s->leaves)
		return kstats_fail(err, errlen, ENOMEM, "out of memory");
	for (c += s->first_col, i = 0; c < s->layout.cols + s->layout.ncols; c++, i++)
		s->leaves[i] = (struct leaf){ c->offset, c->size, c->is_signed };
	return 0;
}

static int open_ring(struct kstats_stream *s, const char *pin, char *err, size_t errlen)
{
	struct epoll_event ring_ev = { .events = EPOLLIN, .data.u32 = TAG_RING };
	struct epoll_event stop_ev = { .events = EPOLLIN, .data.u32 = TAG_STOP };
	int ret;

	s->ring_fd = bpf_obj_get(pin);
	if (s->ring_fd < 0) {
		ret = errno;
		if (ret == ENOENT)
			return kstats_fail(err, errlen, ret,
					   "%s is not pinned; run kstats-loader", pin);
		return kstats_fail(err, errlen, ret, "%s: %s%s", pin, strerror(ret),
				   ret == EACCES ? " (a reader needs root or group kstats)" : "");
	}
	ret = claim_ring(s, pin, err, errlen);
	if (ret)
		return ret;
	s->rb = ring_buffer__new(s->ring_fd, on_record, s, NULL);
	if (!s->rb)
		return kstats_fail(err, errlen, errno, "%s: cannot map the ring: %s", pin,
				   strerror(errno));
	/* The ring's epoll set, nested in ours beside the stop eventfd. */
	s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	s->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->epoll_fd < 0 || s->stop_fd < 0 || s->wake_fd < 0 ||
	    epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(s->rb), &ring_ev) ||
	    epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, s->stop_fd, &stop_ev))
		return kstats_fail(err, errlen, errno, "epoll: %s", strerror(errno));
	return 0;
}

int kstats_stream_open(const struct kstats_stream_opts *o, struct kstats_stream **out,
		       char *err, size_t errlen)
{
	const struct kstats_stream_meta *sm;
	struct kstats_objmeta meta;
	struct kstats_stream *s;
	char obj[KSTATS_NAME_LEN], pin[PATH_MAX];
	int ret;

	ret = kstats_objmeta_read(o->obj_path, &meta, err, errlen);
	if (ret)
		return ret;
	s = calloc(1, sizeof(*s));
	if (!s) {
		kstats_objmeta_free(&meta);
		return kstats_fail(err, errlen, ENOMEM, "out of memory");
	}
	s->ring_fd = s->lock_fd = s->epoll_fd = s->stop_fd = s->wake_fd = s->sig_fd = -1;
	sm = pick_stream(&meta, o, err, errlen);
	if (!sm) {
		ret = -ENOENT;
		goto err_out;
	}
	snprintf(s->name, sizeof(s->name), "%s", sm->name);
	ret = kstats_obj_name(o->obj_path, obj, sizeof(obj));
	if (!ret)
		ret = kstats_pin_path(pin, sizeof(pin), o->pin_dir, "map", obj, sm->ringbuf);
	if (ret) {
		kstats_fail(err, errlen, -ret, "%s: bad object or pin name", o->obj_path);
		goto err_out;
	}
	ret = open_ring(s, pin, err, errlen);
	if (!ret)
		ret = open_drops(s, o, obj, sm, err, errlen);
	if (!ret)
		ret = build_layout(s, sm, err, errlen);
	if (ret)
		goto err_out;
	kstats_objmeta_free(&meta);
	*out = s;
	return 0;
err_out:
	kstats_objmeta_free(&meta);
	kstats_stream_close(s);
	return ret;
}

static void free_consumer(struct consumer *c)
{
	if (c->slots)
		munmap(c->slots, c->slots_len);
	free(c->vals);
	free(c);
}

static void close_fd(int fd)
{
	if (fd >= 0)
		close(fd);
}

void kstats_stream_close(struct kstats_stream *s)
{
	size_t i;

	if (!s)
		return;
	kstats_stream_stop(s, NULL, 0);
	for (i = 0; i < s->nconsumers; i++)
		free_consumer(s->consumers[i]);
	free(s->consumers);
	ring_buffer__free(s->rb);
	kstats_map_close(s->drops);
	kstats_layout_free(&s->layout);
	free(s->leaves);
	close_fd(s->ring_fd);
	close_fd(s->lock_fd);
	close_fd(s->epoll_fd);
	close_fd(s->stop_fd);
	close_fd(s->wake_fd);
	close_fd(s->sig_fd);
	free(s);
}

const char *kstats_stream_name(const struct kstats_stream *s) { return s->name; }
uint32_t kstats_stream_record_size(const struct kstats_stream *s) { return s->layout.size; }
const struct btf *kstats_stream_btf(const struct kstats_stream *s)
{
	return kstats_map_btf(s->drops);
}

size_t kstats_stream_ncols(const struct kstats_stream *s)
{
	return s->layout.ncols - s->first_col;
}

const struct kstats_column *kstats_stream_column(const struct kstats_stream *s, size_t i)
{
	return i < kstats_stream_ncols(s) ? &s->layout.cols[s->first_col + i] : NULL;
}

int kstats_stream_column_index(const struct kstats_stream *s, const char *name)
{
	size_t i;

	for (i = 0; i < kstats_stream_ncols(s); i++)
		if (!strcmp(kstats_stream_column(s, i)->name, name))
			return (int)i;
	return -ENOENT;
}

const char *kstats_stream_enum_name(const struct kstats_stream *s,
				    const struct kstats_column *col, int64_t v)
{
	return kstats_column_enum_name(s->drops, col, v);
}

/*
 * MAP_POPULATE fills the page tables, but under a shadow-paging hypervisor
 * the first user write to each page still traps to the host: pay it here.
 */
static void touch_pages(unsigned char *p, size_t len)
{
	size_t off;

	for (off = 0; off < len; off += 4096)
		((volatile unsigned char *)p)[off] = 0;
}

static uint32_t round_pow2(uint32_t n)
{
	uint32_t p = 2;

	while (p < n)
		p <<= 1;
	return p;
}

int kstats_stream_add_consumer(struct kstats_stream *s, uint32_t queue_len,
			       kstats_consumer_fn fn, void *ctx, char *err, size_t errlen)
{
	size_t size = (sizeof(struct consumer) + CACHELINE - 1) / CACHELINE * CACHELINE;
	struct consumer *c, **all;

	if (s->started)
		return kstats_fail(err, errlen, EBUSY,
				   "stream %s: add consumers before starting it", s->name);
	if (!queue_len || queue_len > MAX_QUEUE_LEN)
		return kstats_fail(err, errlen, EINVAL, "queue of %u records: use 1..%u",
				   queue_len, MAX_QUEUE_LEN);
	all = realloc(s->consumers, (s->nconsumers + 1) * sizeof(*all));
	if (!all)
		return kstats_fail(err, errlen, ENOMEM, "out of memory");
	s->consumers = all;
	c = aligned_alloc(CACHELINE, size);
	if (!c)
		return kstats_fail(err, errlen, ENOMEM, "out of memory");
	memset(c, 0, size);
	c->s = s;
	c->fn = fn;
	c->ctx = ctx;
	c->mask = round_pow2(queue_len) - 1;
	c->slot_size = sizeof(uint64_t) + (s->layout.size + 7) / 8 * 8;
	c->wake_backlog = c->mask < WAKE_BACKLOG * 4 ? (c->mask + 1) / 4 : WAKE_BACKLOG;
	c->slots_len = ((size_t)c->mask + 1) * c->slot_size;
	/* Faulted in now: one page fault per 4 KiB on the reader's first lap costs more than the copies. */
	c->slots = mmap(NULL, c->slots_len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (c->slots == MAP_FAILED)
		c->slots = NULL;
	else
		touch_pages(c->slots, c->slots_len);
	c->vals = calloc(kstats_stream_ncols(s) + 1, sizeof(*c->vals));
	if (!c->slots || !c->vals) {
		free_consumer(c);
		return kstats_fail(err, errlen, ENOMEM, "queue of %u records: out of memory",
				   queue_len);
	}
	s->consumers[s->nconsumers] = c;
	return (int)s->nconsumers++;
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
	for (i = 0; i < s->nconsumers && !ret; i++) {
		ret = -pthread_create(&s->consumers[i]->thread, NULL, consumer_main,
				      s->consumers[i]);
		s->consumers[i]->started = !ret;
	}
	if (!ret)
		ret = -pthread_create(&s->reader, NULL, reader_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		/* The reader did not start: joining the consumers is enough. */
		s->reader_err = ret;
		eventfd_write(s->stop_fd, 1);
		s->running = false;
		for (i = 0; i < s->nconsumers; i++) {
			atomic_store(&s->consumers[i]->closed, true);
			wake_consumer(s->consumers[i]);
			if (s->consumers[i]->started)
				pthread_join(s->consumers[i]->thread, NULL);
		}
		return kstats_fail(err, errlen, -ret, "cannot start threads: %s", strerror(-ret));
	}
	return 0;
}

int kstats_stream_stop(struct kstats_stream *s, char *err, size_t errlen)
{
	struct consumer *c;
	size_t i;

	if (s->running) {
		eventfd_write(s->stop_fd, 1);
		pthread_join(s->reader, NULL);
		for (i = 0; i < s->nconsumers; i++) {
			c = s->consumers[i];
			atomic_store(&c->closed, true);
			wake_consumer(c);
			pthread_join(c->thread, NULL);
			c->started = false;
		}
		s->running = false;
	}
	if (s->reader_err && err)
		return kstats_fail(err, errlen, -s->reader_err, "stream %s: reading the ring: %s",
				   s->name, strerror(-s->reader_err));
	return s->reader_err;
}

void kstats_stream_request_stop(struct kstats_stream *s)
{
	atomic_store(&s->stop_requested, true);
	eventfd_write(s->wake_fd, 1);
}

static int read_signal(int fd)
{
	struct signalfd_siginfo si;

	if (read(fd, &si, sizeof(si)) != sizeof(si))
		return -errno;
	return (int)si.ssi_signo;
}

int kstats_stream_wait(struct kstats_stream *s, const sigset_t *sigs, int timeout_ms)
{
	struct pollfd pfd[2] = { { .fd = s->wake_fd, .events = POLLIN },
				 { .fd = -1, .events = POLLIN } };
	eventfd_t drained;
	int n;

	if (sigs) {
		pthread_sigmask(SIG_BLOCK, sigs, NULL);
		n = signalfd(s->sig_fd, sigs, SFD_CLOEXEC | SFD_NONBLOCK);
		if (n < 0)
			return -errno;
		s->sig_fd = n;
		pfd[1].fd = n;
	}
	for (;;) {
		if (atomic_load(&s->stop_requested))
			return 0;
		n = poll(pfd, 2, timeout_ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return -ETIME;
		if (pfd[1].revents & POLLIN)
			return read_signal(pfd[1].fd);
		eventfd_read(s->wake_fd, &drained);
	}
}

int kstats_stream_get_stats(struct kstats_stream *s, struct kstats_stream_stats *st,
			    char *err, size_t errlen)
{
	st->delivered = atomic_load_explicit(&s->delivered, memory_order_relaxed);
	st->malformed = atomic_load_explicit(&s->malformed, memory_order_relaxed);
	st->kernel_drops_at_open = s->drops_at_open;
	return read_drops(s, &st->kernel_drops, err, errlen);
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
