// SPDX-License-Identifier: GPL-2.0
/*
 * Reads while another thread inserts, updates and deletes entries of the
 * same real map.  Each value is written whole by one update and carries a
 * checksum of its key and sequence number, so a row mixing two writes, a
 * stray key or a key seen twice in one read is caught.  No crash under
 * ASan, no malformed row, for the batch read, a growing buffer, the walk
 * and per-CPU maps (summed and per-CPU rows).  The writer runs in a tight
 * loop of syscalls, far faster than any BPF program updates a telemetry map.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ktest.h"
#include "reader.h"
#include "../bpf/reader_layouts.h"

#define MAX_ENTRIES 1024
#define FULL_KEY_SPACE 4096	/* four times the map: inserts meet a full map */
#define RUN_NS 400000000ull	/* per variant, at least */
#define MAX_RUN_NS (25 * RUN_NS)	/* to get both sides going on a loaded machine */

static struct rtest_fixture fx;

struct writer {
	int fd;
	bool percpu;
	__u32 key_space;
	atomic_bool stop;
	atomic_ulong writes, deletes;
	int error;
};

static __u64 checksum(__u64 seq, __u32 key)
{
	return seq * 0x9e3779b97f4a7c15ull ^ ((__u64)key << 32 | key);
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct rd_churn_value vals[fx.ncpus];
	unsigned int rnd = 12345;
	__u64 seq = 1;
	int cpu;

	while (!atomic_load(&w->stop)) {
		__u32 key;

		rnd = rnd * 1103515245u + 12345u;
		key = (rnd >> 8) % w->key_space;
		if ((rnd >> 4) % 4 == 0) {
			if (!bpf_map_delete_elem(w->fd, &key))
				w->deletes++;
			continue;
		}
		for (cpu = 0; cpu < (w->percpu ? fx.ncpus : 1); cpu++) {
			vals[cpu].seq = seq;
			vals[cpu].check = checksum(seq, key);
			vals[cpu].key_copy = key;
			vals[cpu].pad_free = 0;
		}
		seq++;
		if (!bpf_map_update_elem(w->fd, &key, vals, BPF_ANY))
			w->writes++;
		else if (errno != E2BIG)	/* full map: expected */
			w->error = errno;
	}
	return NULL;
}

/* Every row: a key of the writer's, its own checksum, each key once. */
static int check_rows(const struct rtest_read *r, int copies, bool per_cpu_rows,
		      char *why, size_t len)
{
	static uint8_t seen[FULL_KEY_SPACE * 64];
	size_t i, off = per_cpu_rows ? 1 : 0;

	if (r->ncols != off + 5 ||
	    r->nrows > (size_t)MAX_ENTRIES * (per_cpu_rows ? fx.ncpus : 1))
		return snprintf(why, len, "%zu rows of %zu columns", r->nrows, r->ncols);
	memset(seen, 0, sizeof(seen));
	for (i = 0; i < r->nrows; i++) {
		const int64_t *row = r->rows + i * r->ncols;
		__u32 key = (__u32)row[off];
		__u64 seq = (__u64)row[off + 1], check = (__u64)row[off + 2];
		int cpu = per_cpu_rows ? (int)row[0] : 0;

		if (key >= FULL_KEY_SPACE || cpu < 0 || cpu >= fx.ncpus || cpu >= 64)
			return snprintf(why, len, "row %zu: key %u cpu %d", i, key, cpu);
		if (seen[key * 64 + cpu]++)
			return snprintf(why, len, "row %zu: key %u twice", i, key);
		if (seq % copies || !seq ||
		    check != (__u64)copies * checksum(seq / copies, key) ||
		    row[off + 3] != (int64_t)copies * key || row[off + 4])
			return snprintf(why, len, "row %zu: key %u malformed", i, key);
	}
	return 0;
}

struct churn_result {
	unsigned long reads, rows, again;
	char why[KSTATS_ERR_LEN];
};

/* One read (reopening: from a fresh buffer); 0, -EAGAIN or a failure in why. */
static int read_once(struct rtest_read *r, const struct kstats_map_opts *o,
		     bool reopen, struct churn_result *res)
{
	int ret;

	if (reopen || !r->m) {
		rtest_read_free(r);
		ret = rtest_read(o, r);
	} else {
		ret = rtest_reread(r);
	}
	if (ret == -EAGAIN && strstr(r->err, "changed faster")) {
		res->again++;
		return ret;
	}
	if (ret)
		return snprintf(res->why, sizeof(res->why), "read: %s", r->err);
	res->reads++;
	res->rows += r->nrows;
	return check_rows(r, o->per_cpu_rows || !strstr(o->map_name, "pcpu") ? 1 : fx.ncpus,
			  o->per_cpu_rows, res->why, sizeof(res->why));
}

/* The test means something only if both sides really ran. */
static bool both_ran(struct writer *w, const struct churn_result *res)
{
	return atomic_load(&w->writes) > 1000 && atomic_load(&w->deletes) > 100 &&
	       res->reads + res->again >= 10;
}

/* Reads map while the writer works keys [0, key_space): RUN_NS, and until both ran. */
static void churn(const char *map, struct kstats_map_opts how, bool reopen,
		  __u32 key_space, struct churn_result *res)
{
	struct writer w = { .percpu = strstr(map, "pcpu") != NULL, .key_space = key_space };
	struct rtest_read r = {};
	char pin[512];
	struct kstats_map_opts o = rtest_opts(&fx, map, pin, sizeof(pin));
	pthread_t th;
	uint64_t start, now;
	__u32 k;

	o.per_cpu_rows = how.per_cpu_rows;
	o.no_batch = how.no_batch;
	o.batch_entries = how.batch_entries;
	w.fd = rtest_map_fd(&fx, map);
	for (k = 0; k < FULL_KEY_SPACE; k++)
		bpf_map_delete_elem(w.fd, &k);
	memset(res, 0, sizeof(*res));
	assert_int_equal(pthread_create(&th, NULL, writer_main, &w), 0);
	start = ktest_now_ns();
	while (read_once(&r, &o, reopen, res) <= 0) {
		now = ktest_now_ns();
		if (now - start > MAX_RUN_NS || (now - start > RUN_NS && both_ran(&w, res)))
			break;
	}
	atomic_store(&w.stop, true);
	pthread_join(th, NULL);
	rtest_read_free(&r);
	if (*res->why)
		fail_msg("%s: %s", map, res->why);
	assert_int_equal(w.error, 0);
	assert_true(both_ran(&w, res));
}

/* Fewer keys than the map holds: every read succeeds, every row is whole. */
static void churn_ok(const char *map, struct kstats_map_opts o, bool reopen)
{
	struct churn_result res;

	churn(map, o, reopen, MAX_ENTRIES * 3 / 4, &res);
	assert_int_equal(res.again, 0);
	assert_true(res.reads >= 10 && res.rows > 0);
}

static void test_batch_read(void **state)
{
	(void)state;
	RTEST_NEED_KERNEL(&fx);
	churn_ok("churn_map", (struct kstats_map_opts){ 0 }, false);
}

static void test_growing_buffer(void **state)
{
	(void)state;
	RTEST_NEED_KERNEL(&fx);
	churn_ok("churn_map", (struct kstats_map_opts){ .batch_entries = 3 }, true);
}

static void test_walk(void **state)
{
	(void)state;
	RTEST_NEED_KERNEL(&fx);
	churn_ok("churn_map", (struct kstats_map_opts){ .no_batch = true }, false);
}

static void test_percpu_summed(void **state)
{
	(void)state;
	RTEST_NEED_KERNEL(&fx);
	churn_ok("pcpu_churn_map", (struct kstats_map_opts){ 0 }, false);
}

static void test_percpu_rows(void **state)
{
	(void)state;
	RTEST_NEED_KERNEL(&fx);
	churn_ok("pcpu_churn_map", (struct kstats_map_opts){ .per_cpu_rows = true }, false);
}

/*
 * A full map whose keys keep changing: one read can meet more keys than the
 * map holds (deleted ones and their successors).  Such a read is retried,
 * then refused with -EAGAIN; a read that succeeds is whole.
 */
static void test_full_map_churning(void **state)
{
	struct churn_result res;

	(void)state;
	RTEST_NEED_KERNEL(&fx);
	churn("churn_map", (struct kstats_map_opts){ 0 }, false, FULL_KEY_SPACE, &res);
	assert_true(res.reads + res.again >= 10);
	print_message("full churning map: %lu reads whole, %lu refused (EAGAIN)\n",
		      res.reads, res.again);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_batch_read),
		cmocka_unit_test(test_growing_buffer),
		cmocka_unit_test(test_walk),
		cmocka_unit_test(test_percpu_summed),
		cmocka_unit_test(test_percpu_rows),
		cmocka_unit_test(test_full_map_churning),
	};

	return RTEST_MAIN("reader_concurrency", tests, &fx, "concurrency");
}
