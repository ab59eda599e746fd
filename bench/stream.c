// SPDX-License-Identifier: GPL-2.0
/*
 * Records per second through one reader thread and dispatch to two
 * consumers (btfreader/stream.c), side by side with the floor: libbpf's
 * ring_buffer__consume with a callback that only counts.  Medians over
 * repeats, interleaved so machine noise hits both alike.
 *
 *   drain:     N records wait in the ring (tests/bpf/stream_flood.c, fed by
 *              BPF_PROG_TEST_RUN); time until both consumers have all N.
 *   overload:  the reader runs while BPF_PROG_TEST_RUN produces flat out on
 *              the other core; what reached both consumers per second, and
 *              what was counted lost.
 *
 * Usage: bench/stream [REPEATS]   (root; make bench-stream)
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kstats_pins.h"
#include "kstats_stream.h"
#include "ktest.h"
#include "stream.h"

#define DRAIN_RECORDS 400000u	/* the 16 MiB burst ring holds 524287 */
#define OVERLOAD_RUNS 2000000u
#define NR_CONSUMERS 2

struct counter {
	struct kstats_stream *s;
	uint64_t n, want, bad_order;
	atomic_int *done;
};

static struct ktest t;
static struct kstream_flood flood;
static uint32_t record_size;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void on_record(void *ctx, const struct kstats_stream_record *rec)
{
	struct counter *c = ctx;

	c->bad_order += rec->seq != c->n;
	if (++c->n == c->want && atomic_fetch_add(c->done, 1) + 1 == NR_CONSUMERS)
		kstats_stream_request_stop(c->s);
}

static int count_only(void *ctx, void *data, size_t size)
{
	(void)data;
	(void)size;
	++*(uint64_t *)ctx;
	return 0;
}

static struct kstats_stream *open_burst(struct counter c[NR_CONSUMERS], atomic_int *done,
					uint64_t want, uint32_t queue)
{
	struct kstats_stream_opts o = { .obj_path = flood.path, .stream = "burst",
					.pin_dir = t.pin_dir };
	char err[KSTATS_ERR_LEN] = "";
	struct kstats_stream *s = NULL;
	int i;

	if (kstats_stream_open(&o, &s, err, sizeof(err))) {
		fprintf(stderr, "bench/stream: %s\n", err);
		exit(1);
	}
	record_size = kstats_stream_record_size(s);
	for (i = 0; i < NR_CONSUMERS; i++) {
		c[i] = (struct counter){ .s = s, .want = want, .done = done };
		if (kstats_stream_add_consumer(s, queue, on_record, &c[i], err, sizeof(err)) < 0) {
			fprintf(stderr, "bench/stream: %s\n", err);
			exit(1);
		}
	}
	return s;
}

static void fill(unsigned int n)
{
	if (kstream_flood_run(&flood, "flood_burst", n)) {
		fprintf(stderr, "bench/stream: BPF_PROG_TEST_RUN: %s\n", strerror(errno));
		exit(1);
	}
}

/* Records/s for ours (two consumers) to drain a full ring. */
static double drain_ours(void)
{
	struct counter c[NR_CONSUMERS];
	atomic_int done = 0;
	struct kstats_stream *s = open_burst(c, &done, DRAIN_RECORDS, DRAIN_RECORDS);
	char err[KSTATS_ERR_LEN];
	double t0, t1;

	fill(DRAIN_RECORDS);
	t0 = now_s();
	if (kstats_stream_start(s, err, sizeof(err))) {
		fprintf(stderr, "bench/stream: %s\n", err);
		exit(1);
	}
	kstats_stream_wait(s, NULL, 60000);
	t1 = now_s();
	kstats_stream_close(s);
	if (c[0].n != DRAIN_RECORDS || c[1].n != DRAIN_RECORDS || c[0].bad_order) {
		fprintf(stderr, "bench/stream: consumers got %lu and %lu of %u\n",
			(unsigned long)c[0].n, (unsigned long)c[1].n, DRAIN_RECORDS);
		exit(1);
	}
	return DRAIN_RECORDS / (t1 - t0);
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
	if (!rb) {
		fprintf(stderr, "bench/stream: %s: %s\n", pin, strerror(errno));
		exit(1);
	}
	return rb;
}

/* The floor: libbpf alone, one callback that counts. */
static double drain_libbpf(void)
{
	uint64_t n = 0;
	struct ring_buffer *rb = open_ring(count_only, &n);
	double t0, t1;

	fill(DRAIN_RECORDS);
	t0 = now_s();
	while (n < DRAIN_RECORDS && ring_buffer__consume(rb) >= 0)
		;
	t1 = now_s();
	ring_buffer__free(rb);
	return DRAIN_RECORDS / (t1 - t0);
}

/*
 * The common design, for comparison: each consumer's queue under a mutex,
 * a condition variable to wake it, the reader signalling on every record.
 */
struct naive_queue {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned char *slots;
	uint64_t head, tail, handled, dropped;
	bool closed;
	pthread_t thread;
};

static struct naive_queue naive[NR_CONSUMERS];

static int naive_record(void *ctx, void *data, size_t size)
{
	int i;

	(void)ctx;
	for (i = 0; i < NR_CONSUMERS; i++) {
		struct naive_queue *q = &naive[i];

		pthread_mutex_lock(&q->lock);
		if (q->head - q->tail < DRAIN_RECORDS) {
			memcpy(q->slots + (q->head++ % DRAIN_RECORDS) * size, data, size);
			pthread_cond_signal(&q->cond);
		} else {
			q->dropped++;
		}
		pthread_mutex_unlock(&q->lock);
	}
	return 0;
}

static void *naive_consumer(void *arg)
{
	struct naive_queue *q = arg;
	uint64_t seen = 0, v;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		while (q->tail == q->head && !q->closed)
			pthread_cond_wait(&q->cond, &q->lock);
		if (q->tail == q->head)
			break;
		memcpy(&v, q->slots + (q->tail++ % DRAIN_RECORDS) * record_size + 8, 8);
		seen += v;
		q->handled++;
	}
	pthread_mutex_unlock(&q->lock);
	return (void *)(uintptr_t)seen;
}

static double drain_naive(void)
{
	struct ring_buffer *rb = open_ring(naive_record, NULL);
	double t0, t1;
	int i;

	for (i = 0; i < NR_CONSUMERS; i++) {
		struct naive_queue *q = &naive[i];

		*q = (struct naive_queue){ .slots = malloc((size_t)DRAIN_RECORDS * record_size) };
		pthread_mutex_init(&q->lock, NULL);
		pthread_cond_init(&q->cond, NULL);
		if (!q->slots || pthread_create(&q->thread, NULL, naive_consumer, q))
			exit(1);
	}
	fill(DRAIN_RECORDS);
	t0 = now_s();
	while (naive[0].head < DRAIN_RECORDS && ring_buffer__consume(rb) >= 0)
		;
	for (i = 0; i < NR_CONSUMERS; i++) {
		pthread_mutex_lock(&naive[i].lock);
		naive[i].closed = true;
		pthread_cond_signal(&naive[i].cond);
		pthread_mutex_unlock(&naive[i].lock);
		pthread_join(naive[i].thread, NULL);
	}
	t1 = now_s();
	for (i = 0; i < NR_CONSUMERS; i++) {
		if (naive[i].handled != DRAIN_RECORDS)
			exit(1);
		free(naive[i].slots);
	}
	ring_buffer__free(rb);
	return DRAIN_RECORDS / (t1 - t0);
}

struct overload {
	double produced_per_s, delivered_per_s, kernel_lost, consumer_lost;
};

static struct overload overload_once(void)
{
	struct counter c[NR_CONSUMERS];
	atomic_int done = 0;
	struct kstats_stream *s = open_burst(c, &done, UINT64_MAX, 1u << 16);
	struct kstats_consumer_stats cs[NR_CONSUMERS];
	struct kstats_stream_stats st;
	char err[KSTATS_ERR_LEN];
	struct overload o;
	double t0, t1, t2;
	int i;

	kstats_stream_start(s, err, sizeof(err));
	t0 = now_s();
	fill(OVERLOAD_RUNS);
	t1 = now_s();
	kstats_stream_stop(s, err, sizeof(err));
	t2 = now_s();
	kstats_stream_get_stats(s, &st, err, sizeof(err));
	for (i = 0; i < NR_CONSUMERS; i++)
		kstats_stream_consumer_stats(s, i, &cs[i]);
	kstats_stream_close(s);
	o.produced_per_s = OVERLOAD_RUNS / (t1 - t0);
	o.delivered_per_s = (cs[0].handled < cs[1].handled ? cs[0].handled : cs[1].handled) /
			    (t2 - t0);
	o.kernel_lost = (double)(st.kernel_drops - st.kernel_drops_at_open) / OVERLOAD_RUNS;
	o.consumer_lost = (double)(cs[0].dropped + cs[1].dropped) / (2.0 * st.delivered);
	return o;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	int repeats = argc > 1 ? atoi(argv[1]) : 5, i;
	double ours[64], floor_[64], naive_[64], prod[64], deliv[64], klost[64], clost[64];
	struct overload o;

	if (repeats < 1 || repeats > 64) {
		fprintf(stderr, "Usage: bench/stream [REPEATS 1..64]\n");
		return 2;
	}
	if (ktest_missing_feature() || ktest_init(&t, "bench")) {
		fprintf(stderr, "bench/stream: needs root and BTF\n");
		return 1;
	}
	/* Not kernelstats-test-*: tests/run.sh of another PID namespace would remove it. */
	snprintf(t.pin_dir, sizeof(t.pin_dir), "%s/kernelstats-bench-%d", KSTATS_BPFFS,
		 (int)getpid());
	if (kstream_flood_load(&t, &flood)) {
		fprintf(stderr, "bench/stream: cannot load %s/tests/bpf/" KSTREAM_FLOOD_OBJ
			".bpf: run make bench-stream\n", t.build);
		ktest_fini(&t);
		return 1;
	}
	for (i = 0; i < repeats; i++) {
		floor_[i] = drain_libbpf();
		ours[i] = drain_ours();
		naive_[i] = drain_naive();
		o = overload_once();
		prod[i] = o.produced_per_s;
		deliv[i] = o.delivered_per_s;
		klost[i] = o.kernel_lost;
		clost[i] = o.consumer_lost;
	}
	printf("stream bench, %d repeats, medians, %u-byte records\n", repeats,
	       record_size);
	printf("  drain %u records, libbpf consume, count only   %12.0f rec/s\n",
	       DRAIN_RECORDS, median(floor_, repeats));
	printf("  drain %u records, reader + %d consumers        %12.0f rec/s  (%.2fx the floor)\n",
	       DRAIN_RECORDS, NR_CONSUMERS, median(ours, repeats),
	       median(ours, repeats) / median(floor_, repeats));
	printf("  drain %u records, mutex+condvar queues, 2 thr  %12.0f rec/s  (ours: %.2fx)\n",
	       DRAIN_RECORDS, median(naive_, repeats),
	       median(ours, repeats) / median(naive_, repeats));
	printf("  overload: BPF produced                         %12.0f rec/s\n",
	       median(prod, repeats));
	printf("  overload: reached both consumers               %12.0f rec/s  "
	       "(lost: %.1f%% kernel, %.1f%% queues)\n", median(deliv, repeats),
	       100 * median(klost, repeats), 100 * median(clost, repeats));
	kstream_flood_close(&flood);
	ktest_fini(&t);
	return 0;
}
