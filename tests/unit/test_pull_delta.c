// SPDX-License-Identifier: GPL-2.0
/*
 * kstats pull's pure parts: bucket deltas (u64 anomalies, u32 wrap, splits
 * above INT32_MAX) and the state file's encoding and corruption checks
 * (test_pull_schema.c checks the objects against the atom schema), and
 * kstats dump --interval's deltas, which are the pull's.
 * No kernel needed: tests/kernel/test_pull.c drives the same code on real maps.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hist.h"
#include "pull.h"

/* Emits every atom of one key; returns how many, sums into total. */
/* A key of a map's state, found as kstats pull finds it. */
static const struct pull_key *find_key(const struct pull_map_state *ms, const int64_t *key)
{
	return keyed_find(ms->keys, ms->nkeys, sizeof(*ms->keys), ms->nkey_cols, key);
}

static unsigned int drain(struct delta_key *dk, uint64_t *total)
{
	int32_t buckets[PULL_NR_BUCKETS];
	unsigned int n = 0;
	int i;

	while (delta_next_atom(dk, buckets)) {
		for (i = 0; i < PULL_NR_BUCKETS; i++) {
			assert_true(buckets[i] >= 0);
			total[i] += (uint64_t)buckets[i];
		}
		n++;
	}
	return n;
}

static void test_u64_delta(void **state)
{
	uint64_t cur[PULL_NR_BUCKETS] = { 5, 0, 7 }, base[PULL_NR_BUCKETS] = { 2, 0, 7 };
	uint64_t total[PULL_NR_BUCKETS] = { 0 }, next[PULL_NR_BUCKETS];
	struct delta_key dk;

	(void)state;
	delta_begin(&dk, cur, base, 8);
	assert_int_equal(drain(&dk, total), 1);
	assert_int_equal(total[0], 3);
	assert_int_equal(total[2], 0);
	assert_int_equal(dk.anomalies, 0);
	delta_new_base(&dk, cur, 8, next);
	assert_memory_equal(next, cur, sizeof(cur));
}

static void test_no_change_no_atom(void **state)
{
	uint64_t cur[PULL_NR_BUCKETS] = { 5, 1 }, total[PULL_NR_BUCKETS] = { 0 };
	struct delta_key dk;

	(void)state;
	delta_begin(&dk, cur, cur, 8);
	assert_int_equal(drain(&dk, total), 0);
	delta_begin(&dk, (uint64_t[PULL_NR_BUCKETS]){ 0 }, NULL, 8);
	assert_int_equal(drain(&dk, total), 0);
}

/* A u64 bucket going backwards: counted, re-based, never negative. */
static void test_u64_backwards_is_anomaly(void **state)
{
	uint64_t cur[PULL_NR_BUCKETS] = { 3, 10 }, base[PULL_NR_BUCKETS] = { 9, 4 };
	uint64_t total[PULL_NR_BUCKETS] = { 0 }, next[PULL_NR_BUCKETS];
	struct delta_key dk;

	(void)state;
	delta_begin(&dk, cur, base, 8);
	assert_int_equal(dk.anomalies, 1);
	assert_int_equal(drain(&dk, total), 1);
	assert_int_equal(total[0], 0);
	assert_int_equal(total[1], 6);
	delta_new_base(&dk, cur, 8, next);
	assert_memory_equal(next, cur, sizeof(cur));
}

/* Only an anomaly: one all-zero atom still carries it. */
static void test_anomaly_alone_emits_once(void **state)
{
	uint64_t cur[PULL_NR_BUCKETS] = { 1 }, base[PULL_NR_BUCKETS] = { 2 };
	uint64_t total[PULL_NR_BUCKETS] = { 0 };
	struct delta_key dk;

	(void)state;
	delta_begin(&dk, cur, base, 8);
	assert_int_equal(drain(&dk, total), 1);
	assert_int_equal(total[0], 0);
}

/* u32 counters wrap: the delta is modular, not an anomaly. */
static void test_u32_wrap(void **state)
{
	uint64_t cur[PULL_NR_BUCKETS] = { 0x10, 5 },
		 base[PULL_NR_BUCKETS] = { 0xfffffff0u, 5 };
	uint64_t total[PULL_NR_BUCKETS] = { 0 }, next[PULL_NR_BUCKETS];
	struct delta_key dk;

	(void)state;
	delta_begin(&dk, cur, base, 4);
	assert_int_equal(dk.anomalies, 0);
	assert_int_equal(drain(&dk, total), 1);
	assert_int_equal(total[0], 0x20);
	assert_int_equal(total[1], 0);
	delta_new_base(&dk, cur, 4, next);
	assert_memory_equal(next, cur, sizeof(cur));
}

/* Above INT32_MAX a delta is split over atoms; nothing is clamped. */
static void test_split_above_int32(void **state)
{
	uint64_t big = 3ull * INT32_MAX + 5;
	uint64_t cur[PULL_NR_BUCKETS] = { big, 1 }, total[PULL_NR_BUCKETS] = { 0 };
	uint64_t next[PULL_NR_BUCKETS];
	struct delta_key dk;

	(void)state;
	delta_begin(&dk, cur, NULL, 8);
	assert_int_equal(drain(&dk, total), 4);
	assert_int_equal(total[0], big);
	assert_int_equal(total[1], 1);
	delta_new_base(&dk, cur, 8, next);
	assert_memory_equal(next, cur, sizeof(cur));
}

/* Beyond PULL_MAX_SPLIT atoms the rest stays in the baseline for next time. */
static void test_split_cap_carries_over(void **state)
{
	uint64_t big = (PULL_MAX_SPLIT + 2ull) * INT32_MAX;
	uint64_t cur[PULL_NR_BUCKETS] = { big }, total[PULL_NR_BUCKETS] = { 0 };
	uint64_t base[PULL_NR_BUCKETS];
	struct delta_key dk;

	(void)state;
	delta_begin(&dk, cur, NULL, 8);
	assert_int_equal(drain(&dk, total), PULL_MAX_SPLIT);
	delta_new_base(&dk, cur, 8, base);
	assert_int_equal(base[0], total[0]);
	delta_begin(&dk, cur, base, 8);
	assert_int_equal(drain(&dk, total), 2);
	assert_int_equal(total[0], big);
}

/* One loaded histogram of one series, map 7, counters of width bytes. */
static void one_series(struct kstats_snapshot *s, struct kstats_hist *h,
		       struct kstats_series *sr, const uint64_t *buckets, unsigned int width)
{
	memset(s, 0, sizeof(*s));
	memset(h, 0, sizeof(*h));
	memset(sr, 0, sizeof(*sr));
	memcpy(sr->buckets, buckets, sizeof(sr->buckets));
	snprintf(h->metric, sizeof(h->metric), "TestLatency");
	h->loaded = h->selected = true;
	h->hm.map_id = 7;
	h->hm.width = width;
	h->series = sr;
	h->nseries = 1;
	s->hists = h;
	s->nhists = 1;
}

/* What dump --interval shows for prev -> cur: the pull's delta, bucket by bucket. */
static void assert_dump_shows_pull_delta(const uint64_t *prev, const uint64_t *cur,
					 unsigned int width, const uint64_t *want)
{
	struct kstats_snapshot sp, sc;
	struct kstats_hist hp, hc;
	struct kstats_series p, c;
	struct delta_key dk;

	one_series(&sp, &hp, &p, prev, width);
	one_series(&sc, &hc, &c, cur, width);
	kstats_snapshot_subtract(&sc, &sp);
	assert_true(sc.is_delta);
	assert_memory_equal(c.buckets, want, sizeof(c.buckets));
	delta_begin(&dk, cur, prev, width);
	assert_memory_equal(c.buckets, dk.pending, sizeof(c.buckets));
}

/*
 * Where dump --interval and the pull disagreed (issue 28): one bucket of a
 * key drops while the others grow.  dump reset the whole series (showed
 * every cumulative count); the pull counts that one bucket as an anomaly
 * and keeps the others' deltas.  Both now show the pull's per-bucket rule.
 */
static void test_dump_interval_is_pull_delta(void **state)
{
	uint64_t prev[PULL_NR_BUCKETS] = { 9, 4, 100 }, cur[PULL_NR_BUCKETS] = { 3, 10, 101 };
	uint64_t want[PULL_NR_BUCKETS] = { 0, 6, 1 };
	uint64_t wprev[PULL_NR_BUCKETS] = { 0xfffffff0u, 5 }, wcur[PULL_NR_BUCKETS] = { 0x10, 7 };
	uint64_t wwant[PULL_NR_BUCKETS] = { 0x20, 2 };

	(void)state;
	assert_dump_shows_pull_delta(prev, cur, 8, want);
	/* u32 counters wrap: modular, not a reset. */
	assert_dump_shows_pull_delta(wprev, wcur, 4, wwant);
}

static void sample_state(struct pull_state *st)
{
	struct pull_map_state ms = { .obj = "compaction", .map = "m", .map_id = 42,
				     .start_boot_ns = 7, .start_real_ns = UINT64_MAX - 1,
				     .nkey_cols = 1, .nkeys = 2 };

	memset(st, 0, sizeof(*st));
	st->pull_id = 9;
	strcpy(st->boot_id, "boot");
	ms.keys = calloc(2, sizeof(*ms.keys));
	assert_non_null(ms.keys);
	ms.keys[0].key[0] = 5;
	ms.keys[0].base[31] = UINT64_MAX;
	ms.keys[1].key[0] = -1;
	ms.keys[1].base[0] = 3;
	assert_int_equal(state_add_map(st, &ms), 0);	/* sorts the keys */
}

#define S 1000000000ull

/* A stepped wall clock keeps the boot-time length, the step recorded. */
static void test_window_clock_steps(void **state)
{
	/* Set back 2 h during a minute: end - start was -7140 s. */
	struct window w = { .start_boot = 100 * S, .end_boot = 160 * S,
			    .start_real = 1700007200 * S, .end_real = 1700007200 * S + 60 * S - 7200 * S };

	(void)state;
	window_settle(&w);
	assert_true(w.end_real >= w.start_real);
	assert_int_equal(w.end_real - w.start_real, 60 * S);
	assert_int_equal(w.clock_step, -(int64_t)(7200 * S));
	/* 8 days forward. */
	w = (struct window){ .start_boot = 100 * S, .end_boot = 160 * S,
			     .start_real = 1000 * S, .end_real = 1060 * S + 8 * 86400 * S };
	window_settle(&w);
	assert_int_equal(w.end_real - w.start_real, 60 * S);
	assert_int_equal(w.clock_step, (int64_t)(8 * 86400 * S));
	/* NTP slewing (0.05% of a day) is no step; 0.5 s within a minute neither. */
	assert_int_equal(window_clock_step(0, 86400 * S, 0, 86400 * S + 43 * S), 0);
	assert_int_equal(window_clock_step(0, 60 * S, 5 * S, 65 * S + S / 2), 0);
	assert_int_equal(window_clock_step(0, 60 * S, 5 * S, 67 * S), (int64_t)(2 * S));
	/* Boot time never goes back: a window of length 0, no 2^64 ns. */
	w = (struct window){ .start_boot = 5 * S, .end_boot = 5 * S - 500000,
			     .start_real = 10 * S, .end_real = 10 * S };
	window_settle(&w);
	assert_int_equal(w.start_boot, w.end_boot);
	assert_int_equal(w.clock_step, 0);
}

static void test_state_round_trip(void **state)
{
	struct pull_state st, back;
	const struct pull_map_state *ms;
	const struct pull_key *k;
	char *buf, err[256];
	size_t len;

	(void)state;
	sample_state(&st);
	assert_int_equal(state_encode(&st, &buf, &len), 0);
	assert_int_equal(state_decode(buf, len, &back, err, sizeof(err)), 0);
	assert_int_equal(back.pull_id, 9);
	assert_string_equal(back.boot_id, "boot");
	ms = state_find_map(&back, "compaction", "m");
	assert_non_null(ms);
	assert_int_equal(ms->map_id, 42);
	assert_int_equal(ms->start_real_ns, UINT64_MAX - 1);
	k = find_key(ms, (int64_t[]){ 5 });
	assert_non_null(k);
	assert_int_equal(k->base[31], UINT64_MAX);
	k = find_key(ms, (int64_t[]){ -1 });
	assert_non_null(k);
	assert_int_equal(k->base[0], 3);
	assert_null(find_key(ms, (int64_t[]){ 6 }));
	free(buf);
	state_free(&st);
	state_free(&back);
}

/* Every byte flip, and every truncation, is caught. */
static void test_state_corruption_detected(void **state)
{
	struct pull_state st, back;
	char *buf, err[256];
	size_t len, i;

	(void)state;
	sample_state(&st);
	assert_int_equal(state_encode(&st, &buf, &len), 0);
	for (i = 0; i < len; i++) {
		buf[i] ^= 0x20;
		assert_int_equal(state_decode(buf, len, &back, err, sizeof(err)), -EBADMSG);
		buf[i] ^= 0x20;
	}
	for (i = 0; i < len; i++)
		assert_int_equal(state_decode(buf, i, &back, err, sizeof(err)), -EBADMSG);
	assert_int_equal(state_decode(buf, len, &back, err, sizeof(err)), 0);
	state_free(&back);
	free(buf);
	state_free(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_u64_delta),
		cmocka_unit_test(test_no_change_no_atom),
		cmocka_unit_test(test_u64_backwards_is_anomaly),
		cmocka_unit_test(test_anomaly_alone_emits_once),
		cmocka_unit_test(test_u32_wrap),
		cmocka_unit_test(test_split_above_int32),
		cmocka_unit_test(test_split_cap_carries_over),
		cmocka_unit_test(test_dump_interval_is_pull_delta),
		cmocka_unit_test(test_window_clock_steps),
		cmocka_unit_test(test_state_round_trip),
		cmocka_unit_test(test_state_corruption_detected),
	};

	return cmocka_run_group_tests_name("pull_delta", tests, NULL, NULL);
}
