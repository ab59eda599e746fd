// SPDX-License-Identifier: GPL-2.0
/*
 * The reader against real pinned maps of tests/bpf/reader_layouts.bpf: each
 * layout is written with bpf_map_update_elem from the same C structs and
 * must read back exactly, by column name, from BTF alone.
 */
#include <errno.h>
#include <stdarg.h>
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

static void read_map(const char *name, struct rtest_read *r)
{
	char pin[512];
	struct kstats_map_opts o = rtest_opts(&fx, name, pin, sizeof(pin));

	if (rtest_read(&o, r))
		fail_msg("%s: %s", name, r->err);
	assert_int_equal(r->m->source, KSTATS_BTF_OBJECT);
}

static void expect_columns(const struct rtest_read *r, const char *const *names,
			   size_t n, size_t nkey)
{
	size_t i;

	assert_int_equal(kstats_map_ncols(r->m), n);
	assert_int_equal(kstats_map_nkey_cols(r->m), nkey);
	for (i = 0; i < n; i++)
		assert_string_equal(kstats_map_column(r->m, i)->name, names[i]);
}

/* u8 and u16 keys around a hole, s32 and u64 values around one, extremes. */
static void test_small_ints(void **state)
{
	static const char *const cols[] = { "a", "b", "s", "u" };
	static const __u8 as[] = { 0, 1, 127, 128, 255 };
	static const __u16 bs[] = { 0, 1, 65535 };
	int fd, i, j, n = 0;
	struct rtest_read r;

	(void)state;
	RTEST_NEED_KERNEL(&fx);
	fd = rtest_map_fd(&fx, "small_map");
	for (i = 0; i < 5; i++)
		for (j = 0; j < 3; j++) {
			struct rd_small_key k;
			struct rd_small_value v;

			memset(&k, 0, sizeof(k));
			memset(&v, 0xaa, sizeof(v));	/* holes hold junk */
			k.a = as[i];
			k.b = bs[j];
			v.s = i == 0 ? INT32_MIN : i == 1 ? INT32_MAX : -(i * 100 + j);
			v.u = j == 2 ? UINT64_MAX : (1ull << 63) + i * 7 + j;
			assert_int_equal(bpf_map_update_elem(fd, &k, &v, BPF_NOEXIST), 0);
			n++;
		}
	read_map("small_map", &r);
	expect_columns(&r, cols, 4, 2);
	assert_int_equal(kstats_map_column(r.m, 0)->size, 1);
	assert_int_equal(kstats_map_column(r.m, 1)->offset, 2);
	assert_true(kstats_map_column(r.m, 2)->is_signed);
	assert_int_equal(kstats_map_column(r.m, 3)->offset, 8);
	assert_int_equal(r.nrows, n);
	for (i = 0; i < 5; i++)
		for (j = 0; j < 3; j++) {
			int64_t key[2] = { as[i], bs[j] };
			const int64_t *row = rtest_find_row(&r, key, 2);
			int64_t s = i == 0 ? INT32_MIN : i == 1 ? INT32_MAX : -(i * 100 + j);
			uint64_t u = j == 2 ? UINT64_MAX : (1ull << 63) + i * 7 + j;

			assert_non_null(row);
			assert_int_equal(row[2], s);
			assert_int_equal((uint64_t)row[3], u);
		}
	rtest_read_free(&r);
}

static void test_enum_bool_char(void **state)
{
	static const char *const cols[] = { "key", "on", "tag", "last", "delta" };
	static const enum rd_color keys[] = { RD_COLOR_NEG, RD_COLOR_RED, RD_COLOR_GREEN,
					      RD_COLOR_BLUE };
	const struct kstats_column *kc, *lc;
	struct rtest_read r;
	int fd, i;

	(void)state;
	RTEST_NEED_KERNEL(&fx);
	fd = rtest_map_fd(&fx, "flags_map");
	for (i = 0; i < 4; i++) {
		struct rd_flags_value v;

		memset(&v, 0xaa, sizeof(v));
		v.on = i % 2;
		v.tag = i == 0 ? (char)-56 : 'w' + i;
		v.last = keys[3 - i];
		v.delta = i == 0 ? -128 : 127 - i;
		assert_int_equal(bpf_map_update_elem(fd, &keys[i], &v, BPF_NOEXIST), 0);
	}
	read_map("flags_map", &r);
	expect_columns(&r, cols, 5, 1);
	kc = kstats_map_column(r.m, 0);
	lc = kstats_map_column(r.m, 3);
	assert_int_equal(kc->kind, KSTATS_LEAF_ENUM);
	assert_true(kc->is_signed);	/* RD_COLOR_NEG < 0 */
	assert_int_equal(kstats_map_column(r.m, 1)->kind, KSTATS_LEAF_BOOL);
	assert_int_equal(kstats_map_column(r.m, 2)->kind, KSTATS_LEAF_CHAR);
	assert_int_equal(kstats_map_column(r.m, 4)->kind, KSTATS_LEAF_INT);
	assert_int_equal(r.nrows, 4);
	for (i = 0; i < 4; i++) {
		int64_t key = keys[i];
		const int64_t *row = rtest_find_row(&r, &key, 1);

		assert_non_null(row);
		assert_int_equal(row[1], i % 2);
		assert_int_equal(row[2], i == 0 ? -56 : 'w' + i);
		assert_int_equal(row[3], keys[3 - i]);
		assert_int_equal(row[4], i == 0 ? -128 : 127 - i);
	}
	assert_string_equal(kstats_column_enum_name(r.m, kc, RD_COLOR_NEG), "RD_COLOR_NEG");
	assert_string_equal(kstats_column_enum_name(r.m, lc, RD_COLOR_BLUE), "RD_COLOR_BLUE");
	assert_null(kstats_column_enum_name(r.m, lc, 5));
	assert_null(kstats_column_enum_name(r.m, kstats_map_column(r.m, 4), 1));
	rtest_read_free(&r);
}

static void test_char_arrays(void **state)
{
	static const char *const names[] = { "compaction", "0123456789abcdef", "" };
	struct rtest_read r;
	char col[32];
	int fd, c;
	__u32 i;

	(void)state;
	RTEST_NEED_KERNEL(&fx);
	fd = rtest_map_fd(&fx, "name_map");
	for (i = 0; i < 3; i++) {
		struct rd_name_value v;

		memset(&v, 0, sizeof(v));
		memcpy(v.name, names[i], strlen(names[i]));	/* the 16-char one has no NUL */
		v.len = strlen(names[i]);
		assert_int_equal(bpf_map_update_elem(fd, &i, &v, BPF_NOEXIST), 0);
	}
	read_map("name_map", &r);
	assert_int_equal(kstats_map_ncols(r.m), 1 + RD_NAME_LEN + 1);
	for (c = 0; c < RD_NAME_LEN; c++) {
		snprintf(col, sizeof(col), "name[%d]", c);
		assert_string_equal(kstats_map_column(r.m, 1 + c)->name, col);
		assert_int_equal(kstats_map_column(r.m, 1 + c)->kind, KSTATS_LEAF_CHAR);
		assert_int_equal(kstats_map_column(r.m, 1 + c)->offset, c);
	}
	assert_int_equal(r.nrows, 3);
	for (i = 0; i < 3; i++) {
		int64_t key = i;
		const int64_t *row = rtest_find_row(&r, &key, 1);

		assert_non_null(row);
		for (c = 0; c < RD_NAME_LEN; c++)
			assert_int_equal(row[1 + c],
					 c < (int)strlen(names[i]) ? names[i][c] : 0);
		assert_int_equal(rtest_get(&r, row, "len"), strlen(names[i]));
	}
	rtest_read_free(&r);
}

static void test_nested_structs_and_arrays_of_structs(void **state)
{
	static const char *const cols[] = {
		"where.cpu", "where.node", "id",
		"pairs[0].kind", "pairs[0].count", "pairs[1].kind", "pairs[1].count",
		"pairs[2].kind", "pairs[2].count", "total.sum", "total.n",
		"grid[0][0]", "grid[0][1]", "grid[0][2]",
		"grid[1][0]", "grid[1][1]", "grid[1][2]",
	};
	struct rtest_read r;
	int fd, i, p, g;

	(void)state;
	RTEST_NEED_KERNEL(&fx);
	fd = rtest_map_fd(&fx, "nested_map");
	for (i = 0; i < 5; i++) {
		struct rd_nested_key k = { .where = { i, 100 + i }, .id = 1000u * i };
		struct rd_nested_value v;

		memset(&v, 0xaa, sizeof(v));
		for (p = 0; p < 3; p++) {
			v.pairs[p].kind = 10 * i + p;
			v.pairs[p].count = 0xf0000000u + 100 * i + p;
		}
		v.total.sum = 1ull << (40 + i);
		v.total.n = i;
		for (g = 0; g < 6; g++)
			v.grid[g / 3][g % 3] = 60000 + 10 * i + g;
		assert_int_equal(bpf_map_update_elem(fd, &k, &v, BPF_NOEXIST), 0);
	}
	read_map("nested_map", &r);
	expect_columns(&r, cols, sizeof(cols) / sizeof(cols[0]), 3);
	assert_int_equal(r.nrows, 5);
	for (i = 0; i < 5; i++) {
		int64_t key[3] = { i, 100 + i, 1000 * i };
		const int64_t *row = rtest_find_row(&r, key, 3);

		assert_non_null(row);
		for (p = 0; p < 3; p++) {
			assert_int_equal(row[3 + 2 * p], 10 * i + p);
			assert_int_equal(row[4 + 2 * p], 0xf0000000u + 100 * i + p);
		}
		assert_int_equal(row[9], 1ll << (40 + i));
		assert_int_equal(row[10], i);
		for (g = 0; g < 6; g++)
			assert_int_equal(row[11 + g], 60000 + 10 * i + g);
	}
	rtest_read_free(&r);
}

/* An array map: every index is a row, holes never become columns. */
static void test_padding_holes(void **state)
{
	static const char *const cols[] = { "key", "a", "b", "c", "d", "e" };
	static const uint32_t offs[] = { 0, 0, 8, 16, 20, 24 };
	struct rtest_read r;
	__u32 i;
	int fd;

	(void)state;
	RTEST_NEED_KERNEL(&fx);
	fd = rtest_map_fd(&fx, "holes_map");
	for (i = 0; i < RD_ARRAY_ENTRIES; i += 3) {
		struct rd_holes_value v;

		memset(&v, 0xff, sizeof(v));
		v.a = i;
		v.b = 0x0102030405060708ull * i;
		v.c = 0xfff0 + i;
		v.d = 0xdead0000u + i;
		v.e = 200 + i;
		assert_int_equal(bpf_map_update_elem(fd, &i, &v, BPF_ANY), 0);
	}
	read_map("holes_map", &r);
	expect_columns(&r, cols, 6, 1);
	for (i = 0; i < 6; i++)
		assert_int_equal(kstats_map_column(r.m, i)->offset, offs[i]);
	assert_int_equal(r.nrows, RD_ARRAY_ENTRIES);
	for (i = 0; i < RD_ARRAY_ENTRIES; i++) {
		const int64_t *row = r.rows + i * r.ncols;
		bool set = i % 3 == 0;

		assert_int_equal(row[0], i);	/* arrays read in index order */
		assert_int_equal(row[1], set ? i : 0);
		assert_int_equal((uint64_t)row[2], set ? 0x0102030405060708ull * i : 0);
		assert_int_equal(row[3], set ? 0xfff0 + i : 0);
		assert_int_equal(row[4], set ? 0xdead0000u + i : 0);
		assert_int_equal(row[5], set ? 200 + i : 0);
	}
	assert_int_equal(r.m->syscalls, 1);
	rtest_read_free(&r);
}

/* Opens pin_map's pin as map of obj_file. */
static void expect_open_error(const char *obj_file, const char *map, const char *pin_map,
			      int errnum, const char *why)
{
	char pin[512];
	struct kstats_map_opts o = rtest_opts(&fx, pin_map, pin, sizeof(pin));

	o.obj_path = obj_file;
	o.map_name = map;
	rtest_expect_open_error(&o, errnum, why);
}

static void test_rejections(void **state)
{
	(void)state;
	RTEST_NEED_KERNEL(&fx);
	expect_open_error(fx.obj_path, "union_map", "union_map", EOPNOTSUPP, "v: union");
	expect_open_error(NULL, NULL, "union_map", EOPNOTSUPP, "v: union");
	expect_open_error(fx.obj_path, "bits_map", "bits_map", EOPNOTSUPP, "lo: bitfield");
	expect_open_error(fx.obj_path, "ring_map", "ring_map", EOPNOTSUPP, "ringbuf");
	expect_open_error(fx.obj_path, "no_such_map", "small_map", ESRCH,
			  "no map named no_such_map");
	expect_open_error(fx.obj_path, "small_map", "not_pinned", ENOENT, "no map is pinned");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_ints),
		cmocka_unit_test(test_enum_bool_char),
		cmocka_unit_test(test_char_arrays),
		cmocka_unit_test(test_nested_structs_and_arrays_of_structs),
		cmocka_unit_test(test_padding_holes),
		cmocka_unit_test(test_rejections),
	};

	return RTEST_MAIN("reader_layouts", tests, &fx, "layouts");
}
