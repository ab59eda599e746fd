// SPDX-License-Identifier: GPL-2.0
/*
 * Map states and read paths against real pinned maps: empty, full, 65,536
 * entries, arrays, LRU and per-CPU maps (summed and per-CPU rows); one
 * batch syscall when the map fits, buffer growth on ENOSPC, the
 * get_next_key walk, and the fallback when the kernel refuses batch ops
 * (EINVAL/ENOTSUPP injected with a seccomp filter in the reading thread).
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ktest.h"
#include "reader.h"
#include "../bpf/reader_layouts.h"

static struct rtest_fixture fx;

static void read_ok(const struct kstats_map_opts *o, struct rtest_read *r)
{
	if (rtest_read(o, r))
		fail_msg("%s: %s", o->map_name, r->err);
}

static struct rd_count_value count_value(__u32 k)
{
	struct rd_count_value v = { .count = k * 3ull + 1, .sum = ~(__u64)k << 20 };

	return v;
}

static void fill_counts(int fd, __u32 n)
{
	__u32 k;

	for (k = 0; k < n; k++) {
		struct rd_count_value v = count_value(k * 7919u);
		__u32 key = k * 7919u;

		assert_int_equal(bpf_map_update_elem(fd, &key, &v, BPF_NOEXIST), 0);
	}
}

/* Every key k*7919 for k < n once, with its exact value, and nothing else. */
static void expect_counts(const struct rtest_read *r, __u32 n)
{
	static uint8_t seen[RD_BIG_ENTRIES];
	size_t i;

	assert_int_equal(r->ncols, 3);
	assert_int_equal(r->nrows, n);
	memset(seen, 0, sizeof(seen));
	for (i = 0; i < r->nrows; i++) {
		const int64_t *row = r->rows + i * r->ncols;
		__u32 key = (__u32)row[0], k = key / 7919u;
		struct rd_count_value v = count_value(key);

		assert_true(key % 7919u == 0 && k < n);
		assert_int_equal(seen[k]++, 0);
		assert_int_equal((uint64_t)row[1], v.count);
		assert_int_equal((uint64_t)row[2], v.sum);
	}
}

static void test_empty_map(void **state)
{
	char pin[512];
	struct kstats_map_opts o = rtest_opts(&fx, "lru_map", pin, sizeof(pin));
	struct rtest_read r;

	(void)state;
	RTEST_NEED_KERNEL(&fx);
	read_ok(&o, &r);
	assert_int_equal(r.nrows, 0);
	assert_int_equal(r.ncols, 3);
	assert_int_equal(r.m->syscalls, 1);
	assert_true(r.m->last_batched);
	rtest_read_free(&r);
}

static void test_full_map_in_one_syscall(void **state)
{
	char pin[512];
	struct kstats_map_opts o = rtest_opts(&fx, "full_map", pin, sizeof(pin));
	struct rd_count_value v = {};
	struct rtest_read r;
	__u32 extra = 1;

	(void)state;
	RTEST_NEED_KERNEL(&fx);
	fill_counts(rtest_map_fd(&fx, "full_map"), RD_FULL_ENTRIES);
	assert_int_not_equal(bpf_map_update_elem(rtest_map_fd(&fx, "full_map"), &extra, &v,
						 BPF_NOEXIST), 0);	/* it is full */
	read_ok(&o, &r);
	expect_counts(&r, RD_FULL_ENTRIES);
	assert_int_equal(r.m->syscalls, 1);
	rtest_read_free(&r);
}

/*
 * Values past kstats_read_chunk_bytes() are read in calls of that many bytes:
 * one call per chunk (the last one also finds the end), and one more when
 * buckets that did not fit a call's room left the calls short.
 */
static void expect_direct_calls(const struct rtest_read *r, size_t entries)
{
	size_t bytes = entries * sizeof(struct rd_count_value);
	size_t chunks = (bytes + kstats_read_chunk_bytes() - 1) / kstats_read_chunk_bytes();

	assert_in_range(r->m->syscalls, chunks, chunks + 1);
}

static void test_65536_entries(void **state)
{
	char pin[512];
	struct kstats_map_opts o = rtest_opts(&fx, "big_map", pin, sizeof(pin));
	struct rtest_read r;

	(void)state;
	RTEST_NEED_KERNEL(&fx);
	fill_counts(rtest_map_fd(&fx, "big_map"), RD_BIG_ENTRIES);
	read_ok(&o, &r);
	expect_counts(&r, RD_BIG_ENTRIES);
	expect_direct_calls(&r, RD_BIG_ENTRIES);
	assert_true(r.m->last_batched);
	rtest_read_free(&r);

	/* The walk sees the same, at two syscalls per entry plus the end. */
	o.no_batch = true;
	read_ok(&o, &r);
	expect_counts(&r, RD_BIG_ENTRIES);
	assert_false(r.m->last_batched);
	assert_int_equal(r.m->syscalls, 2 * RD_BIG_ENTRIES + 1);
	rtest_read_free(&r);
}

/* Starting from a one-entry buffer, growth (full buffer, ENOSPC) loses nothing. */
static void test_buffer_growth(void **state)
{
	char pin[512];
	struct kstats_map_opts o = rtest_opts(&fx, "big_map", pin, sizeof(pin));
	struct rtest_read r;

	(void)state;
	RTEST_NEED_KERNEL(&fx);
	o.batch_entries = 1;
	read_ok(&o, &r);
	expect_counts(&r, RD_BIG_ENTRIES);
	assert_true(r.m->syscalls > 1);
	/* The buffer stays grown: the next read takes no call to grow it. */
	assert_int_equal(rtest_reread(&r), 0);
	expect_counts(&r, RD_BIG_ENTRIES);
	expect_direct_calls(&r, RD_BIG_ENTRIES);
	rtest_read_free(&r);
}

/*
 * Calls of a few entries each into the rows: chunk boundaries, and with one
 * entry per call every bucket of two or more gives ENOSPC and widens the chunk.
 */
static void test_chunked_read(void **state)
{
	char pin[512];
	struct kstats_map_opts o = rtest_opts(&fx, "big_map", pin, sizeof(pin));
	struct rtest_read r;

	(void)state;
	RTEST_NEED_KERNEL(&fx);
	read_ok(&o, &r);	/* filled by test_65536_entries */
	r.m->chunk = 1000;
	assert_int_equal(rtest_reread(&r), 0);
	expect_counts(&r, RD_BIG_ENTRIES);
	assert_true(r.m->last_batched);
	assert_true(r.m->syscalls > RD_BIG_ENTRIES / 1000);
	r.m->chunk = 1;
	assert_int_equal(rtest_reread(&r), 0);
	expect_counts(&r, RD_BIG_ENTRIES);
	assert_true(r.m->last_batched);
	assert_true(r.m->syscalls < RD_BIG_ENTRIES);	/* it widened */
	rtest_read_free(&r);
}

#define CHURN_FROM (RD_BIG_ENTRIES / 2)	/* keys k * 7919 from here on come and go */

struct chunk_writer {
	int fd;
	atomic_bool stop;
	atomic_ulong changes;
};

/* Swaps key k * 7919 for k * 7919 + 1 and back: other keys, other buckets. */
static void swap_key(int fd, __u32 k, bool plus_one)
{
	__u32 old = k * 7919u + !plus_one, key = k * 7919u + plus_one;
	struct rd_count_value v = count_value(key);

	bpf_map_delete_elem(fd, &old);
	bpf_map_update_elem(fd, &key, &v, BPF_NOEXIST);
}

static void *chunk_writer_main(void *arg)
{
	struct chunk_writer *w = arg;
	bool plus_one = true;
	__u32 k;

	for (; !atomic_load(&w->stop); plus_one = !plus_one)
		for (k = CHURN_FROM; k < RD_BIG_ENTRIES && !atomic_load(&w->stop); k++) {
			swap_key(w->fd, k, plus_one);
			atomic_fetch_add(&w->changes, 1);
		}
	for (k = CHURN_FROM; k < RD_BIG_ENTRIES; k++)
		swap_key(w->fd, k, false);
	return NULL;
}

/* Each row whole, each key once, every key the writer leaves alone there. */
static void expect_churned_counts(const struct rtest_read *r)
{
	static uint8_t seen[RD_BIG_ENTRIES][2];
	size_t i;
	__u32 k;

	memset(seen, 0, sizeof(seen));
	for (i = 0; i < r->nrows; i++) {
		const int64_t *row = r->rows + i * r->ncols;
		__u32 key = (__u32)row[0], k = key / 7919u, plus_one = key % 7919u;
		struct rd_count_value v = count_value(key);

		assert_true(k < RD_BIG_ENTRIES && plus_one <= (k >= CHURN_FROM));
		assert_int_equal(seen[k][plus_one]++, 0);
		assert_int_equal((uint64_t)row[1], v.count);
		assert_int_equal((uint64_t)row[2], v.sum);
	}
	for (k = 0; k < CHURN_FROM; k++)
		assert_int_equal(seen[k][0], 1);
}

/*
 * Chunked reads while entries leave buckets already read for buckets not
 * yet read: a read may see more entries than the map holds, and then reads
 * again the usual way (or gives up with EAGAIN).
 */
static void test_chunked_read_while_changing(void **state)
{
	char pin[512];
	struct kstats_map_opts o = rtest_opts(&fx, "big_map", pin, sizeof(pin));
	struct chunk_writer w = { .fd = rtest_map_fd(&fx, "big_map") };
	struct rtest_read r;
	pthread_t th;
	int reads, ret;

	(void)state;
	RTEST_NEED_KERNEL(&fx);
	read_ok(&o, &r);	/* filled by test_65536_entries */
	r.m->chunk = 500;
	assert_int_equal(pthread_create(&th, NULL, chunk_writer_main, &w), 0);
	for (reads = 0; reads < 20 || atomic_load(&w.changes) < 1000; reads++) {
		ret = rtest_reread(&r);
		if (ret == -EAGAIN)
			continue;
		assert_int_equal(ret, 0);
		expect_churned_counts(&r);
	}
	atomic_store(&w.stop, true);
	pthread_join(th, NULL);
	assert_int_equal(rtest_reread(&r), 0);
	expect_counts(&r, RD_BIG_ENTRIES);
	rtest_read_free(&r);
}

static void test_lru_hash(void **state)
{
	char pin[512];
	struct kstats_map_opts o = rtest_opts(&fx, "lru_map", pin, sizeof(pin));
	struct rtest_read r;

	(void)state;
	RTEST_NEED_KERNEL(&fx);
	fill_counts(rtest_map_fd(&fx, "lru_map"), 100);
	read_ok(&o, &r);
	expect_counts(&r, 100);
	rtest_read_free(&r);
}

static struct rd_percpu_value percpu_value(__u32 key, int cpu)
{
	struct rd_percpu_value v = {
		.n = (1ull << 40) + key * 1000 + cpu,
		.s = -(int)(key * 10 + cpu),
		/* On one CPU, or on all for every third key: OR, not a sum. */
		.seen = cpu == (int)key % fx.ncpus || key % 3 == 0,
		.color = cpu % 2 ? RD_COLOR_BLUE : RD_COLOR_NEG,
	};

	return v;
}

static void fill_percpu(int fd, __u32 nkeys)
{
	struct rd_percpu_value vals[fx.ncpus];
	__u32 k;
	int cpu;

	for (k = 0; k < nkeys; k++) {
		for (cpu = 0; cpu < fx.ncpus; cpu++)
			vals[cpu] = percpu_value(k, cpu);
		assert_int_equal(bpf_map_update_elem(fd, &k, vals, BPF_ANY), 0);
	}
}

/* Summed: n and s add up, seen ORs, color takes the largest. */
static void expect_percpu_summed(const struct rtest_read *r, __u32 nkeys)
{
	__u32 k;
	int cpu;

	assert_int_equal(r->nrows, nkeys);
	for (k = 0; k < nkeys; k++) {
		int64_t key = k, n = 0, s = 0;
		const int64_t *row = rtest_find_row(r, &key, 1);

		assert_non_null(row);
		for (cpu = 0; cpu < fx.ncpus; cpu++) {
			n += percpu_value(k, cpu).n;
			s += percpu_value(k, cpu).s;
		}
		assert_int_equal(rtest_get(r, row, "n"), n);
		assert_int_equal(rtest_get(r, row, "s"), s);
		assert_int_equal(rtest_get(r, row, "seen"), 1);
		assert_int_equal(rtest_get(r, row, "color"),
				 fx.ncpus > 1 ? RD_COLOR_BLUE : RD_COLOR_NEG);
	}
}

static void expect_percpu_rows(const struct rtest_read *r, __u32 nkeys)
{
	__u32 k;
	int cpu;

	assert_int_equal(r->nrows, nkeys * fx.ncpus);
	assert_string_equal(kstats_map_column(r->m, 0)->name, "cpu");
	assert_int_equal(kstats_map_nkey_cols(r->m), 2);
	for (k = 0; k < nkeys; k++)
		for (cpu = 0; cpu < fx.ncpus; cpu++) {
			int64_t key[2] = { cpu, k };
			const int64_t *row = rtest_find_row(r, key, 2);
			struct rd_percpu_value v = percpu_value(k, cpu);

			assert_non_null(row);
			assert_int_equal(rtest_get(r, row, "n"), v.n);
			assert_int_equal(rtest_get(r, row, "s"), v.s);
			assert_int_equal(rtest_get(r, row, "seen"), v.seen);
			assert_int_equal(rtest_get(r, row, "color"), v.color);
		}
}

static void check_percpu_map(const char *name, __u32 nkeys, __u32 max_entries)
{
	char pin[512];
	struct kstats_map_opts o = rtest_opts(&fx, name, pin, sizeof(pin));
	struct rtest_read r;

	fill_percpu(rtest_map_fd(&fx, name), nkeys);
	read_ok(&o, &r);
	expect_percpu_summed(&r, nkeys);
	assert_int_equal(kstats_map_max_rows(r.m), max_entries);
	rtest_read_free(&r);
	o.per_cpu_rows = true;
	read_ok(&o, &r);
	expect_percpu_rows(&r, nkeys);
	assert_int_equal(kstats_map_max_rows(r.m), (size_t)max_entries * fx.ncpus);
	rtest_read_free(&r);
	o.no_batch = true;
	read_ok(&o, &r);
	expect_percpu_rows(&r, nkeys);
	rtest_read_free(&r);
}

static void test_percpu_hash(void **state)
{
	(void)state;
	RTEST_NEED_KERNEL(&fx);
	check_percpu_map("pcpu_hash_map", 16, 16);
}

static void test_lru_percpu_hash(void **state)
{
	(void)state;
	RTEST_NEED_KERNEL(&fx);
	check_percpu_map("lru_pcpu_map", 100, 128);
}

static void test_percpu_array(void **state)
{
	char pin[512];
	struct kstats_map_opts o = rtest_opts(&fx, "pcpu_array_map", pin, sizeof(pin));
	__u64 vals[fx.ncpus];
	struct rtest_read r;
	__u32 k;
	int cpu;

	(void)state;
	RTEST_NEED_KERNEL(&fx);
	for (k = 0; k < RD_ARRAY_ENTRIES; k++) {
		for (cpu = 0; cpu < fx.ncpus; cpu++)
			vals[cpu] = UINT64_MAX - k - cpu;	/* the sum wraps */
		assert_int_equal(bpf_map_update_elem(rtest_map_fd(&fx, "pcpu_array_map"), &k, vals,
						     BPF_ANY), 0);
	}
	read_ok(&o, &r);
	assert_int_equal(r.nrows, RD_ARRAY_ENTRIES);
	assert_int_equal(r.m->syscalls, 1);
	for (k = 0; k < RD_ARRAY_ENTRIES; k++) {
		uint64_t sum = 0;

		for (cpu = 0; cpu < fx.ncpus; cpu++)
			sum += UINT64_MAX - k - cpu;
		assert_int_equal(r.rows[k * r.ncols], k);
		assert_int_equal((uint64_t)r.rows[k * r.ncols + 1], sum);
	}
	assert_int_equal(kstats_map_max_rows(r.m), RD_ARRAY_ENTRIES);
	rtest_read_free(&r);
	o.per_cpu_rows = true;
	read_ok(&o, &r);
	assert_int_equal(kstats_map_max_rows(r.m), RD_ARRAY_ENTRIES * fx.ncpus);
	assert_int_equal(r.nrows, RD_ARRAY_ENTRIES * fx.ncpus);
	for (k = 0; k < r.nrows; k++) {
		const int64_t *row = r.rows + k * r.ncols;

		assert_int_equal((uint64_t)row[2], UINT64_MAX - row[1] - row[0]);
	}
	rtest_read_free(&r);
}

/* Values of 4 bytes sit 8 bytes apart per CPU: the stride must be right. */
static void test_percpu_padded_values(void **state)
{
	char pin[512];
	struct kstats_map_opts o = rtest_opts(&fx, "pcpu_odd_map", pin, sizeof(pin));
	struct { struct rd_odd_value v; __u32 pad; } vals[fx.ncpus];
	struct rtest_read r;
	__u32 k;
	int cpu;

	(void)state;
	RTEST_NEED_KERNEL(&fx);
	assert_int_equal(sizeof(vals[0]), 8);
	for (k = 0; k < RD_ARRAY_ENTRIES; k++) {
		memset(vals, 0xee, sizeof(vals));
		for (cpu = 0; cpu < fx.ncpus; cpu++) {
			vals[cpu].v.a = 1000 * k + cpu;
			vals[cpu].v.b = 10 * k + cpu;
		}
		assert_int_equal(bpf_map_update_elem(rtest_map_fd(&fx, "pcpu_odd_map"), &k, vals,
						     BPF_ANY), 0);
	}
	o.per_cpu_rows = true;
	read_ok(&o, &r);
	assert_int_equal(r.nrows, RD_ARRAY_ENTRIES * fx.ncpus);
	for (k = 0; k < r.nrows; k++) {
		const int64_t *row = r.rows + k * r.ncols;

		assert_int_equal(rtest_get(&r, row, "a"), 1000 * row[1] + row[0]);
		assert_int_equal(rtest_get(&r, row, "b"), 10 * row[1] + row[0]);
	}
	rtest_read_free(&r);
}

struct fallback_run {
	int inject;
	const struct kstats_map_opts *o;
	struct rtest_read r;
	int ret, reread;
	unsigned int syscalls[2];
	bool batched[2];
};

static void *fallback_thread(void *arg)
{
	struct fallback_run *f = arg;

	f->ret = rtest_fail_batch_in_this_thread(f->inject);
	if (f->ret)
		return NULL;
	f->ret = rtest_read(f->o, &f->r);
	f->syscalls[0] = f->r.m ? f->r.m->syscalls : 0;
	f->batched[0] = f->r.m && f->r.m->last_batched;
	if (!f->ret) {
		f->reread = rtest_reread(&f->r);
		f->syscalls[1] = f->r.m->syscalls;
		f->batched[1] = f->r.m->last_batched;
	}
	return NULL;
}

static void run_with_failing_batch(int inject, const struct kstats_map_opts *o,
				   struct fallback_run *f)
{
	pthread_t th;

	memset(f, 0, sizeof(*f));
	f->inject = inject;
	f->o = o;
	assert_int_equal(pthread_create(&th, NULL, fallback_thread, f), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	if (f->ret == -EOPNOTSUPP && !f->r.m)
		skip();		/* no seccomp filter for this architecture */
}

/* EINVAL or ENOTSUPP: walk instead, and never try the batch again. */
static void test_fallback_when_kernel_lacks_batch(void **state)
{
	static const int errs[] = { EINVAL, 524 /* ENOTSUPP */ };
	char pin[512];
	struct kstats_map_opts o = rtest_opts(&fx, "full_map", pin, sizeof(pin));
	struct fallback_run f;
	size_t i;

	(void)state;
	RTEST_NEED_KERNEL(&fx);
	for (i = 0; i < 2; i++) {
		run_with_failing_batch(errs[i], &o, &f);
		if (f.ret)
			fail_msg("errno %d: %s", errs[i], f.r.err);
		expect_counts(&f.r, RD_FULL_ENTRIES);
		assert_false(f.batched[0]);
		assert_int_equal(f.syscalls[0], 1 + 2 * RD_FULL_ENTRIES + 1);
		assert_int_equal(f.reread, 0);
		assert_false(f.batched[1]);
		assert_int_equal(f.syscalls[1], 2 * RD_FULL_ENTRIES + 1);
		rtest_read_free(&f.r);
	}
}

/* Any other batch error is reported, not papered over with a walk. */
static void test_other_batch_errors_are_reported(void **state)
{
	char pin[512];
	struct kstats_map_opts o = rtest_opts(&fx, "full_map", pin, sizeof(pin));
	struct fallback_run f;

	(void)state;
	RTEST_NEED_KERNEL(&fx);
	run_with_failing_batch(EFAULT, &o, &f);
	assert_int_equal(f.ret, -EFAULT);
	assert_non_null(strstr(f.r.err, "batch lookup: Bad address"));
	rtest_read_free(&f.r);
}

static void test_rows_buffer_too_small(void **state)
{
	char pin[512], err[KSTATS_ERR_LEN];
	struct kstats_map_opts o = rtest_opts(&fx, "full_map", pin, sizeof(pin));
	struct kstats_map *m;
	int64_t rows[3 * 4];
	size_t n = 99;

	(void)state;
	RTEST_NEED_KERNEL(&fx);
	assert_int_equal(kstats_map_open(&o, &m, err, sizeof(err)), 0);
	assert_int_equal(kstats_map_read(m, rows, 4, &n, err, sizeof(err)), -ENOSPC);
	assert_non_null(strstr(err, "do not fit"));
	assert_int_equal(n, 99);
	kstats_map_close(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_map),
		cmocka_unit_test(test_full_map_in_one_syscall),
		cmocka_unit_test(test_65536_entries),
		cmocka_unit_test(test_buffer_growth),
		cmocka_unit_test(test_chunked_read),
		cmocka_unit_test(test_chunked_read_while_changing),
		cmocka_unit_test(test_lru_hash),
		cmocka_unit_test(test_percpu_hash),
		cmocka_unit_test(test_lru_percpu_hash),
		cmocka_unit_test(test_percpu_array),
		cmocka_unit_test(test_percpu_padded_values),
		cmocka_unit_test(test_fallback_when_kernel_lacks_batch),
		cmocka_unit_test(test_other_batch_errors_are_reported),
		cmocka_unit_test(test_rows_buffer_too_small),
	};

	return RTEST_MAIN("reader_states", tests, &fx, "states");
}
