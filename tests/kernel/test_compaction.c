// SPDX-License-Identifier: GPL-2.0
/*
 * CompactionDuration against the running kernel: real compaction events,
 * counted independently through a tracefs instance on the same tracepoint.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf_telemetry.h"
#include "kstats_pins.h"
#include "kmain.h"
#include "ktest.h"

#define OBJ "compaction"
#define MAP "compaction_duration_map"
#define TRIGGERS 3

static struct ktest t;

static int setup(void **state)
{
	static const char *const events[] = { "compaction/mm_compaction_end", NULL };

	if (ktest_loader_up(state, &t, "compaction"))
		return -1;
	return ktest_trace_start(&t, events);
}

/*
 * Histogram growth over N triggers equals the tracefs count of ends between
 * the two reads.  A read that overlaps an end is ambiguous: retry.
 */
static void test_counts_match_tracefs(void **state)
{
	uint64_t a0, a1, b0, b1, before, after;
	long ends, overlap;
	int attempt, i;

	(void)state;
	for (attempt = 0; attempt < 5; attempt++) {
		a0 = ktest_now_ns();
		assert_int_equal(ktest_hist_total(&t, OBJ, MAP, &before), 0);
		a1 = ktest_now_ns();
		for (i = 0; i < TRIGGERS; i++)
			assert_int_equal(ktest_compact_memory(), 0);
		b0 = ktest_now_ns();
		assert_int_equal(ktest_hist_total(&t, OBJ, MAP, &after), 0);
		b1 = ktest_now_ns();
		overlap = ktest_trace_count(&t, "mm_compaction_end", a0, a1) +
			  ktest_trace_count(&t, "mm_compaction_end", b0, b1);
		if (!overlap)
			break;
	}
	assert_int_equal(overlap, 0);
	ends = ktest_trace_count(&t, "mm_compaction_end", a1, b0);
	assert_true(ends >= TRIGGERS);
	assert_int_equal(after - before, (uint64_t)ends);
}

/* The loader has exited (ktest_run_loader waited): the pinned links count. */
static void test_counts_after_loader_exit(void **state)
{
	char link[512];
	uint64_t before, after;
	struct stat st;

	(void)state;
	kstats_pin_path(link, sizeof(link), t.pin_dir, "link", OBJ, "on_compaction_end");
	assert_int_equal(stat(link, &st), 0);
	assert_int_equal(ktest_hist_total(&t, OBJ, MAP, &before), 0);
	assert_int_equal(ktest_compact_memory(), 0);
	assert_int_equal(ktest_hist_total(&t, OBJ, MAP, &after), 0);
	assert_true(after > before);
}

/* DESIGN.md's bucket(v), written another way than bpf_telemetry_bucket(). */
static __u32 design_bucket(__u64 v)
{
	__u32 log2 = v > 1 ? 63 - __builtin_clzll(v) : 0;

	return log2 < 31 ? log2 : 31;
}

/* The BPF-compiled bucket function gives DESIGN.md's buckets. */
static void test_bucket_in_kernel(void **state)
{
	char path[512];
	struct bpf_object *obj;
	int prog_fd, map_fd, i, edge;
	__u32 key = 0, got;

	(void)state;
	snprintf(path, sizeof(path), "%s/tests/bpf/bucket_probe.bpf", t.build);
	obj = bpf_object__open_file(path, NULL);
	assert_non_null(obj);
	assert_int_equal(bpf_object__load(obj), 0);
	prog_fd = bpf_program__fd(bpf_object__find_program_by_name(obj, "bucket_probe"));
	map_fd = bpf_map__fd(bpf_object__find_map_by_name(obj, "bucket_out"));
	for (i = 0; i < 64; i++) {
		for (edge = -1; edge <= 1; edge++) {
			__u64 v = (1ull << i) + edge;
			LIBBPF_OPTS(bpf_test_run_opts, run, .ctx_in = &v,
				    .ctx_size_in = sizeof(v));

			assert_int_equal(bpf_prog_test_run_opts(prog_fd, &run), 0);
			assert_int_equal(bpf_map_lookup_elem(map_fd, &key, &got), 0);
			assert_int_equal(got, design_bucket(v));
		}
	}
	bpf_object__close(obj);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_match_tracefs),
		cmocka_unit_test(test_counts_after_loader_exit),
		cmocka_unit_test(test_bucket_in_kernel),
	};

	return KTEST_MAIN("compaction", tests, setup, ktest_teardown);
}
