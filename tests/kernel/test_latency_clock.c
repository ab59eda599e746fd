// SPDX-License-Identifier: GPL-2.0
/*
 * Exact latency edges and keep-first starts, on every start-map kind: the
 * production handlers, compiled against a clock this test sets
 * (tests/bpf/test_clock.h, tests/bpf/clocked_*.c), run under
 * BPF_PROG_TEST_RUN.  Expected buckets are written out from DESIGN.md
 * ("Buckets": nanoseconds truncated to microseconds, then floor(log2)),
 * never computed with the header's own function.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kmain.h"
#include "ktest.h"
#include "metrics.h"

#define T0 1000000000000ull	/* 1000 s: any start but 0 ("none") */
#define OTHER_CLOCK 500000000000000ull	/* the clock a path must not read */

struct path {
	const char *obj;	/* tests/bpf/<obj>.bpf */
	const char *begin, *end, *map;
	enum mt_clock clock;
	bool keeps_latest;	/* suspend: a begin overwrites (DESIGN.md) */
};

static const struct path paths[] = {
	{ "clocked_compaction", "on_compaction_begin_raw", "on_compaction_end_raw",
	  "compaction_duration_map", MT_CLOCK_MONO, false },
	{ "clocked_directReclaim", "on_direct_reclaim_begin_raw",
	  "on_direct_reclaim_end_raw", "direct_reclaim_latency_map", MT_CLOCK_MONO, false },
	{ "clocked_cma", "on_cma_alloc_start_raw", "on_cma_alloc_finish_raw",
	  "cma_alloc_latency_map", MT_CLOCK_MONO, false },
	{ "clocked_kswapd", "on_kswapd_wake_raw", "on_kswapd_sleep_raw",
	  "kswapd_latency_map", MT_CLOCK_MONO, false },
	{ "page_direct_reclaim", "on_begin_raw", "on_end_raw", "page_latency_map",
	  MT_CLOCK_MONO, false },
	{ "clocked_suspendResume", "on_suspend_resume_raw", "on_suspend_resume_raw",
	  "suspend_resume_latency_map", MT_CLOCK_BOOT, true },
};

/* Elapsed ns -> bucket, by hand: [2^i, 2^(i+1)) us is bucket i. */
static const struct { int64_t ns; int bucket; } edges[] = {
	{ 0, 0 }, { 1999, 0 }, { 2000, 1 }, { 3999, 1 }, { 4000, 2 },
	{ 1023999, 9 }, { 1024000, 10 }, { 2047999, 10 }, { 2048000, 11 },
	{ 1073741823999ll, 29 }, { 1073741824000ll, 30 },
	{ 2147483647999ll, 30 }, { 2147483648000ll, 31 }, { 4294967296000ll, 31 },
	{ -5000000, 0 },	/* an end before its begin: 0, not a wrapped u64 */
};

struct run {
	const struct path *p;
	struct mt_obj obj;
};

static void set_clock(struct run *r, uint64_t ns)
{
	enum mt_clock other = r->p->clock == MT_CLOCK_MONO ? MT_CLOCK_BOOT : MT_CLOCK_MONO;

	assert_int_equal(mt_clock_set(&r->obj, r->p->clock, ns), 0);
	assert_int_equal(mt_clock_set(&r->obj, other, OTHER_CLOCK), 0);
}

/* ctx for the path's handlers: (nid) for kswapd, (action, val, start) for
 * suspend (action NULL reads as "", which pairs like any name), else unread. */
static void event(struct run *r, const char *prog, bool begin, uint64_t at_ns)
{
	__u64 args[5] = { 0, 3, begin, 0, 0 };

	set_clock(r, at_ns);
	assert_int_equal(mt_run(&r->obj, prog, args, 5), 0);
}

static void begin(struct run *r, uint64_t at_ns)
{
	event(r, r->p->begin, true, at_ns);
}

static void end(struct run *r, uint64_t at_ns)
{
	event(r, r->p->end, false, at_ns);
}

/* The bucket of the one event counted since *before (then updated); -1 if not one. */
static int new_bucket(struct run *r, struct bpf_telemetry_accumulator *before)
{
	struct bpf_telemetry_accumulator now, diff;
	size_t i;

	assert_int_equal(mt_hist_sum(&r->obj, r->p->map, &now), 0);
	for (i = 0; i < BPF_TELEMETRY_NR_BUCKETS; i++)
		diff.buckets[i] = now.buckets[i] - before->buckets[i];
	*before = now;
	return mt_single_bucket(&diff);
}

static void open_path(struct run *r, const struct path *p)
{
	r->p = p;
	if (mt_test_obj_open(&r->obj, p->obj))
		fail_msg("%s: cannot load tests/bpf/%s.bpf", p->obj, p->obj);
}

static void test_edges(void **state)
{
	struct bpf_telemetry_accumulator seen = {};
	size_t i, j;
	struct run r;

	(void)state;
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		open_path(&r, &paths[i]);
		memset(&seen, 0, sizeof(seen));
		for (j = 0; j < sizeof(edges) / sizeof(edges[0]); j++) {
			int got;

			begin(&r, T0);
			end(&r, T0 + edges[j].ns);
			got = new_bucket(&r, &seen);
			if (got != edges[j].bucket)
				fail_msg("%s: %lld ns: bucket %d, want %d", paths[i].obj,
					 (long long)edges[j].ns, got, edges[j].bucket);
		}
		mt_obj_close(&r.obj);
	}
}

/* A second begin keeps the first start (suspend: takes the latest). */
static void test_second_begin(void **state)
{
	struct bpf_telemetry_accumulator seen = {};
	size_t i;
	struct run r;

	(void)state;
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		int got, want = paths[i].keeps_latest ? 8 : 10;	/* 500 us : 1100 us */

		open_path(&r, &paths[i]);
		memset(&seen, 0, sizeof(seen));
		begin(&r, T0);
		begin(&r, T0 + 600000);
		end(&r, T0 + 1100000);
		got = new_bucket(&r, &seen);
		if (got != want)
			fail_msg("%s: begin, begin +600 us, end +1100 us: bucket %d, want %d",
				 paths[i].obj, got, want);
		/* The end consumed the start: a second end counts nothing. */
		end(&r, T0 + 2048000);
		assert_int_equal(new_bucket(&r, &seen), -1);
		mt_obj_close(&r.obj);
	}
}

/* SAVE_FIRST_START_TIME_AT: the start is the caller's clock, kept first. */
static void test_page_start_at(void **state)
{
	static const struct path at = { "page_direct_reclaim", "on_begin_at",
					"on_end_raw", "page_latency_map", MT_CLOCK_MONO, false };
	struct bpf_telemetry_accumulator seen = {};
	__u64 args[1] = { T0 };
	struct run r;

	(void)state;
	open_path(&r, &at);
	set_clock(&r, 7 * T0);	/* the hash macro must not read the clock */
	assert_int_equal(mt_run(&r.obj, "on_begin_at", args, 1), 0);
	args[0] = T0 + 600000;
	assert_int_equal(mt_run(&r.obj, "on_begin_at", args, 1), 0);
	end(&r, T0 + 1023999);
	assert_int_equal(new_bucket(&r, &seen), 9);
	mt_obj_close(&r.obj);
}

/* The stream keeps nanoseconds: exact duration, threshold and stamp. */
struct slow_records {
	struct {		/* the head of bpfprogs/slowCompaction.c's record */
		__u64 ts_ns;
		__u64 duration_ns;
	} first;
	int n;
};

static int keep_record(void *ctx, void *data, size_t len)
{
	struct slow_records *s = ctx;

	if (len < sizeof(s->first))
		return -1;
	if (!s->n++)
		memcpy(&s->first, data, sizeof(s->first));
	return 0;
}

/* Begin at T0 (and again at second_ns unless 0), end at end_ns: the records. */
static int slow_span(struct run *r, struct ring_buffer *rb, struct slow_records *s,
		     uint64_t second_ns, uint64_t end_ns)
{
	memset(s, 0, sizeof(*s));
	begin(r, T0);
	if (second_ns)
		begin(r, second_ns);
	end(r, end_ns);
	assert_true(ring_buffer__consume(rb) >= 0);
	return s->n;
}

static void test_stream_exact(void **state)
{
	static const struct path p = { "clocked_slowCompaction",
		"on_slow_compaction_begin_raw", "on_slow_compaction_end_raw", NULL,
		MT_CLOCK_MONO, false };
	struct slow_records s;
	struct ring_buffer *rb;
	struct run r;

	(void)state;
	open_path(&r, &p);
	rb = ring_buffer__new(mt_map_fd(&r.obj, "slow_compaction_ringbuf"), keep_record,
			      &s, NULL);
	assert_non_null(rb);
	/* 1 ms is the default threshold: 999,999 ns is not slow. */
	assert_int_equal(slow_span(&r, rb, &s, 0, T0 + 999999), 0);
	assert_int_equal(slow_span(&r, rb, &s, 0, T0 + 1000000), 1);
	assert_int_equal(s.first.duration_ns, 1000000);
	assert_int_equal(s.first.ts_ns, T0 + 1000000);
	assert_int_equal(slow_span(&r, rb, &s, T0 + 600000, T0 + 1500000), 1);
	assert_int_equal(s.first.duration_ns, 1500000);
	ring_buffer__free(rb);
	mt_obj_close(&r.obj);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_second_begin),
		cmocka_unit_test(test_page_start_at),
		cmocka_unit_test(test_stream_exact),
	};

	return KTEST_MAIN("latency_clock", tests, NULL, NULL);
}
