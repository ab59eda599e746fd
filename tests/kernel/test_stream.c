// SPDX-License-Identifier: GPL-2.0
/*
 * The event-stream consumer (btfreader/stream.c) against real ring buffers:
 * tests/bpf/stream_flood.c fed by BPF_PROG_TEST_RUN with repeat, one
 * attempted record per run, each carrying its producer sequence number.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "kstats_stream.h"
#include "ktest.h"
#include "stream.h"

static struct ktest t;
static struct kstream_flood flood;

static int setup(void **state)
{
	(void)state;
	if (ktest_init(&t, "stream"))
		return -1;
	return kstream_flood_load(&t, &flood);
}

static int teardown(void **state)
{
	(void)state;
	kstream_flood_close(&flood);
	ktest_fini(&t);
	return 0;
}

static struct kstats_stream *open_stream(const char *name)
{
	struct kstats_stream_opts o = { .obj_path = flood.path, .stream = name,
					.pin_dir = t.pin_dir };
	char err[KSTATS_ERR_LEN] = "";
	struct kstats_stream *s = NULL;
	int ret = kstats_stream_open(&o, &s, err, sizeof(err));

	if (ret)
		fprintf(stderr, "open %s: %s\n", name, err);
	assert_int_equal(ret, 0);
	return s;
}

static int add_recorder(struct kstats_stream *s, struct krecorder *r, uint32_t queue)
{
	char err[KSTATS_ERR_LEN];
	int id;

	krecorder_init(r, kstats_stream_ncols(s));
	id = kstats_stream_add_consumer(s, queue, krecorder_fn, r, err, sizeof(err));
	assert_true(id >= 0);
	return id;
}

static void start(struct kstats_stream *s)
{
	char err[KSTATS_ERR_LEN];

	assert_int_equal(kstats_stream_start(s, err, sizeof(err)), 0);
}

static void stop(struct kstats_stream *s)
{
	char err[KSTATS_ERR_LEN];

	assert_int_equal(kstats_stream_stop(s, err, sizeof(err)), 0);
}

static struct kstats_stream_stats stats_of(struct kstats_stream *s)
{
	struct kstats_stream_stats st;
	char err[KSTATS_ERR_LEN];

	assert_int_equal(kstats_stream_get_stats(s, &st, err, sizeof(err)), 0);
	return st;
}

static struct kstats_consumer_stats consumer_of(struct kstats_stream *s, int id)
{
	struct kstats_consumer_stats st;

	assert_int_equal(kstats_stream_consumer_stats(s, id, &st), 0);
	return st;
}

/* Delivery seqs are 0..n-1: this consumer lost nothing. */
static void assert_complete(const struct krecorder *r, uint64_t n)
{
	size_t i;

	assert_int_equal(r->n, n);
	for (i = 0; i < r->n; i++)
		assert_int_equal(r->seq[i], i);
}

/* Strictly increasing values of col; returns how many values are missing in [0, end). */
static uint64_t gaps(const struct krecorder *r, int col, uint64_t end)
{
	uint64_t prev = 0, missing = 0, v;
	size_t i;

	for (i = 0; i < r->n; i++) {
		v = col < 0 ? r->seq[i] : (uint64_t)krecorder_val(r, i, col);
		if (i)
			assert_true(v > prev);
		missing += v - (i ? prev + 1 : 0);
		prev = v;
	}
	assert_true(!r->n || prev < end);
	return missing + (r->n ? end - prev - 1 : end);
}

static bool wait_calls(struct krecorder *r, size_t n, int timeout_ms)
{
	for (; timeout_ms > 0; timeout_ms -= 5) {
		if (atomic_load(&r->calls) >= n)
			return true;
		usleep(5000);
	}
	return atomic_load(&r->calls) >= n;
}

/*
 * 4000 runs before the reader starts can leave at most 2048 records in the
 * 64 KiB ring, so drops are certain; 50000 more race the reader.  Every
 * attempt is either delivered or counted, and the missing producer seqs
 * are exactly the counted ones.
 */
static void test_drops_counted_exactly(void **state)
{
	const unsigned int before = 4000, during = 50000, total = before + during;
	struct kstats_stream *s = open_stream("flood");
	int seq_col = kstats_stream_column_index(s, "seq");
	int neg_col = kstats_stream_column_index(s, "neg");
	struct kstats_stream_stats st;
	struct krecorder r;
	size_t i;
	int id;

	(void)state;
	assert_true(seq_col >= 0 && neg_col >= 0);
	id = add_recorder(s, &r, 1u << 17);
	assert_int_equal(kstream_flood_run(&flood, "flood_small", before), 0);
	start(s);
	assert_int_equal(kstream_flood_run(&flood, "flood_small", during), 0);
	stop(s);
	st = stats_of(s);
	assert_int_equal(st.kernel_drops_at_open, 0);
	assert_true(st.kernel_drops >= before - 2048);
	assert_int_equal(st.malformed, 0);
	assert_int_equal(st.delivered + st.kernel_drops, total);
	assert_int_equal(consumer_of(s, id).handled, st.delivered);
	assert_int_equal(consumer_of(s, id).dropped, 0);
	assert_complete(&r, st.delivered);
	assert_int_equal(gaps(&r, seq_col, total), st.kernel_drops);
	for (i = 0; i < r.n; i++)
		assert_int_equal(krecorder_val(&r, i, neg_col),
				 -(int64_t)(krecorder_val(&r, i, seq_col) % 1000));
	kstats_stream_close(s);
	krecorder_free(&r);
}

/*
 * A consumer held shut with a 64-record queue: the two others receive every
 * record while it is still held, and its own losses are exactly what it
 * did not receive.
 */
static void test_slow_consumer_isolated(void **state)
{
	const unsigned int total = 20000;
	struct kstats_stream *s = open_stream("burst");
	struct krecorder fast[2], slow;
	struct kstats_consumer_stats sc;
	struct kstats_stream_stats st;
	int ids[2], slow_id, i;

	(void)state;
	for (i = 0; i < 2; i++)
		ids[i] = add_recorder(s, &fast[i], 1u << 16);
	slow_id = add_recorder(s, &slow, 64);
	krecorder_gate(&slow, true);
	start(s);
	assert_int_equal(kstream_flood_run(&flood, "flood_burst", total), 0);
	assert_true(wait_calls(&fast[0], total, 20000));
	assert_true(wait_calls(&fast[1], total, 20000));
	assert_int_equal(atomic_load(&slow.calls), 0);
	krecorder_gate(&slow, false);
	stop(s);
	st = stats_of(s);
	assert_int_equal(st.kernel_drops, 0);
	assert_int_equal(st.delivered, total);
	for (i = 0; i < 2; i++) {
		assert_int_equal(consumer_of(s, ids[i]).dropped, 0);
		assert_complete(&fast[i], total);
		krecorder_free(&fast[i]);
	}
	sc = consumer_of(s, slow_id);
	assert_true(sc.dropped >= total - 65);
	assert_int_equal(sc.handled + sc.dropped, st.delivered);
	assert_int_equal(slow.n, sc.handled);
	assert_int_equal(gaps(&slow, -1, total), sc.dropped);
	kstats_stream_close(s);
	krecorder_free(&slow);
}

/*
 * The signal arrives while both consumers are held with every record still
 * queued; after wait returns and stop drains, each has all of them.
 */
static void shutdown_on(int signo)
{
	const unsigned int total = 5000;
	struct kstats_stream *s;
	struct krecorder r[2];
	sigset_t set, old;
	int i;

	sigemptyset(&set);
	sigaddset(&set, signo);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	s = open_stream("burst");
	for (i = 0; i < 2; i++) {
		add_recorder(s, &r[i], 1u << 14);
		krecorder_gate(&r[i], true);
	}
	start(s);
	assert_int_equal(kstream_flood_run(&flood, "flood_burst", total), 0);
	assert_int_equal(kill(getpid(), signo), 0);
	assert_int_equal(kstats_stream_wait(s, &set, 10000), signo);
	for (i = 0; i < 2; i++) {
		assert_int_equal(atomic_load(&r[i].calls), 0);
		krecorder_gate(&r[i], false);
	}
	stop(s);
	assert_int_equal(stats_of(s).delivered, total);
	assert_int_equal(stats_of(s).kernel_drops, 0);
	for (i = 0; i < 2; i++) {
		assert_complete(&r[i], total);
		krecorder_free(&r[i]);
	}
	kstats_stream_close(s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void test_shutdown_sigint(void **state)
{
	(void)state;
	shutdown_on(SIGINT);
}

static void test_shutdown_sigterm(void **state)
{
	(void)state;
	shutdown_on(SIGTERM);
}

static void test_wait_stop_request_and_timeout(void **state)
{
	struct kstats_stream *s = open_stream("burst");
	char err[KSTATS_ERR_LEN];

	(void)state;
	start(s);
	assert_int_equal(kstats_stream_wait(s, NULL, 10), -ETIME);
	kstats_stream_request_stop(s);
	assert_int_equal(kstats_stream_wait(s, NULL, 10000), 0);
	stop(s);
	assert_int_equal(kstats_stream_start(s, err, sizeof(err)), -EINVAL);
	assert_int_equal(kstats_stream_add_consumer(s, 8, krecorder_fn, NULL, err,
						    sizeof(err)), -EBUSY);
	kstats_stream_close(s);
}

/*
 * The reader hands records over every 64 and wakes a sleeping consumer
 * mid-pass only per backlog of thousands; the end of every pass must wake
 * it too.  A burst of exactly 64 queued before the start is one pass whose
 * last hand-over comes mid-pass; then lone records, one pass each.
 */
static void test_every_pass_wakes_sleeping_consumers(void **state)
{
	const unsigned int burst = 64;
	struct kstats_stream *s = open_stream("burst");
	struct krecorder r[2];
	unsigned int n;
	int i;

	(void)state;
	for (i = 0; i < 2; i++)
		add_recorder(s, &r[i], 1u << 16);
	assert_int_equal(kstream_flood_run(&flood, "flood_burst", burst), 0);
	start(s);
	for (i = 0; i < 2; i++)
		assert_true(wait_calls(&r[i], burst, 5000));
	for (n = burst + 1; n <= burst + 3; n++) {
		usleep(20000);	/* both consumers asleep again */
		assert_int_equal(kstream_flood_run(&flood, "flood_burst", 1), 0);
		for (i = 0; i < 2; i++)
			assert_true(wait_calls(&r[i], n, 5000));
	}
	stop(s);
	for (i = 0; i < 2; i++) {
		assert_complete(&r[i], burst + 3);
		krecorder_free(&r[i]);
	}
	kstats_stream_close(s);
}

/* Reads are destructive: a second reader of one ring is refused. */
static void test_one_reader_per_ring(void **state)
{
	struct kstats_stream_opts o = { .obj_path = flood.path, .stream = "burst",
					.pin_dir = t.pin_dir };
	struct kstats_stream *a = open_stream("burst"), *b = NULL;
	char err[KSTATS_ERR_LEN] = "";

	(void)state;
	assert_int_equal(kstats_stream_open(&o, &b, err, sizeof(err)), -EBUSY);
	assert_non_null(strstr(err, "already has a reader"));
	kstats_stream_close(open_stream("flood"));	/* another ring: fine */
	kstats_stream_close(a);
	kstats_stream_close(open_stream("burst"));
}

static void test_unknown_stream_lists_known(void **state)
{
	struct kstats_stream_opts o = { .obj_path = flood.path, .stream = "nope",
					.pin_dir = t.pin_dir };
	struct kstats_stream *s = NULL;
	char err[KSTATS_ERR_LEN] = "";

	(void)state;
	assert_int_equal(kstats_stream_open(&o, &s, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "flood"));
	assert_non_null(strstr(err, "burst"));
	o.stream = NULL;
	assert_int_equal(kstats_stream_open(&o, &s, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "name one of"));
}

/* The columns come from the record's BTF, header excluded. */
static void test_columns_from_btf(void **state)
{
	struct kstats_stream *s = open_stream("flood");
	const struct kstats_column *c;

	(void)state;
	assert_int_equal(kstats_stream_ncols(s), 3);
	assert_int_equal(kstats_stream_record_size(s), 24);
	c = kstats_stream_column(s, 0);
	assert_string_equal(c->name, "seq");
	assert_int_equal(c->offset, 8);
	assert_int_equal(c->size, 8);
	c = kstats_stream_column(s, 2);
	assert_string_equal(c->name, "neg");
	assert_true(c->is_signed);
	assert_null(kstats_stream_column(s, 3));
	kstats_stream_close(s);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_drops_counted_exactly),
		T(test_slow_consumer_isolated),
		T(test_shutdown_sigint),
		T(test_shutdown_sigterm),
		T(test_wait_stop_request_and_timeout),
		T(test_every_pass_wakes_sleeping_consumers),
		T(test_one_reader_per_ring),
		T(test_unknown_stream_lists_known),
		T(test_columns_from_btf),
	};
	const char *missing = ktest_missing_feature();

	if (missing) {
		printf("SKIP: stream: %s\n", missing);
		return 0;
	}
	return cmocka_run_group_tests_name("stream", tests, NULL, NULL);
}
