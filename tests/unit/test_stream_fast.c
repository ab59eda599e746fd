// SPDX-License-Identifier: GPL-2.0
/*
 * The stream's per-record fast paths (btfreader/stream_ring.c), without a
 * kernel: decoding every column size and signedness with one 8-byte load,
 * the memcpy of back-to-back 8-byte columns, and consumers reading a ring
 * in place, one overrunning another with its losses counted exactly.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../btfreader/stream.c"
#include "../../btfreader/stream_ring.c"	/* its static fast paths */

struct col {
	const char *name;
	uint32_t offset;
	uint8_t size;
	bool is_signed;
};

/* A stream with only a layout: what the fast paths need of one. */
static struct kstats_stream *fake_stream(const struct col *cols, size_t ncols, uint32_t size,
					 int *ret)
{
	struct kstats_stream *s = calloc(1, sizeof(*s));
	char err[KSTATS_ERR_LEN] = "";
	size_t i;

	assert_non_null(s);
	s->ring_fd = s->lock_fd = s->lock_dir_fd = s->stop_fd = s->sig_fd = -1;
	s->layout.cols = calloc(ncols + 1, sizeof(*s->layout.cols));
	assert_non_null(s->layout.cols);
	s->layout.cols[0] = (struct kstats_column){ .name = "hdr.ts_ns", .size = 8 };
	for (i = 0; i < ncols; i++) {
		snprintf(s->layout.cols[i + 1].name, sizeof(s->layout.cols[i + 1].name), "%s",
			 cols[i].name);
		s->layout.cols[i + 1].offset = cols[i].offset;
		s->layout.cols[i + 1].size = cols[i].size;
		s->layout.cols[i + 1].is_signed = cols[i].is_signed;
	}
	s->layout.ncols = ncols + 1;
	s->layout.size = size;
	*ret = kstats_stream_plan(s, "rec", err, sizeof(err));
	return s;
}

static void put(unsigned char *rec, uint32_t off, uint64_t v, size_t size)
{
	memcpy(rec + off, &v, size);	/* little-endian: the low bytes */
}

static void test_decode_every_size(void **state)
{
	static const struct col cols[] = {
		{ "u8", 8, 1, false }, { "s8", 9, 1, true }, { "u16", 10, 2, false },
		{ "s16", 12, 2, true }, { "u32", 16, 4, false }, { "s32", 20, 4, true },
		{ "u64", 24, 8, false }, { "s64", 32, 8, true },
	};
	static const int64_t want[] = { 0xfe, -2, 0xfffd, -3, 0xfffffffc, -4,
					(int64_t)UINT64_C(0xfffffffffffffffb), -6 };
	unsigned char rec[40];
	int64_t vals[8];
	int ret;
	struct kstats_stream *s = fake_stream(cols, 8, sizeof(rec), &ret);
	size_t i;

	(void)state;
	assert_int_equal(ret, 0);
	/* Every byte set: a value wider than its column would show. */
	memset(rec, 0xff, sizeof(rec));
	for (i = 0; i < 8; i++)
		put(rec, cols[i].offset, (uint64_t)want[i], cols[i].size);
	kstats_stream_decode(s->leaves, s->leaves + s->cols.ncols, rec, vals);
	assert_memory_equal(vals, want, sizeof(want));
	/* Small positive values: no sign where there is none. */
	memset(rec, 0, sizeof(rec));
	for (i = 0; i < 8; i++)
		put(rec, cols[i].offset, 0x7f, cols[i].size);
	kstats_stream_decode(s->leaves, s->leaves + s->cols.ncols, rec, vals);
	for (i = 0; i < 8; i++)
		assert_int_equal(vals[i], 0x7f);
	kstats_stream_close(s);
}

/* Packed, 11 bytes: the loads stay inside the record. */
static void test_decode_packed_tail(void **state)
{
	static const struct col cols[] = { { "b", 8, 1, true }, { "w", 9, 2, false } };
	unsigned char rec[11] = { [8] = 0x80, [9] = 0x34, [10] = 0x12 };
	int64_t vals[2];
	int ret;
	struct kstats_stream *s = fake_stream(cols, 2, sizeof(rec), &ret);

	(void)state;
	assert_int_equal(ret, 0);
	kstats_stream_decode(s->leaves, s->leaves + s->cols.ncols, rec, vals);
	assert_int_equal(vals[0], -128);
	assert_int_equal(vals[1], 0x1234);
	kstats_stream_close(s);
}

static void test_decode_flat(void **state)
{
	static const struct col cols[] = { { "a", 8, 8, false }, { "b", 16, 8, true } };
	static const int64_t want[] = { 42, -42 };
	unsigned char rec[24] = {};
	int64_t vals[2];
	int ret;
	struct kstats_stream *s = fake_stream(cols, 2, sizeof(rec), &ret);

	(void)state;
	assert_int_equal(ret, 0);
	memcpy(rec + 8, want, sizeof(want));
	kstats_stream_decode(s->leaves, s->leaves + s->cols.ncols, rec, vals);
	assert_memory_equal(vals, want, sizeof(want));
	kstats_stream_close(s);
}

static void test_header_overlap_refused(void **state)
{
	static const struct col cols[] = { { "x", 2, 2, false } };
	int ret;
	struct kstats_stream *s = fake_stream(cols, 1, 16, &ret);

	(void)state;
	assert_int_equal(ret, -EINVAL);
	kstats_stream_close(s);
}

struct tally {
	uint64_t n, seq_ok;
};

static void on_record(void *ctx, const struct kstats_stream_record *rec)
{
	struct tally *t = ctx;

	t->seq_ok += rec->seq == t->n && rec->vals[0] == (int64_t)(t->n * 10);
	t->n++;
}

/* A record in the fake ring: its 8-byte header, then len bytes. */
static uint64_t ring_put(unsigned char *data, uint64_t pos, uint32_t len, uint64_t n)
{
	memcpy(data + pos, &len, sizeof(len));
	memset(data + pos + 8, 0, 16);
	memcpy(data + pos + 8 + 8, &n, sizeof(n));
	return pos + ((len & ~BPF_RINGBUF_DISCARD_BIT) + 8 + 7) / 8 * 8;
}

/*
 * Two consumers of one ring read in place, no threads: the one that reads everything
 * overruns the one that read nothing and may trail by 4 records only; that one then loses
 * exactly what it skipped, the kernel's consumer_pos follows the slower one, a discarded
 * record is skipped and one of the wrong size counted.
 */
static void test_read_in_place_and_overrun(void **state)
{
	static const struct col cols[] = { { "n", 8, 8, false } };
	static unsigned char data[2 * 4096];
	uint64_t prod = 0, cons = 0, i;
	struct kstats_consumer_stats st;
	char err[KSTATS_ERR_LEN] = "";
	struct tally fast = {}, slow = {};
	struct cursor at = {}, slow_at = {};
	int ret;
	struct kstats_stream *s = fake_stream(cols, 1, 16, &ret);

	(void)state;
	assert_int_equal(ret, 0);
	s->data = data;
	s->ring_mask = 4096 - 1;
	s->prod_pos = &prod;
	s->cons_pos = &cons;
	assert_int_equal(kstats_stream_add_consumer(s, 1u << 16, on_record, &fast, err,
						    sizeof(err)), 0);
	assert_int_equal(kstats_stream_add_consumer(s, 4, on_record, &slow, err,
						    sizeof(err)), 1);
	for (i = 0; i < 100; i++) {
		prod = ring_put(data, prod, 16, i * 10);
		if (i == 50) {
			prod = ring_put(data, prod, 3, 0);
			prod = ring_put(data, prod, 16 | BPF_RINGBUF_DISCARD_BIT, 0);
		}
	}
	walk(s->consumers[0], &at, prod);
	assert_int_equal(atomic_load(&s->consumers[1]->pos), 0);
	publish(s->consumers[0], &at, true);
	assert_int_equal(fast.n, 100);
	assert_int_equal(fast.seq_ok, 100);
	assert_int_equal(atomic_load(&s->consumers[1]->pos), prod);
	assert_int_equal(cons, prod);
	walk(s->consumers[1], &slow_at, prod);
	publish(s->consumers[1], &slow_at, true);
	assert_int_equal(slow.n, 0);
	assert_int_equal(kstats_stream_consumer_stats(s, 1, &st), 0);
	assert_int_equal(st.dropped, 100);
	assert_int_equal(kstats_stream_consumer_stats(s, 0, &st), 0);
	assert_int_equal(st.handled, 100);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(atomic_load(&s->consumers[0]->malformed), 1);
	s->cons_pos = NULL;
	s->prod_pos = NULL;
	kstats_stream_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_every_size),
		cmocka_unit_test(test_decode_packed_tail),
		cmocka_unit_test(test_decode_flat),
		cmocka_unit_test(test_header_overlap_refused),
		cmocka_unit_test(test_read_in_place_and_overrun),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
