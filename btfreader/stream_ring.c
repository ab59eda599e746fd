// SPDX-License-Identifier: GPL-2.0
/* Event streams read in place: every consumer thread walks the mapped ring itself and
 * publishes how far it got; the kernel's consumer_pos follows the slowest (streams.md). */
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>

#include "stream_int.h"

#define MAX_QUEUE_LEN (1u << 24)
#define BATCH 128		/* records per publish */
#define WAKE_BACKLOG 4096	/* records that wake a sleeping consumer mid-walk */
#define TICK_MS 10		/* a caught-up consumer's look while another holds the ring */
#define GONE UINT64_MAX		/* the pos of a consumer that stopped: it holds nothing */

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "struct leaf's loads are little-endian");

static inline int64_t leaf_value(const unsigned char *rec, const struct leaf *l)
{
	uint64_t w;

	memcpy(&w, rec + l->end8, sizeof(w));
	return ((int64_t)w >> l->shift) & (int64_t)l->mask;
}

/* Two at a time: the loop's own instructions cost as much as a column's. */
static inline void kstats_stream_decode(const struct leaf *l, const struct leaf *end,
					const unsigned char *rec, int64_t *vals)
{
	for (; end - l >= 2; l += 2, vals += 2) {
		vals[0] = leaf_value(rec, &l[0]);
		vals[1] = leaf_value(rec, &l[1]);
	}
	if (l != end)
		*vals = leaf_value(rec, l);
}

static uint64_t produced(const struct kstats_stream *s)
{
	return __atomic_load_n(s->prod_pos, __ATOMIC_ACQUIRE);
}

static void futex_wake_all(_Atomic uint32_t *word)
{
	atomic_fetch_add(word, 1);
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

enum { AWAKE, FUTEX_WAITING, POLLING };

/* Consumers waiting on another one: mid-walk those whose backlog is worth a futex call and
 * two context switches (or a quarter of what they may trail), all once caught up. */
static void wake_sleepers(struct kstats_stream *s, uint64_t upto, bool mid_walk)
{
	uint64_t pos, least;
	size_t i;

	for (i = 0; i < s->nconsumers; i++) {
		pos = atomic_load_explicit(&s->consumers[i]->pos, memory_order_relaxed);
		least = mid_walk ? MIN(s->consumers[i]->lag_max / 4, WAKE_BACKLOG * s->stride) : 0;
		if (atomic_load(&s->consumers[i]->sleeping) == FUTEX_WAITING &&
		    pos <= upto && upto - pos >= least)
			break;
	}
	if (i < s->nconsumers)
		futex_wake_all(&s->wake_seq);
}

/* The kernel's consumer_pos up to the slowest consumer: it only ever grows. */
static void release(struct kstats_stream *s)
{
	uint64_t low = GONE, cur;
	size_t i;

	for (i = 0; i < s->nconsumers; i++)
		low = MIN(low, atomic_load(&s->consumers[i]->pos));
	cur = __atomic_load_n(s->cons_pos, __ATOMIC_RELAXED);
	while (low != GONE && cur < low &&
	       !__atomic_compare_exchange_n(s->cons_pos, &cur, low, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_RELAXED))
		;
}

/* A consumer's place, on its own thread: every seq before seq was handled or dropped. */
struct cursor {
	uint64_t pos, seq, dropped, malformed;
};

/* c was overrun when its pos is not what it published: true if it must jump ahead. */
static bool take_overrun(struct consumer *c, struct cursor *at)
{
	uint64_t pos, seq;
	uint32_t gen;

	for (;;) {
		gen = atomic_load(&c->overrun_gen);
		pos = atomic_load(&c->pos);
		seq = atomic_load(&c->resume_seq);
		if (!(gen & 1) && atomic_load(&c->overrun_gen) == gen)
			break;
		sched_yield();
	}
	c->published = pos;
	/* Resumed behind where it reads: it holds more than it needs, nothing was lost. */
	if (pos <= at->pos)
		return false;
	*at = (struct cursor){ pos, seq, at->dropped + seq - at->seq, at->malformed };
	return true;
}

/* d trails by more than it may: it resumes at (pos, seq), the overrunner's own place. */
static void overrun(struct consumer *d, uint64_t held, uint64_t pos, uint64_t seq)
{
	uint32_t gen = atomic_load(&d->overrun_gen);

	if ((gen & 1) || !atomic_compare_exchange_strong(&d->overrun_gen, &gen, gen + 1))
		return;		/* another consumer is at it */
	atomic_store(&d->resume_seq, seq);
	/* Fails when d published meanwhile: then it is not behind any more. */
	atomic_compare_exchange_strong(&d->pos, &held, pos);
	atomic_store(&d->overrun_gen, gen + 2);
}

static void publish(struct consumer *c, struct cursor *at, bool caught_up)
{
	struct kstats_stream *s = c->s;
	uint64_t expect, pos;
	size_t i;

	for (;;) {
		expect = c->published;
		if (atomic_compare_exchange_strong(&c->pos, &expect, at->pos))
			break;
		take_overrun(c, at);
	}
	c->published = at->pos;
	atomic_store_explicit(&c->dropped, at->dropped, memory_order_relaxed);
	atomic_store_explicit(&c->next_seq, at->seq, memory_order_release);
	atomic_store_explicit(&c->malformed, at->malformed, memory_order_relaxed);
	for (i = 0; i < s->nconsumers; i++) {
		pos = atomic_load(&s->consumers[i]->pos);
		if (pos < at->pos && at->pos - pos > s->consumers[i]->lag_max)
			overrun(s->consumers[i], pos, at->pos, at->seq);
	}
	release(s);
	wake_sleepers(s, at->pos, !caught_up);
}

/* The committed records from at->pos up to end, read in place, publishing every BATCH. */
static void walk(struct consumer *c, struct cursor *at, uint64_t end)
{
	const struct kstats_stream *s = c->s;
	const struct leaf *leaves = s->leaves, *leaves_end = leaves + s->cols.ncols;
	struct kstats_stream_record rec = { .vals = c->vals };
	const unsigned char *hdr;
	uint64_t pos = at->pos, seq = at->seq, step = s->stride, stop;
	uint32_t len;

	/* A jump past end (overrun by a consumer that saw more) ends the walk there. */
	while (pos < end) {
		stop = pos + MIN(end - pos, BATCH * step);
		while (pos < stop) {
			hdr = s->data + (pos & s->ring_mask);
			len = __atomic_load_n((const uint32_t *)hdr, __ATOMIC_ACQUIRE);
			if (len == s->layout.size) {
				/* hdr.ts_ns, checked at open */
				memcpy(&rec.ts_ns, hdr + BPF_RINGBUF_HDR_SZ, sizeof(rec.ts_ns));
				kstats_stream_decode(leaves, leaves_end, hdr + BPF_RINGBUF_HDR_SZ,
						     c->vals);
			}
			/* Read, then check nobody let the kernel reuse it meanwhile. */
			atomic_thread_fence(memory_order_acquire);
			if (atomic_load_explicit(&c->pos, memory_order_relaxed) != c->published) {
				*at = (struct cursor){ pos, seq, at->dropped, at->malformed };
				if (take_overrun(c, at)) {
					pos = at->pos;
					seq = at->seq;
					continue;
				}
			}
			if (len == s->layout.size) {
				rec.seq = seq++;
				c->fn(c->ctx, &rec);
				pos += step;
				continue;
			}
			if (len & BPF_RINGBUF_BUSY_BIT)
				goto out;
			at->malformed += !(len & BPF_RINGBUF_DISCARD_BIT);
			pos += ((len & ~BPF_RINGBUF_DISCARD_BIT) + BPF_RINGBUF_HDR_SZ + 7) & ~7u;
		}
		if (pos >= end)
			break;
		*at = (struct cursor){ pos, seq, at->dropped, at->malformed };
		publish(c, at, false);
		pos = at->pos;
		seq = at->seq;
	}
out:
	*at = (struct cursor){ pos, seq, at->dropped, at->malformed };
}

/* When every consumer is here, the kernel wakes the ring's pollers at the next commit;
 * else the one holding the ring back wakes this one, or it looks again every TICK_MS. */
static void sleep_until_ready(struct consumer *c, uint64_t pos)
{
	struct kstats_stream *s = c->s;
	struct pollfd pfd[2] = { { .fd = s->ring_fd, .events = POLLIN },
				 { .fd = s->wake_fd, .events = POLLIN } };
	struct timespec tick = { .tv_nsec = TICK_MS * 1000000L };
	uint32_t seen = atomic_load(&s->wake_seq);

	/* Stored before the look at consumer_pos: a consumer catching up sees one or wakes. */
	atomic_store(&c->sleeping, FUTEX_WAITING);
	if (__atomic_load_n(s->cons_pos, __ATOMIC_SEQ_CST) == pos)
		atomic_store(&c->sleeping, POLLING);
	/* A record at pos, committed (not BUSY), or the stop: no sleep. */
	if ((pos < produced(s) && !(__atomic_load_n((const uint32_t *)(s->data +
	     (pos & s->ring_mask)), __ATOMIC_ACQUIRE) & BPF_RINGBUF_BUSY_BIT)) ||
	    atomic_load(&s->stopping))
		;
	else if (atomic_load(&c->sleeping) == FUTEX_WAITING)
		syscall(SYS_futex, (uint32_t *)&s->wake_seq, FUTEX_WAIT_PRIVATE, seen, &tick,
			NULL, 0);
	else if (poll(pfd, 2, -1) < 0 && errno != EINTR && !s->reader_err) {
		s->reader_err = -errno;
		kstats_stream_request_stop(s);
	}
	atomic_store(&c->sleeping, AWAKE);
}

static void *consumer_main(void *arg)
{
	struct consumer *c = arg;
	struct kstats_stream *s = c->s;
	struct cursor at = { .pos = c->published };
	uint64_t end = GONE;

	for (;;) {
		/* Once stopping: what was in the ring then, and no more. */
		if (end == GONE && atomic_load(&s->stopping))
			end = produced(s);
		walk(c, &at, end == GONE ? produced(s) : end);
		publish(c, &at, true);
		if (at.pos >= end)
			break;
		if (end != GONE)
			sched_yield();	/* a record still being written: committed soon */
		else
			sleep_until_ready(c, at.pos);
	}
	atomic_store(&c->pos, GONE);	/* it holds the ring back no more */
	release(s);
	return NULL;
}

int kstats_stream_add_consumer(struct kstats_stream *s, uint32_t queue_len,
			       kstats_consumer_fn fn, void *ctx, char *err, size_t errlen)
{
	size_t size = (sizeof(struct consumer) + s->cols.ncols * sizeof(int64_t) +
		       CACHELINE - 1) / CACHELINE * CACHELINE;
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
	/* lag_max: the next power of two of records, at least 2. */
	*c = (struct consumer){ .s = s, .fn = fn, .ctx = ctx, .lag_max = s->stride *
		((queue_len < 2 ? 1 : UINT32_MAX >> __builtin_clz(queue_len - 1)) + 1ull) };
	s->consumers[s->nconsumers] = c;
	return (int)s->nconsumers++;
}

/* Each stops where the ring ended when it saw the stop: what others read later is its
 * loss, at the end of its seqs, so that handled + dropped == delivered for all. */
static void join_consumers(struct kstats_stream *s, size_t n)
{
	uint64_t delivered = 0;
	size_t i;

	atomic_store(&s->stopping, true);
	eventfd_write(s->wake_fd, 1);
	futex_wake_all(&s->wake_seq);
	for (i = 0; i < n; i++) {
		pthread_join(s->consumers[i]->thread, NULL);
		delivered = MAX(delivered, s->consumers[i]->next_seq);
	}
	for (i = 0; i < n; i++) {
		s->consumers[i]->dropped += delivered - s->consumers[i]->next_seq;
		s->consumers[i]->next_seq = delivered;
	}
}

int kstats_stream_start(struct kstats_stream *s, char *err, size_t errlen)
{
	uint64_t start = __atomic_load_n(s->cons_pos, __ATOMIC_ACQUIRE);
	sigset_t all, old;
	size_t i;
	int ret = 0;

	if (s->started)
		return kstats_fail(err, errlen, EINVAL, "stream %s was started before; "
				   "a stream starts once: open it again", s->name);
	s->started = true;
	for (i = 0; i < s->nconsumers; i++)
		s->consumers[i]->pos = s->consumers[i]->published = start;
	/* Threads inherit the mask: signals go to the caller's thread only. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (i = 0; i < s->nconsumers && !ret; i++)
		ret = -pthread_create(&s->consumers[i]->thread, NULL, consumer_main,
				      s->consumers[i]);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		s->reader_err = ret;
		join_consumers(s, i - 1);
		return kstats_fail(err, errlen, -ret, "cannot start threads: %s", strerror(-ret));
	}
	return 0;
}

int kstats_stream_stop(struct kstats_stream *s, char *err, size_t errlen)
{
	if (s->started && !atomic_load(&s->stopping)) {
		kstats_stream_request_stop(s);
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
