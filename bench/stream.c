// SPDX-License-Identifier: GPL-2.0
/*
 * Records per second from one ring buffer to two consumers that each get
 * every decoded record in order, side by side in one run (interleaved
 * rounds, the cases in a new order each round, so machine noise hits all
 * alike):
 *
 *   libbpf   ring_buffer__consume, a callback that only counts: the floor
 *   ours     btfreader/stream.c: reader thread + 2 consumer threads
 *   batch    the same threads over mutex+condvar queues, one lock and one
 *            signal per batch of records per consumer (the fair baseline)
 *   record   the same, one lock and one signal per record per consumer
 *   best     the best achievable copying pipeline: a reader thread and 2
 *            consumer threads, written for this one record type (struct best_queue)
 *   bestzc   the best achievable zero-copy pipeline, the shape of ours: each
 *            consumer reads the mapped ring in place, at fixed offsets for
 *            this one record type, and publishes its position (struct zc_consumer)
 *
 * The baselines' consumers decode the same columns at the offsets the
 * stream's BTF gives, and every queue is faulted in before timing, as
 * ours is.  Steady state: each case's threads start once per round, then
 * drains repeat until ROUND_S of them is measured.  A drain fills the ring
 * with DRAIN_RECORDS records without waking anyone (untimed), then times
 * from the wakeup until both consumers have every record.  The overload
 * case runs ours while BPF_PROG_TEST_RUN produces flat out and checks every
 * loss is counted.  Prints bench/lib/bstat.h RESULT lines.
 *
 * Usage: bench/stream [ROUNDS]            (root; make bench-stream)
 *        bench/stream --profile libbpf|ours|best|bestzc
 *   one drain of that case only, for callgrind's instruction counts
 *   (bench/stream_profile.sh)
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bstat.h"
#include "kstats_pins.h"
#include "kstats_stream.h"
#include "ktest.h"
#include "stream.h"

#define DRAIN_RECORDS 400000u	/* the 16 MiB burst ring holds 524287 */
#define QUEUE_LEN (1u << 19)	/* >= DRAIN_RECORDS: a drain loses nothing */
#define ROUND_S 0.2		/* measured drain time per case per round, at least */
#define BATCH 64		/* the batch baseline's records per lock; best's per publish */
#define WAKE_BACKLOG 4096	/* best: records that wake a sleeping consumer mid-pass */
#define OVERLOAD_RUNS 2000000u
#define NR_CONSUMERS 2
#define NR_COLS 3
#define MAX_ROUNDS 64

/* A consumer's tally; it posts drained at each DRAIN_RECORDS-th record. */
struct counter {
	uint64_t n, bad_order, sum, post_at;
	sem_t *drained;
};

static struct ktest t;
static struct kstream_flood flood;
static uint32_t record_size;
static struct leaf { uint32_t off, size; } cols[NR_COLS];

static void die(const char *what, const char *why)
{
	fprintf(stderr, "bench/stream: %s: %s\n", what, why);
	exit(1);
}

/* What every consumer does with a record: check order, use the values. */
static void consume(struct counter *c, uint64_t seq, const int64_t *vals)
{
	c->bad_order += seq != c->n;
	c->sum += (uint64_t)vals[0] + (uint64_t)vals[NR_COLS - 1];
	if (++c->n == c->post_at) {
		c->post_at += DRAIN_RECORDS;
		if (c->drained)
			sem_post(c->drained);
	}
}

static void on_record(void *ctx, const struct kstats_stream_record *rec)
{
	consume(ctx, rec->seq, rec->vals);
}

/* Until every consumer has posted once. */
static void wait_drained(sem_t *drained)
{
	int i;

	for (i = 0; i < NR_CONSUMERS; i++)
		while (sem_wait(drained) && errno == EINTR)
			;
}

static int count_only(void *ctx, void *data, size_t size)
{
	(void)data;
	(void)size;
	++*(uint64_t *)ctx;
	return 0;
}

static struct kstats_stream *open_burst(void)
{
	struct kstats_stream_opts o = { .obj_path = flood.path, .stream = "burst",
					.pin_dir = t.pin_dir };
	char err[KSTATS_ERR_LEN] = "";
	struct kstats_stream *s = NULL;

	if (kstats_stream_open(&o, &s, err, sizeof(err)))
		die("open", err);
	return s;
}

/* The columns the baselines decode, where the stream's BTF puts them. */
static void learn_layout(void)
{
	static const char *const names[NR_COLS] = { "seq", "cpu", "neg" };
	struct kstats_stream *s = open_burst();
	int i, idx;

	record_size = kstats_stream_record_size(s);
	for (i = 0; i < NR_COLS; i++) {
		idx = kstream_col(s, names[i]);
		if (idx < 0)
			die(names[i], "no such column");
		cols[i].off = kstats_map_column(kstats_stream_columns(s), idx)->offset;
		cols[i].size = kstats_map_column(kstats_stream_columns(s), idx)->size;
	}
	kstats_stream_close(s);
}

static struct kstats_stream *open_ours(struct counter c[NR_CONSUMERS], sem_t *drained,
				       uint32_t queue)
{
	char err[KSTATS_ERR_LEN] = "";
	struct kstats_stream *s = open_burst();
	int i;

	for (i = 0; i < NR_CONSUMERS; i++) {
		c[i] = (struct counter){ .drained = drained, .post_at = DRAIN_RECORDS };
		if (kstats_stream_add_consumer(s, queue, on_record, &c[i], err, sizeof(err)) < 0)
			die("add consumer", err);
	}
	return s;
}

static void run_prog(const char *prog, unsigned int n)
{
	int ret = kstream_flood_run(&flood, prog, n);

	if (ret)
		die("BPF_PROG_TEST_RUN", strerror(-ret));
}

static void fill(unsigned int n)
{
	run_prog("flood_burst", n);
}

/* All but the last record without a wakeup: the threads sleep through it. */
static void fill_quiet(void)
{
	run_prog("flood_burst_quiet", DRAIN_RECORDS - 1);
}

/* The last record, waking the reader: returns when it is in the ring. */
static double wake_reader(void)
{
	double t0 = bstat_now_s();

	run_prog("flood_burst_wake", 1);
	return t0;
}

static void check_drained(const struct counter *c, uint64_t want)
{
	int i;

	for (i = 0; i < NR_CONSUMERS; i++)
		if (c[i].n != want || c[i].bad_order) {
			fprintf(stderr, "bench/stream: consumer %d got %lu of %lu, %lu out of order\n",
				i, (unsigned long)c[i].n, (unsigned long)want,
				(unsigned long)c[i].bad_order);
			exit(1);
		}
}

/* Records per second over drains repeated until ROUND_S is measured. */
struct pace {
	double busy;
	uint64_t drains;
};

static bool more(const struct pace *p, int max_drains)
{
	return p->busy < ROUND_S && (max_drains <= 0 || p->drains < (uint64_t)max_drains);
}

static double rate(const struct pace *p)
{
	return p->drains * DRAIN_RECORDS / p->busy;
}

/* Ours: the stream's threads started once, idle between drains. */
static double drain_ours(int max_drains)
{
	struct counter c[NR_CONSUMERS];
	struct pace p = {};
	struct kstats_stream *s;
	char err[KSTATS_ERR_LEN];
	sem_t drained;
	double t0;

	sem_init(&drained, 0, 0);
	s = open_ours(c, &drained, QUEUE_LEN);
	if (kstats_stream_start(s, err, sizeof(err)))
		die("start", err);
	while (more(&p, max_drains)) {
		fill_quiet();
		t0 = wake_reader();
		wait_drained(&drained);
		p.busy += bstat_now_s() - t0;
		p.drains++;
	}
	kstats_stream_close(s);
	check_drained(c, p.drains * DRAIN_RECORDS);
	sem_destroy(&drained);
	return rate(&p);
}

/* libbpf on the burst ring, with its own fd (closed with the ring). */
static struct ring_buffer *open_ring(ring_buffer_sample_fn fn, void *ctx)
{
	struct ring_buffer *rb;
	char pin[512];
	int fd;

	kstats_pin_path(pin, sizeof(pin), t.pin_dir, "map", KSTREAM_FLOOD_OBJ, "burst_ringbuf");
	fd = bpf_obj_get(pin);
	rb = fd >= 0 ? ring_buffer__new(fd, fn, ctx, NULL) : NULL;
	if (!rb)
		die(pin, strerror(errno));
	return rb;
}

static double drain_libbpf(int max_drains)
{
	uint64_t n = 0;
	struct ring_buffer *rb = open_ring(count_only, &n);
	struct pace p = {};
	double t0;

	while (more(&p, max_drains)) {
		fill_quiet();
		t0 = wake_reader();
		while (n < (p.drains + 1) * DRAIN_RECORDS && ring_buffer__consume(rb) >= 0)
			;
		p.busy += bstat_now_s() - t0;
		p.drains++;
	}
	ring_buffer__free(rb);
	if (n != p.drains * DRAIN_RECORDS)
		die("libbpf drain", "lost records");
	return rate(&p);
}

/*
 * The baselines: per consumer, a queue of (seq, record) slots under a
 * mutex, a condvar to wake it.  The reader stages up to batch records and
 * then, per consumer, locks once, copies them in, signals once.  The
 * consumer takes all it finds under the lock and decodes them outside it.
 */
struct locked_queue {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned char *slots;
	size_t slot_size;
	uint64_t head, tail, dropped;
	bool closed;
	struct counter c;
	pthread_t thread;
};

struct locked_reader {
	struct locked_queue q[NR_CONSUMERS];
	unsigned char *staged;
	unsigned int nstaged, batch;
	uint64_t seq;
};

static void flush(struct locked_reader *r)
{
	struct locked_queue *q;
	unsigned int i, k;

	for (i = 0; i < NR_CONSUMERS; i++) {
		q = &r->q[i];
		pthread_mutex_lock(&q->lock);
		for (k = 0; k < r->nstaged; k++) {
			if (q->head - q->tail == QUEUE_LEN) {
				q->dropped++;
				continue;
			}
			memcpy(q->slots + (q->head++ % QUEUE_LEN) * q->slot_size,
			       r->staged + (size_t)k * q->slot_size, q->slot_size);
		}
		pthread_cond_signal(&q->cond);
		pthread_mutex_unlock(&q->lock);
	}
	r->nstaged = 0;
}

static int locked_record(void *ctx, void *data, size_t size)
{
	struct locked_reader *r = ctx;
	unsigned char *slot = r->staged + (size_t)r->nstaged * r->q[0].slot_size;

	memcpy(slot, &r->seq, sizeof(r->seq));
	memcpy(slot + sizeof(r->seq), data, size);
	r->seq++;
	if (++r->nstaged == r->batch)
		flush(r);
	return 0;
}

static int64_t load(const unsigned char *rec, const struct leaf *l)
{
	int32_t v32;
	int64_t v;

	if (l->size == 4) {
		memcpy(&v32, rec + l->off, 4);
		return v32;
	}
	memcpy(&v, rec + l->off, 8);
	return v;
}

static void *locked_consumer(void *arg)
{
	struct locked_queue *q = arg;
	uint64_t tail = 0, head, seq;
	int64_t vals[NR_COLS];
	const unsigned char *slot;
	int i;

	for (;;) {
		pthread_mutex_lock(&q->lock);
		q->tail = tail;
		while (q->head == tail && !q->closed)
			pthread_cond_wait(&q->cond, &q->lock);
		head = q->head;
		pthread_mutex_unlock(&q->lock);
		if (head == tail)
			break;
		for (; tail != head; tail++) {
			slot = q->slots + (tail % QUEUE_LEN) * q->slot_size;
			memcpy(&seq, slot, sizeof(seq));
			for (i = 0; i < NR_COLS; i++)
				vals[i] = load(slot + sizeof(seq), &cols[i]);
			consume(&q->c, seq, vals);
		}
	}
	return NULL;
}

/* Anonymous memory written once per page before timing, like ours. */
static void *touched(size_t len)
{
	unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	size_t off;

	if (p == MAP_FAILED)
		die("mmap", strerror(errno));
	for (off = 0; off < len; off += 4096)
		p[off] = 1;
	return p;
}

/*
 * The baselines' drains: the main thread reads, pass_end(reader) after
 * each pass, until the consumers have the drain (*seq: records read).
 */
static void time_drains(struct pace *p, int max_drains, struct ring_buffer *rb,
			const uint64_t *seq, void (*pass_end)(void *), void *reader,
			sem_t *drained)
{
	double t0;

	while (more(p, max_drains)) {
		fill_quiet();
		t0 = wake_reader();
		while (*seq < (p->drains + 1) * DRAIN_RECORDS && ring_buffer__consume(rb) >= 0)
			pass_end(reader);
		wait_drained(drained);
		p->busy += bstat_now_s() - t0;
		p->drains++;
	}
}

static void locked_pass_end(void *r)
{
	flush(r);
}

/* The baselines: their consumer threads started once, idle between drains. */
static double drain_locked(unsigned int batch, int max_drains)
{
	static struct locked_reader r;
	size_t slot_size = sizeof(uint64_t) + (record_size + 7) / 8 * 8;
	struct ring_buffer *rb = open_ring(locked_record, &r);
	struct counter c[NR_CONSUMERS];
	struct pace p = {};
	sem_t drained;
	int i;

	sem_init(&drained, 0, 0);
	r = (struct locked_reader){ .batch = batch, .staged = touched(batch * slot_size) };
	for (i = 0; i < NR_CONSUMERS; i++) {
		struct locked_queue *q = &r.q[i];

		q->slot_size = slot_size;
		q->slots = touched(QUEUE_LEN * slot_size);
		q->c = (struct counter){ .drained = &drained, .post_at = DRAIN_RECORDS };
		pthread_mutex_init(&q->lock, NULL);
		pthread_cond_init(&q->cond, NULL);
		if (pthread_create(&q->thread, NULL, locked_consumer, q))
			die("pthread_create", strerror(errno));
	}
	time_drains(&p, max_drains, rb, &r.seq, locked_pass_end, &r, &drained);
	for (i = 0; i < NR_CONSUMERS; i++) {
		pthread_mutex_lock(&r.q[i].lock);
		r.q[i].closed = true;
		pthread_cond_signal(&r.q[i].cond);
		pthread_mutex_unlock(&r.q[i].lock);
		pthread_join(r.q[i].thread, NULL);
		c[i] = r.q[i].c;
		munmap(r.q[i].slots, QUEUE_LEN * slot_size);
	}
	munmap(r.staged, batch * slot_size);
	ring_buffer__free(rb);
	check_drained(c, p.drains * DRAIN_RECORDS);
	sem_destroy(&drained);
	return rate(&p);
}

/*
 * The best achievable: what ours does, by hand for struct flood_record
 * (tests/bpf/stream_flood.c).  Per consumer a lock-free single-producer/
 * single-consumer ring of (seq, record) copies.  The ring buffer's callback
 * copies each record once, with a fixed-size copy, into a run of BATCH
 * slots, copied whole into every ring and published at once when full and
 * at the end of each pass (cheaper than a copy per record per consumer); a
 * full ring drops and counts that consumer's copy only, as ours does.  The
 * consumers read the columns at fixed offsets (no BTF, no callback) and
 * sleep on a semaphore when idle.
 */
struct flood_rec {
	uint64_t ts_ns, seq;
	uint32_t cpu;
	int32_t neg;
};

struct best_slot {
	uint64_t seq;
	struct flood_rec rec;
};

struct best_queue {
	/* The reader's own. */
	alignas(64) uint32_t next, tail_seen;
	uint64_t dropped;
	alignas(64) _Atomic uint32_t head;
	alignas(64) _Atomic uint32_t tail;
	alignas(64) _Atomic uint32_t sleeping;
	_Atomic bool closed;
	sem_t wake;
	struct best_slot *slots;
	struct counter c;
	pthread_t thread;
};

struct best_reader {
	struct best_queue q[NR_CONSUMERS];
	struct best_slot run[BATCH];
	unsigned int nrun;
	uint64_t seq;
};

/* Wakes a sleeping consumer at the end of a pass or once its backlog is large, as ours. */
static void best_publish(struct best_queue *q, bool pass_end)
{
	/* seq_cst store then load, against the consumer's store then load. */
	atomic_store(&q->head, q->next);
	if (!atomic_load(&q->sleeping) ||
	    (!pass_end && q->next - atomic_load_explicit(&q->tail, memory_order_relaxed) <
			  WAKE_BACKLOG))
		return;
	if (atomic_exchange(&q->sleeping, 0))
		sem_post(&q->wake);
}

/* The run into q, as much as fits. */
static void best_enqueue(struct best_queue *q, const struct best_slot *run, uint32_t n,
			 bool pass_end)
{
	uint32_t room = QUEUE_LEN - (q->next - q->tail_seen), at = q->next % QUEUE_LEN;
	uint32_t first;

	if (room < n) {
		q->tail_seen = atomic_load_explicit(&q->tail, memory_order_acquire);
		room = QUEUE_LEN - (q->next - q->tail_seen);
	}
	if (room < n) {
		q->dropped += n - room;
		n = room;
	}
	first = n < QUEUE_LEN - at ? n : QUEUE_LEN - at;
	memcpy(&q->slots[at], run, first * sizeof(*run));
	memcpy(q->slots, run + first, (n - first) * sizeof(*run));
	q->next += n;
	best_publish(q, pass_end);
}

static void best_flush(struct best_reader *r, bool pass_end)
{
	int i;

	for (i = 0; i < NR_CONSUMERS; i++)
		best_enqueue(&r->q[i], r->run, r->nrun, pass_end);
	r->nrun = 0;
}

static int best_record(void *ctx, void *data, size_t size)
{
	struct best_reader *r = ctx;
	struct best_slot *slot = &r->run[r->nrun];

	if (size != sizeof(slot->rec))
		return 0;
	slot->seq = r->seq++;
	memcpy(&slot->rec, data, sizeof(slot->rec));
	if (++r->nrun == BATCH)
		best_flush(r, false);
	return 0;
}

/* Nothing queued: true once closed, else sleeps until woken. */
static bool best_idle(struct best_queue *q, uint32_t tail)
{
	atomic_store(&q->sleeping, 1);
	if (atomic_load(&q->head) == tail) {
		/* Closed after the last publish: head is final. */
		if (atomic_load(&q->closed))
			return true;
		while (sem_wait(&q->wake) && errno == EINTR)
			;
	}
	atomic_store(&q->sleeping, 0);
	return false;
}

static void *best_consumer(void *arg)
{
	struct best_queue *q = arg;
	const struct best_slot *slot;
	uint32_t tail = 0, head;
	int64_t vals[NR_COLS];

	do {
		head = atomic_load_explicit(&q->head, memory_order_acquire);
		for (; tail != head; tail++) {
			slot = &q->slots[tail % QUEUE_LEN];
			vals[0] = (int64_t)slot->rec.seq;
			vals[1] = slot->rec.cpu;
			vals[2] = slot->rec.neg;
			consume(&q->c, slot->seq, vals);
			if (tail % BATCH == BATCH - 1)
				atomic_store_explicit(&q->tail, tail + 1, memory_order_release);
		}
		atomic_store_explicit(&q->tail, tail, memory_order_release);
	} while (!best_idle(q, tail));
	return NULL;
}

/* The columns the best case reads at fixed offsets: where the BTF puts them? */
static void check_best_layout(void)
{
	if (record_size != sizeof(struct flood_rec) ||
	    cols[0].off != offsetof(struct flood_rec, seq) ||
	    cols[1].off != offsetof(struct flood_rec, cpu) ||
	    cols[2].off != offsetof(struct flood_rec, neg))
		die("best case", "struct flood_record changed: update struct flood_rec");
}

static void best_pass_end(void *r)
{
	best_flush(r, true);
}

static double drain_best(int max_drains)
{
	static struct best_reader r;
	struct ring_buffer *rb = open_ring(best_record, &r);
	struct counter c[NR_CONSUMERS];
	struct pace p = {};
	sem_t drained;
	int i;

	sem_init(&drained, 0, 0);
	memset(&r, 0, sizeof(r));
	for (i = 0; i < NR_CONSUMERS; i++) {
		struct best_queue *q = &r.q[i];

		q->slots = touched(QUEUE_LEN * sizeof(*q->slots));
		q->c = (struct counter){ .drained = &drained, .post_at = DRAIN_RECORDS };
		sem_init(&q->wake, 0, 0);
		if (pthread_create(&q->thread, NULL, best_consumer, q))
			die("pthread_create", strerror(errno));
	}
	time_drains(&p, max_drains, rb, &r.seq, best_pass_end, &r, &drained);
	for (i = 0; i < NR_CONSUMERS; i++) {
		atomic_store(&r.q[i].closed, true);
		sem_post(&r.q[i].wake);
		pthread_join(r.q[i].thread, NULL);
		c[i] = r.q[i].c;
		if (r.q[i].dropped)
			die("best drain", "lost records");
		sem_destroy(&r.q[i].wake);
		munmap(r.q[i].slots, QUEUE_LEN * sizeof(*r.q[i].slots));
	}
	ring_buffer__free(rb);
	check_drained(c, p.drains * DRAIN_RECORDS);
	sem_destroy(&drained);
	return rate(&p);
}

/*
 * The best achievable zero-copy pipeline: what ours does, by hand for struct flood_record.
 * Each consumer walks the mapped ring (libbpf's layout) from its position to the
 * producer's, reads the columns at fixed offsets, and every BATCH records publishes its
 * position and moves the kernel's consumer_pos to the slower one's.  The main thread
 * wakes them (a semaphore each) once the drain's last record is in.
 */
struct zc_ring {
	uint64_t *cons;
	const uint64_t *prod;
	const unsigned char *data;
	uint64_t mask;
	size_t page, prod_len;
	int fd;
};

struct zc_consumer {
	alignas(64) _Atomic uint64_t pos;
	alignas(64) struct counter c;
	_Atomic bool closed;
	sem_t wake;
	struct zc_ring *ring;
	struct zc_consumer *all;
	pthread_t thread;
};

static void zc_release(const struct zc_consumer *all, uint64_t *cons)
{
	uint64_t low = atomic_load(&all[0].pos), other = atomic_load(&all[1].pos);
	uint64_t cur = __atomic_load_n(cons, __ATOMIC_RELAXED);

	low = other < low ? other : low;
	while (cur < low && !__atomic_compare_exchange_n(cons, &cur, low, false,
							 __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		;
}

static void *zc_consumer(void *arg)
{
	struct zc_consumer *z = arg;
	const struct zc_ring *r = z->ring;
	uint64_t pos = atomic_load(&z->pos), end, seq = 0;
	const struct flood_rec *rec;
	int64_t vals[NR_COLS];
	unsigned int n = 0;
	uint32_t len;

	for (;;) {
		while (sem_wait(&z->wake) && errno == EINTR)
			;
		if (atomic_load(&z->closed))
			break;
		while (pos < (end = __atomic_load_n(r->prod, __ATOMIC_ACQUIRE))) {
			for (; pos < end; pos += (len + BPF_RINGBUF_HDR_SZ + 7) & ~7u) {
				len = __atomic_load_n((const uint32_t *)(r->data + (pos & r->mask)),
						      __ATOMIC_ACQUIRE);
				rec = (const void *)(r->data + (pos & r->mask) + BPF_RINGBUF_HDR_SZ);
				vals[0] = (int64_t)rec->seq;
				vals[1] = rec->cpu;
				vals[2] = rec->neg;
				consume(&z->c, seq++, vals);
				if (++n == BATCH) {
					n = 0;
					atomic_store_explicit(&z->pos, pos, memory_order_release);
					zc_release(z->all, r->cons);
				}
			}
		}
		atomic_store(&z->pos, pos);
		zc_release(z->all, r->cons);
	}
	return NULL;
}

static void zc_map(struct zc_ring *r)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char pin[512];
	void *p;

	kstats_pin_path(pin, sizeof(pin), t.pin_dir, "map", KSTREAM_FLOOD_OBJ, "burst_ringbuf");
	r->fd = bpf_obj_get(pin);
	if (r->fd < 0 || bpf_obj_get_info_by_fd(r->fd, &info, &len))
		die(pin, strerror(errno));
	r->page = (size_t)sysconf(_SC_PAGESIZE);
	r->mask = info.max_entries - 1;
	r->prod_len = r->page + 2 * (size_t)info.max_entries;
	p = mmap(NULL, r->page, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (p == MAP_FAILED)
		die("mmap", strerror(errno));
	r->cons = p;
	p = mmap(NULL, r->prod_len, PROT_READ, MAP_SHARED, r->fd, (off_t)r->page);
	if (p == MAP_FAILED)
		die("mmap", strerror(errno));
	r->prod = p;
	r->data = (const unsigned char *)p + r->page;
}

static double drain_bestzc(int max_drains)
{
	static struct zc_consumer z[NR_CONSUMERS];
	struct counter c[NR_CONSUMERS];
	struct zc_ring r;
	struct pace p = {};
	sem_t drained;
	double t0;
	int i;

	sem_init(&drained, 0, 0);
	zc_map(&r);
	for (i = 0; i < NR_CONSUMERS; i++) {
		memset(&z[i], 0, sizeof(z[i]));
		z[i].pos = __atomic_load_n(r.cons, __ATOMIC_ACQUIRE);
		z[i].c = (struct counter){ .drained = &drained, .post_at = DRAIN_RECORDS };
		z[i].ring = &r;
		z[i].all = z;
		sem_init(&z[i].wake, 0, 0);
		if (pthread_create(&z[i].thread, NULL, zc_consumer, &z[i]))
			die("pthread_create", strerror(errno));
	}
	while (more(&p, max_drains)) {
		fill_quiet();
		t0 = wake_reader();
		for (i = 0; i < NR_CONSUMERS; i++)
			sem_post(&z[i].wake);
		wait_drained(&drained);
		p.busy += bstat_now_s() - t0;
		p.drains++;
	}
	for (i = 0; i < NR_CONSUMERS; i++) {
		atomic_store(&z[i].closed, true);
		sem_post(&z[i].wake);
		pthread_join(z[i].thread, NULL);
		c[i] = z[i].c;
		sem_destroy(&z[i].wake);
	}
	munmap(r.cons, r.page);
	munmap((void *)r.prod, r.prod_len);
	close(r.fd);
	check_drained(c, p.drains * DRAIN_RECORDS);
	sem_destroy(&drained);
	return rate(&p);
}

struct overload {
	double produced, delivered, kernel_lost, queue_lost;
	bool exact;
};

/* Ours while BPF produces flat out: every record delivered or counted. */
static struct overload overload_once(void)
{
	struct counter c[NR_CONSUMERS];
	struct kstats_stream *s = open_ours(c, NULL, 1u << 16);
	struct kstats_consumer_stats cs[NR_CONSUMERS];
	struct kstats_stream_stats st;
	char err[KSTATS_ERR_LEN];
	uint64_t kernel_drops;
	struct overload o;
	double t0, t1, t2;
	int i;

	if (kstats_stream_start(s, err, sizeof(err)))
		die("start", err);
	t0 = bstat_now_s();
	fill(OVERLOAD_RUNS);
	t1 = bstat_now_s();
	kstats_stream_stop(s, err, sizeof(err));
	t2 = bstat_now_s();
	if (kstats_stream_get_stats(s, &st, err, sizeof(err)))
		die("stats", err);
	kernel_drops = st.kernel_drops - st.kernel_drops_at_open;
	o.exact = st.delivered + kernel_drops == OVERLOAD_RUNS;
	for (i = 0; i < NR_CONSUMERS; i++) {
		kstats_stream_consumer_stats(s, i, &cs[i]);
		o.exact &= cs[i].handled + cs[i].dropped == st.delivered &&
			   cs[i].handled == c[i].n;
	}
	kstats_stream_close(s);
	o.produced = OVERLOAD_RUNS / (t1 - t0);
	o.delivered = (cs[0].handled < cs[1].handled ? cs[0].handled : cs[1].handled) / (t2 - t0);
	o.kernel_lost = 100.0 * kernel_drops / OVERLOAD_RUNS;
	o.queue_lost = 100.0 * (cs[0].dropped + cs[1].dropped) / (2.0 * st.delivered);
	return o;
}

static void load_flood(void)
{
	if (ktest_missing_feature() || ktest_init(&t, "bench"))
		die("setup", "needs root and BTF");
	/* Not kernelstats-test-*: tests/run.sh of another PID namespace would remove it. */
	snprintf(t.pin_dir, sizeof(t.pin_dir), "%s/kernelstats-bench-%d", KSTATS_BPFFS,
		 (int)getpid());
	if (kstream_flood_load(&t, &flood)) {
		ktest_fini(&t);
		die(KSTREAM_FLOOD_OBJ ".bpf", "cannot load it: run make bench-stream");
	}
}

/* One drain of one case, nothing else timed: for callgrind (--profile). */
static int profile(const char *which)
{
	load_flood();
	learn_layout();
	check_best_layout();
	if (!strcmp(which, "libbpf"))
		drain_libbpf(1);
	else if (!strcmp(which, "ours"))
		drain_ours(1);
	else if (!strcmp(which, "best"))
		drain_best(1);
	else if (!strcmp(which, "bestzc"))
		drain_bestzc(1);
	else
		return 2;
	kstream_flood_close(&flood);
	ktest_fini(&t);
	return 0;
}

enum drain_case { FLOOR, OURS, BEST, BEST_ZC, BATCH_Q, RECORD_Q, NR_CASES };

/* One round: each case once, in a new order (the overload comes after). */
static void time_cases(double rate[NR_CASES][MAX_ROUNDS], int round)
{
	unsigned int seed = round;
	int order[NR_CASES], i;

	bstat_shuffle(order, NR_CASES, &seed);
	for (i = 0; i < NR_CASES; i++) {
		switch (order[i]) {
		case FLOOR: rate[FLOOR][round] = drain_libbpf(0); break;
		case OURS: rate[OURS][round] = drain_ours(0); break;
		case BEST: rate[BEST][round] = drain_best(0); break;
		case BEST_ZC: rate[BEST_ZC][round] = drain_bestzc(0); break;
		case BATCH_Q: rate[BATCH_Q][round] = drain_locked(BATCH, 0); break;
		default: rate[RECORD_Q][round] = drain_locked(1, 0); break;
		}
	}
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 9, i;
	double rate[NR_CASES][MAX_ROUNDS];
	double *floor_ = rate[FLOOR], *ours = rate[OURS], *best = rate[BEST], *zc = rate[BEST_ZC];
	double *batch = rate[BATCH_Q], *record = rate[RECORD_Q];
	double prod[MAX_ROUNDS], deliv[MAX_ROUNDS], klost[MAX_ROUNDS], qlost[MAX_ROUNDS];
	struct overload o;
	bool exact = true;

	if (argc == 3 && !strcmp(argv[1], "--profile"))
		rounds = profile(argv[2]) ? -1 : 0;
	if (rounds == 0)
		return 0;
	if (rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "Usage: bench/stream [ROUNDS 1..%d] | --profile "
			"libbpf|ours|best|bestzc\n",
			MAX_ROUNDS);
		return 2;
	}
	load_flood();
	learn_layout();
	check_best_layout();
	for (i = 0; i < rounds; i++) {
		time_cases(rate, i);
		o = overload_once();
		prod[i] = o.produced;
		deliv[i] = o.delivered;
		klost[i] = o.kernel_lost;
		qlost[i] = o.queue_lost;
		exact &= o.exact;
	}
	printf("# stream: %d rounds, drains of %u records of %u bytes, >= %.0f ms of drains "
	       "per case per round, 2 consumers\n", rounds, DRAIN_RECORDS, record_size,
	       ROUND_S * 1e3);
	printf("RESULT\tstream.drain_records\tn\t%u\n", DRAIN_RECORDS);
	printf("RESULT\tstream.round_ms\tms\t%.0f\n", ROUND_S * 1e3);
	bstat_ratio("stream.ours_vs_libbpf", ours, floor_, rounds);
	bstat_ratio("stream.ours_vs_best", ours, best, rounds);
	bstat_ratio("stream.best_vs_libbpf", best, floor_, rounds);
	bstat_ratio("stream.ours_vs_bestzc", ours, zc, rounds);
	bstat_ratio("stream.bestzc_vs_libbpf", zc, floor_, rounds);
	bstat_ratio("stream.ours_vs_batch", ours, batch, rounds);
	bstat_ratio("stream.ours_vs_record", ours, record, rounds);
	bstat_result("stream.libbpf", "rec/s", floor_, rounds);
	bstat_result("stream.ours", "rec/s", ours, rounds);
	bstat_result("stream.best", "rec/s", best, rounds);
	bstat_result("stream.bestzc", "rec/s", zc, rounds);
	bstat_result("stream.batch", "rec/s", batch, rounds);
	bstat_result("stream.record", "rec/s", record, rounds);
	bstat_result("stream.overload_produced", "rec/s", prod, rounds);
	bstat_result("stream.overload_delivered", "rec/s", deliv, rounds);
	bstat_result("stream.overload_kernel_lost", "%", klost, rounds);
	bstat_result("stream.overload_queue_lost", "%", qlost, rounds);
	printf("RESULT\tstream.overload_all_counted\tbool\t%d\t%d\t%d\t%d\n", exact, exact,
	       exact, rounds);
	kstream_flood_close(&flood);
	ktest_fini(&t);
	return exact ? 0 : 1;
}
