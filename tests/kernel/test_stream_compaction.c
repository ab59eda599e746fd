// SPDX-License-Identifier: GPL-2.0
/*
 * The slow_compaction stream, loaded by the real loader, on real compaction
 * events (echo 1 > /proc/sys/vm/compact_memory).  Other processes compact
 * at the same time, so the assertions keep this process's records only, and
 * a tracefs instance filtered on this pid counts the same events.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <bpf/bpf.h>

#include "kmain.h"
#include "kstats_keys.h"
#include "kstats_pins.h"
#include "kstats_stream.h"
#include "ktest.h"
#include "stream.h"

#define OBJ "slowCompaction"
#define STREAM "slow_compaction"
#define TRIGGERS 3

static struct ktest t;

enum { COL_PID, COL_TID, COL_ORDER, COL_DURATION, COL_STATE, COL_COMM, NR_COLS };
static const char *const col_names[NR_COLS] = {
	"pid", "tid", "order", "duration_ns", "state", "comm[0]",
};

static int setup(void **state)
{
	static const char *const events[] = { "compaction/mm_compaction_end", NULL };
	char path[512], filter[64];

	(void)state;
	if (ktest_init(&t, "stream-compaction") || ktest_run_loader(&t, NULL) ||
	    ktest_trace_start(&t, events))
		return -1;
	snprintf(path, sizeof(path), "%s/events/compaction/mm_compaction_end/filter",
		 t.trace_dir);
	snprintf(filter, sizeof(filter), "common_pid == %d", (int)getpid());
	return ktest_write_file(path, filter);
}

static int teardown(void **state)
{
	(void)state;
	ktest_fini(&t);
	return 0;
}

static void set_threshold_ns(uint64_t ns)
{
	char pin[512];
	__u32 key = 0;
	int fd;

	kstats_pin_path(pin, sizeof(pin), t.pin_dir, "map", OBJ, "slow_compaction_config_map");
	fd = bpf_obj_get(pin);
	assert_true(fd >= 0);
	assert_int_equal(bpf_map_update_elem(fd, &key, &ns, BPF_ANY), 0);
	close(fd);
}

static struct kstats_stream *open_stream(int cols[NR_COLS])
{
	char obj[512], err[KSTATS_ERR_LEN] = "";
	struct kstats_stream_opts o = { .obj_path = obj, .stream = STREAM,
					.pin_dir = t.pin_dir };
	struct kstats_stream *s = NULL;
	int i;

	snprintf(obj, sizeof(obj), "%s/" OBJ ".bpf", t.obj_dir);
	if (kstats_stream_open(&o, &s, err, sizeof(err)))
		fail_msg("open: %s", err);
	for (i = 0; i < NR_COLS; i++) {
		cols[i] = kstream_col(s, col_names[i]);
		assert_true(cols[i] >= 0);
	}
	return s;
}

static void add_own_recorder(struct kstats_stream *s, struct krecorder *r, int pid_col)
{
	char err[KSTATS_ERR_LEN];

	krecorder_init(r, kstats_map_ncols(kstats_stream_columns(s)));
	r->filter_col = pid_col;
	r->filter_val = getpid();
	assert_true(kstats_stream_add_consumer(s, 4096, krecorder_fn, r, err,
					       sizeof(err)) >= 0);
}

/* Triggers compaction; [*t0, *t1] brackets every event it caused. */
static void run_compactions(struct kstats_stream *s, int n, uint64_t *t0, uint64_t *t1)
{
	char err[KSTATS_ERR_LEN];
	int i;

	assert_int_equal(kstats_stream_start(s, err, sizeof(err)), 0);
	*t0 = ktest_now_ns();
	for (i = 0; i < n; i++)
		assert_int_equal(ktest_compact_memory(), 0);
	*t1 = ktest_now_ns();
	assert_int_equal(kstats_stream_stop(s, err, sizeof(err)), 0);
}

static void own_identity(char comm[16], enum kstats_process_state *state)
{
	char buf[32];

	assert_true(ktest_read_file("/proc/self/comm", comm, 16) > 0);
	comm[strcspn(comm, "\n")] = 0;
	assert_true(ktest_read_file("/proc/self/oom_score_adj", buf, sizeof(buf)) > 0);
	*state = kstats_process_state_from_adj(atoi(buf));
}

static void assert_record_fields(const struct krecorder *r, size_t i, const int cols[],
				 uint64_t t0)
{
	enum kstats_process_state state;
	char comm[16];
	size_t c;

	own_identity(comm, &state);
	assert_int_equal(krecorder_val(r, i, cols[COL_TID]), getpid());
	/* compact_memory compacts whole zones: no allocation order. */
	assert_int_equal(krecorder_val(r, i, cols[COL_ORDER]), -1);
	assert_true(krecorder_val(r, i, cols[COL_DURATION]) > 0);
	assert_true((uint64_t)krecorder_val(r, i, cols[COL_DURATION]) <= r->ts[i] - t0);
	assert_int_equal(krecorder_val(r, i, cols[COL_STATE]), state);
	for (c = 0; c <= strlen(comm); c++)
		assert_int_equal(krecorder_val(r, i, cols[COL_COMM] + c), comm[c]);
}

/*
 * Both consumers get the same records of this pid, as many as the tracefs
 * instance counted, in ring order, with strictly increasing timestamps
 * inside the window the triggers ran in.
 */
static void test_events_reach_two_consumers_in_order(void **state)
{
	int cols[NR_COLS];
	struct kstats_stream *s = open_stream(cols);
	struct krecorder r[2];
	uint64_t t0, t1;
	size_t i;

	(void)state;
	set_threshold_ns(1);
	add_own_recorder(s, &r[0], cols[COL_PID]);
	add_own_recorder(s, &r[1], cols[COL_PID]);
	run_compactions(s, TRIGGERS, &t0, &t1);
	assert_true(r[0].n >= TRIGGERS);
	assert_int_equal(r[0].n, ktest_trace_count(&t, "mm_compaction_end", t0, t1));
	assert_int_equal(r[1].n, r[0].n);
	for (i = 0; i < r[0].n; i++) {
		assert_int_equal(r[1].seq[i], r[0].seq[i]);
		assert_int_equal(r[1].ts[i], r[0].ts[i]);
		assert_memory_equal(r[1].vals + i * r[1].ncols, r[0].vals + i * r[0].ncols,
				    r[0].ncols * sizeof(*r[0].vals));
		assert_true(r[0].ts[i] >= t0 && r[0].ts[i] <= t1);
		if (i) {
			assert_true(r[0].ts[i] > r[0].ts[i - 1]);
			assert_true(r[0].seq[i] > r[0].seq[i - 1]);
		}
		assert_record_fields(&r[0], i, cols, t0);
	}
	kstats_stream_close(s);
	krecorder_free(&r[0]);
	krecorder_free(&r[1]);
}

/* Above an hour, no compaction qualifies, though tracefs saw them. */
static void test_threshold_filters_in_kernel(void **state)
{
	int cols[NR_COLS];
	struct kstats_stream *s = open_stream(cols);
	struct krecorder r;
	uint64_t t0, t1;

	(void)state;
	set_threshold_ns(3600ull * 1000000000);
	add_own_recorder(s, &r, cols[COL_PID]);
	run_compactions(s, 2, &t0, &t1);
	assert_true(ktest_trace_count(&t, "mm_compaction_end", t0, t1) >= 2);
	assert_int_equal(r.n, 0);
	kstats_stream_close(s);
	krecorder_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_events_reach_two_consumers_in_order),
		cmocka_unit_test(test_threshold_filters_in_kernel),
	};
	return KTEST_MAIN("stream_compaction", tests, setup, teardown);
}
