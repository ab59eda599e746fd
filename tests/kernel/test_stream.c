// SPDX-License-Identifier: GPL-2.0
/*
 * The event-stream consumer (btfreader/stream.c) against real ring buffers:
 * tests/bpf/stream_flood.c fed by BPF_PROG_TEST_RUN with repeat, one
 * attempted record per run, each carrying its producer sequence number.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kmain.h"
#include "kstats_pins.h"
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

	krecorder_init(r, kstats_map_ncols(kstats_stream_columns(s)));
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
	int seq_col = kstream_col(s, "seq");
	int neg_col = kstream_col(s, "neg");
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
 * Records are read in place: a consumer held shut keeps them in the ring
 * (its queue is larger than the ring, so nobody overruns it), and once the
 * 64 KiB ring is full the kernel drops and counts the rest.  The copying
 * reader of before drained each burst into the queue: the kernel lost none.
 */
static void test_held_records_stay_in_the_ring(void **state)
{
	const unsigned int total = 4000;
	struct kstats_stream *s = open_stream("flood");
	struct kstats_stream_stats st;
	struct krecorder r;
	unsigned int i;
	int id;

	(void)state;
	id = add_recorder(s, &r, 1u << 16);
	krecorder_gate(&r, true);
	start(s);
	/* Bursts that fit the ring, time between them to read each. */
	for (i = 0; i < total / 1000; i++) {
		assert_int_equal(kstream_flood_run(&flood, "flood_small", 1000), 0);
		usleep(20000);
	}
	st = stats_of(s);
	assert_true(st.kernel_drops >= total - 2048);
	krecorder_gate(&r, false);
	stop(s);
	st = stats_of(s);
	assert_int_equal(st.delivered + st.kernel_drops, total);
	assert_true(st.delivered <= 2048);
	assert_int_equal(consumer_of(s, id).handled, st.delivered);
	assert_int_equal(consumer_of(s, id).dropped, 0);
	assert_complete(&r, st.delivered);
	kstats_stream_close(s);
	krecorder_free(&r);
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
	/* A refused reader leaves the holder's claim alone. */
	assert_int_equal(kstats_stream_open(&o, &b, err, sizeof(err)), -EBUSY);
	kstats_stream_close(open_stream("flood"));	/* another ring: fine */
	kstats_stream_close(a);
	kstats_stream_close(open_stream("burst"));
}

static __u32 ring_id(const char *stream)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char map[64], pin[512];
	int fd;

	snprintf(map, sizeof(map), "%s_ringbuf", stream);
	assert_int_equal(kstats_pin_path(pin, sizeof(pin), t.pin_dir, "map",
					 KSTREAM_FLOOD_OBJ, map), 0);
	fd = bpf_obj_get(pin);
	assert_true(fd >= 0);
	assert_int_equal(bpf_obj_get_info_by_fd(fd, &info, &len), 0);
	close(fd);
	return info.id;
}

/* What an unprivileged user took of the names a claim could use: bits. */
#define SQUAT_SOCKET 1	/* the abstract socket kernelstats-stream-<ring id> */
#define SQUAT_FILE 2	/* the lock file in KSTATS_STREAM_LOCK_DIR */

static int squat(__u32 id)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	char path[256];
	int n, fd, took = 0;

	n = snprintf(addr.sun_path + 1, sizeof(addr.sun_path) - 1,
		     "kernelstats-stream-%u", id);
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (fd >= 0 && !bind(fd, (struct sockaddr *)&addr,
			     offsetof(struct sockaddr_un, sun_path) + 1 + n))
		took |= SQUAT_SOCKET;
	mkdir(KSTATS_STREAM_LOCK_DIR, 0777);
	snprintf(path, sizeof(path), KSTATS_STREAM_LOCK_DIR "/ring-%u", id);
	fd = open(path, O_RDONLY | O_CREAT, 0666);
	if (fd >= 0 && !flock(fd, LOCK_EX | LOCK_NB))
		took |= SQUAT_FILE;
	return took;
}

/*
 * Ring ids are public: a user who takes every name a claim could use
 * first (the abstract socket named by the id that watch once bound, the
 * lock file) must not stop root's reader.
 */
static void test_unprivileged_user_cannot_claim(void **state)
{
	__u32 id = ring_id("burst");
	int ready[2], done[2];
	char took = 0, c = 0;
	pid_t pid;

	(void)state;
	kstats_stream_close(open_stream("burst"));	/* the lock directory exists */
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(done), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(1);
		took = (char)squat(id);
		if (write(ready[1], &took, 1) != 1 || read(done[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	assert_int_equal(read(ready[0], &took, 1), 1);
	assert_int_equal(took, SQUAT_SOCKET);
	kstats_stream_close(open_stream("burst"));
	assert_int_equal(write(done[1], &c, 1), 1);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	close(ready[0]);
	close(ready[1]);
	close(done[0]);
	close(done[1]);
}

/*
 * The ring held is the one pinned, until the pin goes (-ENOENT) or names
 * another ring (-ESTALE: unload and load); the same ring pinned again is
 * still it.
 */
static void test_check_pin_sees_reload(void **state)
{
	struct kstats_stream *s = open_stream("burst");
	struct bpf_map *ring = bpf_object__find_map_by_name(flood.obj, "burst_ringbuf");
	char err[KSTATS_ERR_LEN] = "", pin[512];
	int fd;

	(void)state;
	assert_int_equal(kstats_pin_path(pin, sizeof(pin), t.pin_dir, "map",
					 KSTREAM_FLOOD_OBJ, "burst_ringbuf"), 0);
	assert_int_equal(kstats_stream_check_pin(s, err, sizeof(err)), 0);
	assert_int_equal(unlink(pin), 0);
	assert_int_equal(kstats_stream_check_pin(s, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "no longer pinned"));
	assert_int_equal(bpf_obj_pin(bpf_map__fd(ring), pin), 0);
	assert_int_equal(kstats_stream_check_pin(s, err, sizeof(err)), 0);
	assert_int_equal(unlink(pin), 0);
	fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "burst_ringbuf", 0, 0, 4096, NULL);
	assert_true(fd >= 0);
	assert_int_equal(bpf_obj_pin(fd, pin), 0);
	close(fd);
	assert_int_equal(kstats_stream_check_pin(s, err, sizeof(err)), -ESTALE);
	assert_non_null(strstr(err, "was reloaded"));
	kstats_stream_close(s);
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
	assert_int_equal(kstats_map_ncols(kstats_stream_columns(s)), 3);
	assert_int_equal(kstats_stream_record_size(s), 24);
	c = kstats_map_column(kstats_stream_columns(s), 0);
	assert_string_equal(c->name, "seq");
	assert_int_equal(c->offset, 8);
	assert_int_equal(c->size, 8);
	c = kstats_map_column(kstats_stream_columns(s), 2);
	assert_string_equal(c->name, "neg");
	assert_true(c->is_signed);
	assert_null(kstats_map_column(kstats_stream_columns(s), 3));
	kstats_stream_close(s);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_drops_counted_exactly),
		T(test_slow_consumer_isolated),
		T(test_held_records_stay_in_the_ring),
		T(test_shutdown_sigint),
		T(test_shutdown_sigterm),
		T(test_wait_stop_request_and_timeout),
		T(test_every_pass_wakes_sleeping_consumers),
		T(test_one_reader_per_ring),
		T(test_unprivileged_user_cannot_claim),
		T(test_check_pin_sees_reload),
		T(test_unknown_stream_lists_known),
		T(test_columns_from_btf),
	};
	return KTEST_MAIN("stream", tests, NULL, NULL);
}
