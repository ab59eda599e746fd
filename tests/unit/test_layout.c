// SPDX-License-Identifier: GPL-2.0
/*
 * kstats_layout_build on BTF built in memory with libbpf's btf__add_*: every
 * leaf kind, every way to reach one, and every rejection.  No kernel needed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <bpf/btf.h>

#include "kstats_reader.h"

struct fixture {
	struct btf *btf;
	struct kstats_layout l;
	char err[KSTATS_ERR_LEN];
};

static int setup(void **state)
{
	static struct fixture f;

	memset(&f, 0, sizeof(f));
	f.btf = btf__new_empty();
	*state = &f;
	return f.btf ? 0 : -1;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	kstats_layout_free(&f->l);
	btf__free(f->btf);
	return 0;
}

static int build(struct fixture *f, int id)
{
	assert_true(id > 0);
	f->err[0] = 0;
	return kstats_layout_build(f->btf, id, "value", false, &f->l, f->err,
				   sizeof(f->err));
}

static void expect_col(const struct fixture *f, size_t i, const char *name,
		       uint32_t off, uint8_t size, bool is_signed,
		       enum kstats_leaf_kind kind)
{
	const struct kstats_column *c;

	assert_true(i < f->l.ncols);
	c = &f->l.cols[i];
	assert_string_equal(c->name, name);
	assert_int_equal(c->offset, off);
	assert_int_equal(c->size, size);
	assert_int_equal(c->is_signed, is_signed);
	assert_int_equal(c->kind, kind);
	assert_false(c->in_key);
}

static void expect_reject(struct fixture *f, int id, int errnum, const char *why)
{
	assert_int_equal(build(f, id), -errnum);
	if (!strstr(f->err, why))
		fail_msg("error \"%s\" lacks \"%s\"", f->err, why);
	assert_int_equal(f->l.ncols, 0);
	assert_null(f->l.cols);
}

static void test_ints_of_every_width(void **state)
{
	static const struct { const char *name; int size; bool sign; } ints[] = {
		{ "u8", 1, false }, { "s8", 1, true }, { "u16", 2, false },
		{ "s16", 2, true }, { "u32", 4, false }, { "s32", 4, true },
		{ "u64", 8, false }, { "s64", 8, true },
	};
	struct fixture *f = *state;
	int ids[8], s, i, off = 0;

	for (i = 0; i < 8; i++)
		ids[i] = btf__add_int(f->btf, ints[i].name, ints[i].size,
				      ints[i].sign ? BTF_INT_SIGNED : 0);
	s = btf__add_struct(f->btf, "ints", 32);
	for (i = 0; i < 8; i++) {
		off = (off + ints[i].size - 1) / ints[i].size * ints[i].size;
		assert_int_equal(btf__add_field(f->btf, ints[i].name, ids[i], off * 8, 0), 0);
		off += ints[i].size;
	}
	assert_int_equal(build(f, s), 0);
	assert_int_equal(f->l.size, 32);
	assert_int_equal(f->l.ncols, 8);
	for (i = 0, off = 0; i < 8; i++) {
		off = (off + ints[i].size - 1) / ints[i].size * ints[i].size;
		expect_col(f, i, ints[i].name, off, ints[i].size, ints[i].sign,
			   KSTATS_LEAF_INT);
		off += ints[i].size;
	}
}

static void test_bool_and_chars(void **state)
{
	struct fixture *f = *state;
	int b = btf__add_int(f->btf, "_Bool", 1, BTF_INT_BOOL);
	int c = btf__add_int(f->btf, "char", 1, BTF_INT_SIGNED);
	int sc = btf__add_int(f->btf, "signed char", 1, BTF_INT_SIGNED);
	int uc = btf__add_int(f->btf, "unsigned char", 1, 0);
	int cc = btf__add_int(f->btf, "my_char", 1, BTF_INT_CHAR);
	int s = btf__add_struct(f->btf, "flags", 5);

	btf__add_field(f->btf, "b", b, 0, 0);
	btf__add_field(f->btf, "c", c, 8, 0);
	btf__add_field(f->btf, "sc", sc, 16, 0);
	btf__add_field(f->btf, "uc", uc, 24, 0);
	btf__add_field(f->btf, "cc", cc, 32, 0);
	assert_int_equal(build(f, s), 0);
	assert_int_equal(f->l.ncols, 5);
	expect_col(f, 0, "b", 0, 1, false, KSTATS_LEAF_BOOL);
	expect_col(f, 1, "c", 1, 1, true, KSTATS_LEAF_CHAR);
	expect_col(f, 2, "sc", 2, 1, true, KSTATS_LEAF_INT);
	expect_col(f, 3, "uc", 3, 1, false, KSTATS_LEAF_INT);
	expect_col(f, 4, "cc", 4, 1, false, KSTATS_LEAF_CHAR);
}

static void test_enums(void **state)
{
	struct fixture *f = *state;
	int e8 = btf__add_enum(f->btf, "small", 1);
	int e16, e32, es, e64u, e64s, s;

	btf__add_enum_value(f->btf, "S_A", 200);
	e16 = btf__add_enum(f->btf, "mid", 2);
	btf__add_enum_value(f->btf, "M_A", 60000);
	e32 = btf__add_enum(f->btf, "word", 4);
	btf__add_enum_value(f->btf, "W_A", 0x80000000ll);
	es = btf__add_enum(f->btf, "neg", 4);
	btf__add_enum_value(f->btf, "N_A", -5);
	e64u = btf__add_enum64(f->btf, "big", 8, false);
	btf__add_enum64_value(f->btf, "B_A", 1ull << 63);
	e64s = btf__add_enum64(f->btf, "bigneg", 8, true);
	btf__add_enum64_value(f->btf, "BN_A", (uint64_t)-7ll);
	s = btf__add_struct(f->btf, "enums", 32);
	btf__add_field(f->btf, "e8", e8, 0, 0);
	btf__add_field(f->btf, "e16", e16, 16, 0);
	btf__add_field(f->btf, "e32", e32, 32, 0);
	btf__add_field(f->btf, "es", es, 64, 0);
	btf__add_field(f->btf, "e64u", e64u, 128, 0);
	btf__add_field(f->btf, "e64s", e64s, 192, 0);
	assert_int_equal(build(f, s), 0);
	assert_int_equal(f->l.ncols, 6);
	expect_col(f, 0, "e8", 0, 1, false, KSTATS_LEAF_ENUM);
	expect_col(f, 1, "e16", 2, 2, false, KSTATS_LEAF_ENUM);
	expect_col(f, 2, "e32", 4, 4, false, KSTATS_LEAF_ENUM);
	expect_col(f, 3, "es", 8, 4, true, KSTATS_LEAF_ENUM);
	expect_col(f, 4, "e64u", 16, 8, false, KSTATS_LEAF_ENUM);
	expect_col(f, 5, "e64s", 24, 8, true, KSTATS_LEAF_ENUM);
	assert_int_equal(f->l.cols[3].type_id, es);
}

/* clang < 15 never sets the enum sign flag: a negative constant means signed. */
static void test_enum_sign_from_old_producer(void **state)
{
	struct fixture *f = *state;
	int e = btf__add_enum(f->btf, "neg", 4);
	struct btf_type *t;

	btf__add_enum_value(f->btf, "N_A", -1);
	btf__add_enum_value(f->btf, "N_B", 2);
	t = (struct btf_type *)btf__type_by_id(f->btf, e);
	t->info &= ~(1u << 31);		/* as clang 14 writes it */
	assert_int_equal(build(f, e), 0);
	expect_col(f, 0, "value", 0, 4, true, KSTATS_LEAF_ENUM);
}

static void test_scalar_root_is_named(void **state)
{
	struct fixture *f = *state;
	int u = btf__add_int(f->btf, "unsigned int", 4, 0);

	assert_int_equal(kstats_layout_build(f->btf, u, "key", true, &f->l,
					     f->err, sizeof(f->err)), 0);
	assert_int_equal(f->l.ncols, 1);
	assert_string_equal(f->l.cols[0].name, "key");
	assert_true(f->l.cols[0].in_key);
	assert_int_equal(f->l.size, 4);
}

static void test_nested_arrays(void **state)
{
	struct fixture *f = *state;
	int u16 = btf__add_int(f->btf, "u16", 2, 0);
	int idx = btf__add_int(f->btf, "int", 4, BTF_INT_SIGNED);
	int inner = btf__add_array(f->btf, idx, u16, 3);
	int outer = btf__add_array(f->btf, idx, inner, 2);
	int s = btf__add_struct(f->btf, "grid", 12), i, j;
	char name[32];

	btf__add_field(f->btf, "a", outer, 0, 0);
	assert_int_equal(build(f, s), 0);
	assert_int_equal(f->l.ncols, 6);
	for (i = 0; i < 2; i++)
		for (j = 0; j < 3; j++) {
			snprintf(name, sizeof(name), "a[%d][%d]", i, j);
			expect_col(f, i * 3 + j, name, (i * 3 + j) * 2, 2, false,
				   KSTATS_LEAF_INT);
		}
}

static void test_nested_structs_and_arrays_of_structs(void **state)
{
	struct fixture *f = *state;
	int u32 = btf__add_int(f->btf, "u32", 4, 0);
	int u8 = btf__add_int(f->btf, "u8", 1, 0);
	int inner = btf__add_struct(f->btf, "inner", 8);
	int arr, outer;

	btf__add_field(f->btf, "x", u8, 0, 0);	/* 3 bytes of padding */
	btf__add_field(f->btf, "y", u32, 32, 0);
	arr = btf__add_array(f->btf, u32, inner, 2);
	outer = btf__add_struct(f->btf, "outer", 28);
	btf__add_field(f->btf, "id", u32, 0, 0);
	btf__add_field(f->btf, "one", inner, 32, 0);
	btf__add_field(f->btf, "many", arr, 96, 0);
	assert_int_equal(build(f, outer), 0);
	assert_int_equal(f->l.ncols, 7);
	expect_col(f, 0, "id", 0, 4, false, KSTATS_LEAF_INT);
	expect_col(f, 1, "one.x", 4, 1, false, KSTATS_LEAF_INT);
	expect_col(f, 2, "one.y", 8, 4, false, KSTATS_LEAF_INT);
	expect_col(f, 3, "many[0].x", 12, 1, false, KSTATS_LEAF_INT);
	expect_col(f, 4, "many[0].y", 16, 4, false, KSTATS_LEAF_INT);
	expect_col(f, 5, "many[1].x", 20, 1, false, KSTATS_LEAF_INT);
	expect_col(f, 6, "many[1].y", 24, 4, false, KSTATS_LEAF_INT);
}

static void test_padding_holes(void **state)
{
	struct fixture *f = *state;
	int u8 = btf__add_int(f->btf, "u8", 1, 0);
	int u64 = btf__add_int(f->btf, "u64", 8, 0);
	int u16 = btf__add_int(f->btf, "u16", 2, 0);
	int s = btf__add_struct(f->btf, "holes", 24);

	btf__add_field(f->btf, "a", u8, 0, 0);
	btf__add_field(f->btf, "b", u64, 64, 0);
	btf__add_field(f->btf, "c", u16, 128, 0);
	assert_int_equal(build(f, s), 0);
	assert_int_equal(f->l.size, 24);
	assert_int_equal(f->l.ncols, 3);
	expect_col(f, 0, "a", 0, 1, false, KSTATS_LEAF_INT);
	expect_col(f, 1, "b", 8, 8, false, KSTATS_LEAF_INT);
	expect_col(f, 2, "c", 16, 2, false, KSTATS_LEAF_INT);
}

static void test_modifier_chains(void **state)
{
	struct fixture *f = *state;
	int s32 = btf__add_int(f->btf, "int", 4, BTF_INT_SIGNED);
	int td = btf__add_typedef(f->btf, "s32_t", s32);
	int c = btf__add_const(f->btf, td);
	int v = btf__add_volatile(f->btf, c);
	int r = btf__add_restrict(f->btf, v);
	int tag = btf__add_type_tag(f->btf, "user", r);
	int arr = btf__add_array(f->btf, s32, tag, 2);
	int s = btf__add_struct(f->btf, "mods", 12), root;

	btf__add_field(f->btf, "one", tag, 0, 0);
	btf__add_field(f->btf, "two", arr, 32, 0);
	root = btf__add_const(f->btf, btf__add_typedef(f->btf, "mods_t", s));
	assert_int_equal(build(f, root), 0);
	assert_int_equal(f->l.size, 12);
	assert_int_equal(f->l.ncols, 3);
	expect_col(f, 0, "one", 0, 4, true, KSTATS_LEAF_INT);
	expect_col(f, 1, "two[0]", 4, 4, true, KSTATS_LEAF_INT);
	expect_col(f, 2, "two[1]", 8, 4, true, KSTATS_LEAF_INT);
	assert_int_equal(f->l.cols[0].type_id, s32);
}

static void test_anonymous_struct_member(void **state)
{
	struct fixture *f = *state;
	int u32 = btf__add_int(f->btf, "u32", 4, 0);
	int anon = btf__add_struct(f->btf, NULL, 8);
	int s;

	btf__add_field(f->btf, "lo", u32, 0, 0);
	btf__add_field(f->btf, "hi", u32, 32, 0);
	s = btf__add_struct(f->btf, "outer", 12);
	btf__add_field(f->btf, "id", u32, 0, 0);
	btf__add_field(f->btf, NULL, anon, 32, 0);
	assert_int_equal(build(f, s), 0);
	assert_int_equal(f->l.ncols, 3);
	expect_col(f, 1, "lo", 4, 4, false, KSTATS_LEAF_INT);
	expect_col(f, 2, "hi", 8, 4, false, KSTATS_LEAF_INT);
}

static void test_empty_array_has_no_leaves(void **state)
{
	struct fixture *f = *state;
	int u32 = btf__add_int(f->btf, "u32", 4, 0);
	int flex = btf__add_array(f->btf, u32, u32, 0);
	int s = btf__add_struct(f->btf, "flex", 4);

	btf__add_field(f->btf, "n", u32, 0, 0);
	btf__add_field(f->btf, "items", flex, 32, 0);
	assert_int_equal(build(f, s), 0);
	assert_int_equal(f->l.ncols, 1);
}

static void test_rejects_union(void **state)
{
	struct fixture *f = *state;
	int u32 = btf__add_int(f->btf, "u32", 4, 0);
	int u = btf__add_union(f->btf, "either", 4);
	int s;

	btf__add_field(f->btf, "a", u32, 0, 0);
	btf__add_field(f->btf, "b", u32, 0, 0);
	s = btf__add_struct(f->btf, "holder", 8);
	btf__add_field(f->btf, "id", u32, 0, 0);
	btf__add_field(f->btf, "u", u, 32, 0);
	expect_reject(f, s, EOPNOTSUPP, "u: union");
	expect_reject(f, u, EOPNOTSUPP, "value: union");
}

static void test_rejects_anonymous_union(void **state)
{
	struct fixture *f = *state;
	int u32 = btf__add_int(f->btf, "u32", 4, 0);
	int u = btf__add_union(f->btf, NULL, 4);
	int s;

	btf__add_field(f->btf, "a", u32, 0, 0);
	s = btf__add_struct(f->btf, "holder", 4);
	btf__add_field(f->btf, NULL, u, 0, 0);
	expect_reject(f, s, EOPNOTSUPP, "union");
}

static void test_rejects_bitfields(void **state)
{
	struct fixture *f = *state;
	int u32 = btf__add_int(f->btf, "u32", 4, 0);
	int s = btf__add_struct(f->btf, "bits", 4), s2;
	struct btf_member *m;

	btf__add_field(f->btf, "lo", u32, 0, 3);
	btf__add_field(f->btf, "hi", u32, 3, 29);
	expect_reject(f, s, EOPNOTSUPP, "lo: bitfield");
	/* Old-style: no kind_flag, a member at a bit offset. */
	s2 = btf__add_struct(f->btf, "odd", 8);
	btf__add_field(f->btf, "x", u32, 32, 0);
	m = btf_members((struct btf_type *)btf__type_by_id(f->btf, s2));
	m->offset = 36;
	expect_reject(f, s2, EOPNOTSUPP, "x: bitfield");
}

static void test_rejects_pointer_and_float(void **state)
{
	struct fixture *f = *state;
	int u32 = btf__add_int(f->btf, "u32", 4, 0);
	int p = btf__add_ptr(f->btf, u32);
	int fl = btf__add_float(f->btf, "double", 8);
	int sp = btf__add_struct(f->btf, "sp", 8), sf;

	btf__add_field(f->btf, "next", p, 0, 0);
	sf = btf__add_struct(f->btf, "sf", 8);
	btf__add_field(f->btf, "ratio", fl, 0, 0);
	expect_reject(f, sp, EOPNOTSUPP, "next: pointer");
	expect_reject(f, sf, EOPNOTSUPP, "ratio: float");
}

static void test_rejects_odd_ints(void **state)
{
	struct fixture *f = *state;
	int i128 = btf__add_int(f->btf, "__int128", 16, BTF_INT_SIGNED);
	int u32 = btf__add_int(f->btf, "u32", 4, 0);
	struct btf_type *t;

	expect_reject(f, i128, EOPNOTSUPP, "16-byte scalar");
	/* An int type of 4 bytes holding only 12 bits is a bitfield int. */
	t = (struct btf_type *)btf__type_by_id(f->btf, u32);
	*(uint32_t *)(t + 1) = 12;	/* encoding 0, offset 0, 12 bits */
	expect_reject(f, u32, EOPNOTSUPP, "bitfield int");
}

static void test_rejects_other_kinds(void **state)
{
	struct fixture *f = *state;
	int u32 = btf__add_int(f->btf, "u32", 4, 0);
	int fwd = btf__add_fwd(f->btf, "later", BTF_FWD_STRUCT);
	int proto = btf__add_func_proto(f->btf, u32);
	int s = btf__add_struct(f->btf, "s", 8);

	btf__add_field(f->btf, "later", fwd, 0, 0);
	expect_reject(f, s, EINVAL, "later: type 2 does not resolve");
	expect_reject(f, proto, EINVAL, "cannot size");
	assert_int_equal(kstats_layout_build(f->btf, 0, "key", true, &f->l, f->err,
					     sizeof(f->err)), -EINVAL);
	assert_int_equal(kstats_layout_build(f->btf, 9999, "key", true, &f->l, f->err,
					     sizeof(f->err)), -EINVAL);
}

/* A member placed past the end of its struct would make the reader overrun. */
static void test_rejects_leaf_outside_type(void **state)
{
	struct fixture *f = *state;
	int u64 = btf__add_int(f->btf, "u64", 8, 0);
	int s = btf__add_struct(f->btf, "short", 8);
	int arr, s2;

	btf__add_field(f->btf, "a", u64, 0, 0);
	btf__add_field(f->btf, "b", u64, 32, 0);
	expect_reject(f, s, EINVAL, "outside the 8-byte type");
	arr = btf__add_array(f->btf, u64, u64, 4);
	s2 = btf__add_struct(f->btf, "shorter", 16);
	btf__add_field(f->btf, "a", arr, 0, 0);
	expect_reject(f, s2, EINVAL, "runs past");
}

static void test_rejects_deep_nesting(void **state)
{
	struct fixture *f = *state;
	int id = btf__add_int(f->btf, "u8", 1, 0), i;

	for (i = 0; i < 40; i++) {
		int s = btf__add_struct(f->btf, NULL, 1);

		btf__add_field(f->btf, "n", id, 0, 0);
		id = s;
	}
	expect_reject(f, id, ELOOP, "deeper than");
}

static void test_rejects_too_many_leaves(void **state)
{
	struct fixture *f = *state;
	int u8 = btf__add_int(f->btf, "u8", 1, 0);
	int arr = btf__add_array(f->btf, u8, u8, KSTATS_MAX_LEAVES + 1);
	int ok = btf__add_array(f->btf, u8, u8, KSTATS_MAX_LEAVES);

	expect_reject(f, arr, E2BIG, "more than 65536");
	assert_int_equal(build(f, ok), 0);
	assert_int_equal(f->l.ncols, KSTATS_MAX_LEAVES);
	assert_string_equal(f->l.cols[KSTATS_MAX_LEAVES - 1].name, "value[65535]");
}

static void test_rejects_path_too_long(void **state)
{
	struct fixture *f = *state;
	int id = btf__add_int(f->btf, "u8", 1, 0), i;
	char name[60];

	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	for (i = 0; i < 3; i++) {
		int s = btf__add_struct(f->btf, NULL, 1);

		btf__add_field(f->btf, name, id, 0, 0);
		id = s;
	}
	expect_reject(f, id, ENAMETOOLONG, "path too long");
}

static int layout_of(struct fixture *f, int id, struct kstats_layout *l)
{
	return kstats_layout_build(f->btf, id, "v", false, l, f->err, sizeof(f->err));
}

static void test_layout_equal(void **state)
{
	struct fixture *f = *state;
	int u32 = btf__add_int(f->btf, "u32", 4, 0);
	int u64 = btf__add_int(f->btf, "u64", 8, 0);
	int a = btf__add_struct(f->btf, "a", 16), b, c;
	struct kstats_layout la, lb, lc;

	btf__add_field(f->btf, "x", u32, 0, 0);
	btf__add_field(f->btf, "y", u64, 64, 0);
	b = btf__add_struct(f->btf, "b", 16);	/* same fields, other type name */
	btf__add_field(f->btf, "x", u32, 0, 0);
	btf__add_field(f->btf, "y", u64, 64, 0);
	c = btf__add_struct(f->btf, "c", 16);	/* reordered */
	btf__add_field(f->btf, "y", u64, 0, 0);
	btf__add_field(f->btf, "x", u32, 64, 0);
	assert_int_equal(layout_of(f, a, &la), 0);
	assert_int_equal(layout_of(f, b, &lb), 0);
	assert_int_equal(layout_of(f, c, &lc), 0);
	assert_true(kstats_layout_equal(&la, &lb));
	assert_false(kstats_layout_equal(&la, &lc));
	kstats_layout_free(&la);
	kstats_layout_free(&lb);
	kstats_layout_free(&lc);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_ints_of_every_width),
		T(test_bool_and_chars),
		T(test_enums),
		T(test_enum_sign_from_old_producer),
		T(test_scalar_root_is_named),
		T(test_nested_arrays),
		T(test_nested_structs_and_arrays_of_structs),
		T(test_padding_holes),
		T(test_modifier_chains),
		T(test_anonymous_struct_member),
		T(test_empty_array_has_no_leaves),
		T(test_rejects_union),
		T(test_rejects_anonymous_union),
		T(test_rejects_bitfields),
		T(test_rejects_pointer_and_float),
		T(test_rejects_odd_ints),
		T(test_rejects_other_kinds),
		T(test_rejects_leaf_outside_type),
		T(test_rejects_deep_nesting),
		T(test_rejects_too_many_leaves),
		T(test_rejects_path_too_long),
		T(test_layout_equal),
	};

	return cmocka_run_group_tests_name("layout", tests, NULL, NULL);
}
