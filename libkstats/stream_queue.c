// SPDX-License-Identifier: GPL-2.0
/*
 * One reader thread per ring buffer, N consumer threads, one bounded
 * single-producer/single-consumer queue per consumer.  The reader never
 * blocks on a consumer: a full queue drops (and counts) that consumer's
 * copy only.  A consumer with nothing to do sleeps on a futex, and the
 * reader wakes it only when it said it was going to sleep.
 */
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
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
#include <sys/syscall.h>
#include <bpf/libbpf.h>

#include "kstats_reader.h"
#include "stream_internal.h"

static void add(_Atomic uint64_t *counter, uint64_t n)
{
	/* Single writer: no locked add needed, readers see whole values. */
	atomic_store_explicit(counter, atomic_load_explicit(counter, memory_order_relaxed) + n,
			      memory_order_relaxed);
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

/*
 * Reader thread: copies the staged run into c's queue, as much of it as
 * fits; the rest is c's loss.  One look at tail per run, not per record.
 */
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

/* Reader thread: the staged records to every queue, then published. */
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

int kstats_stream_on_record(void *ctx, void *data, size_t size)
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

/* Consumer thread: the records of slots tail..head, tail published as it goes. */
static uint32_t deliver_run(struct consumer *c, uint32_t tail, uint32_t head)
{
	const struct kstats_stream *s = c->s;
	/* Locals: the callback could write anything as far as the compiler knows. */
	const struct leaf *leaves = s->leaves, *leaves_end = leaves + s->nleaves;
	struct kstats_stream_record rec = { .vals = c->vals };
	size_t slot_size = s->slot_size;
	const unsigned char *slot, *end;
	kstats_consumer_fn fn = c->fn;
	bool flat = s->leaves_flat;
	int64_t *vals = c->vals;
	void *ctx = c->ctx;
	uint32_t n, at;

	while (tail != head) {
		/* Up to TAIL_EVERY slots, not past the queue's end. */
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

	for (;;) {
		tail = deliver_run(c, tail, atomic_load_explicit(&c->head, memory_order_acquire));
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
		flush(s, true);
		if (ret < 0)
			break;
		ret = 0;
	}
	s->reader_err = ret;
	if (ret)
		kstats_stream_request_stop(s);
	return NULL;
}

void kstats_consumer_free(struct consumer *c)
{
	if (c->slots)
		munmap(c->slots, c->slots_len);
	free(c->vals);
	free(c);
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
	c->wake_backlog = c->mask < WAKE_BACKLOG * 4 ? (c->mask + 1) / 4 : WAKE_BACKLOG;
	c->slots_len = ((size_t)c->mask + 1) * s->slot_size;
	/* Faulted in now: one page fault per 4 KiB on the reader's first lap costs more than the copies. */
	c->slots = mmap(NULL, c->slots_len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (c->slots == MAP_FAILED)
		c->slots = NULL;
	else
		touch_pages(c->slots, c->slots_len);
	c->vals = calloc(kstats_stream_ncols(s) + 1, sizeof(*c->vals));
	if (!c->slots || !c->vals) {
		kstats_consumer_free(c);
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
