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

/*
 * A struct of the fields that follow, each a name ("" for an anonymous
 * one), a type id and a bit offset; NULL ends them.
 */
static int add_struct(struct fixture *f, const char *name, int size, ...)
{
	int s = btf__add_struct(f->btf, name, size), type, bit;
	const char *field;
	va_list ap;

	assert_true(s > 0);
	va_start(ap, size);
	while ((field = va_arg(ap, const char *))) {
		type = va_arg(ap, int);
		bit = va_arg(ap, int);
		assert_int_equal(btf__add_field(f->btf, *field ? field : NULL, type, bit, 0), 0);
	}
	va_end(ap);
	return s;
}

/*
 * Type id builds, and its value columns are exactly want: "name@offset+size
 * kind, ...", the size followed by s for a signed leaf, u for an unsigned one.
 */
static void expect_layout(struct fixture *f, int id, const char *want)
{
	static const char *const kinds[] = { "int", "bool", "char", "enum" };
	char got[1024] = "";
	size_t i, n = 0;

	assert_int_equal(build(f, id), 0);
	for (i = 0; i < f->l.ncols && n < sizeof(got); i++) {
		const struct kstats_column *c = &f->l.cols[i];

		assert_false(c->in_key);
		assert_true((size_t)c->kind < sizeof(kinds) / sizeof(kinds[0]));
		n += snprintf(got + n, sizeof(got) - n, "%s%s@%u+%u%c %s", i ? ", " : "",
			      c->name, c->offset, c->size, c->is_signed ? 's' : 'u',
			      kinds[c->kind]);
	}
	assert_string_equal(got, want);
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
	expect_layout(f, s, "u8@0+1u int, s8@1+1s int, u16@2+2u int, s16@4+2s int, "
		      "u32@8+4u int, s32@12+4s int, u64@16+8u int, s64@24+8s int");
	assert_int_equal(f->l.size, 32);
}

static void test_bool_and_chars(void **state)
{
	struct fixture *f = *state;
	int b = btf__add_int(f->btf, "_Bool", 1, BTF_INT_BOOL);
	int c = btf__add_int(f->btf, "char", 1, BTF_INT_SIGNED);
	int sc = btf__add_int(f->btf, "signed char", 1, BTF_INT_SIGNED);
	int uc = btf__add_int(f->btf, "unsigned char", 1, 0);
	int cc = btf__add_int(f->btf, "my_char", 1, BTF_INT_CHAR);
	int s = add_struct(f, "flags", 5, "b", b, 0, "c", c, 8, "sc", sc, 16,
			   "uc", uc, 24, "cc", cc, 32, NULL);

	expect_layout(f, s, "b@0+1u bool, c@1+1s char, sc@2+1s int, uc@3+1u int, "
		      "cc@4+1u char");
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
	s = add_struct(f, "enums", 32, "e8", e8, 0, "e16", e16, 16, "e32", e32, 32,
		       "es", es, 64, "e64u", e64u, 128, "e64s", e64s, 192, NULL);
	expect_layout(f, s, "e8@0+1u enum, e16@2+2u enum, e32@4+4u enum, es@8+4s enum, "
		      "e64u@16+8u enum, e64s@24+8s enum");
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
	expect_layout(f, e, "value@0+4s enum");
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
	int s = add_struct(f, "grid", 12, "a", outer, 0, NULL);

	expect_layout(f, s, "a[0][0]@0+2u int, a[0][1]@2+2u int, a[0][2]@4+2u int, "
		      "a[1][0]@6+2u int, a[1][1]@8+2u int, a[1][2]@10+2u int");
}

static void test_nested_structs_and_arrays_of_structs(void **state)
{
	struct fixture *f = *state;
	int u32 = btf__add_int(f->btf, "u32", 4, 0);
	int u8 = btf__add_int(f->btf, "u8", 1, 0);
	/* x, then 3 bytes of padding */
	int inner = add_struct(f, "inner", 8, "x", u8, 0, "y", u32, 32, NULL);
	int arr = btf__add_array(f->btf, u32, inner, 2);
	int outer = add_struct(f, "outer", 28, "id", u32, 0, "one", inner, 32,
			       "many", arr, 96, NULL);

	expect_layout(f, outer, "id@0+4u int, one.x@4+1u int, one.y@8+4u int, "
			"many[0].x@12+1u int, many[0].y@16+4u int, "
			"many[1].x@20+1u int, many[1].y@24+4u int");
}

static void test_padding_holes(void **state)
{
	struct fixture *f = *state;
	int u8 = btf__add_int(f->btf, "u8", 1, 0);
	int u64 = btf__add_int(f->btf, "u64", 8, 0);
	int u16 = btf__add_int(f->btf, "u16", 2, 0);
	int s = add_struct(f, "holes", 24, "a", u8, 0, "b", u64, 64, "c", u16, 128, NULL);

	expect_layout(f, s, "a@0+1u int, b@8+8u int, c@16+2u int");
	assert_int_equal(f->l.size, 24);
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
	int s = add_struct(f, "mods", 12, "one", tag, 0, "two", arr, 32, NULL);
	int root = btf__add_const(f->btf, btf__add_typedef(f->btf, "mods_t", s));

	expect_layout(f, root, "one@0+4s int, two[0]@4+4s int, two[1]@8+4s int");
	assert_int_equal(f->l.size, 12);
	assert_int_equal(f->l.cols[0].type_id, s32);
}

static void test_anonymous_struct_member(void **state)
{
	struct fixture *f = *state;
	int u32 = btf__add_int(f->btf, "u32", 4, 0);
	int anon = add_struct(f, NULL, 8, "lo", u32, 0, "hi", u32, 32, NULL);
	int s = add_struct(f, "outer", 12, "id", u32, 0, "", anon, 32, NULL);

	expect_layout(f, s, "id@0+4u int, lo@4+4u int, hi@8+4u int");
}

static void test_empty_array_has_no_leaves(void **state)
{
	struct fixture *f = *state;
	int u32 = btf__add_int(f->btf, "u32", 4, 0);
	int flex = btf__add_array(f->btf, u32, u32, 0);
	int s = add_struct(f, "flex", 4, "n", u32, 0, "items", flex, 32, NULL);

	expect_layout(f, s, "n@0+4u int");
}

static void test_rejects_union(void **state)
{
	struct fixture *f = *state;
	int u32 = btf__add_int(f->btf, "u32", 4, 0);
	int u = btf__add_union(f->btf, "either", 4);
	int s;

	btf__add_field(f->btf, "a", u32, 0, 0);
	btf__add_field(f->btf, "b", u32, 0, 0);
	s = add_struct(f, "holder", 8, "id", u32, 0, "u", u, 32, NULL);
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
	s = add_struct(f, "holder", 4, "", u, 0, NULL);
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
	int sp = add_struct(f, "sp", 8, "next", p, 0, NULL);
	int sf = add_struct(f, "sf", 8, "ratio", fl, 0, NULL);

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
	int s = add_struct(f, "s", 8, "later", fwd, 0, NULL);

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
	int s = add_struct(f, "short", 8, "a", u64, 0, "b", u64, 32, NULL);
	int arr = btf__add_array(f->btf, u64, u64, 4);
	int s2 = add_struct(f, "shorter", 16, "a", arr, 0, NULL);

	expect_reject(f, s, EINVAL, "outside the 8-byte type");
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
	int a = add_struct(f, "a", 16, "x", u32, 0, "y", u64, 64, NULL);
	/* the same fields, another type name; reordered */
	int b = add_struct(f, "b", 16, "x", u32, 0, "y", u64, 64, NULL);
	int c = add_struct(f, "c", 16, "y", u64, 0, "x", u32, 64, NULL);
	struct kstats_layout la, lb, lc;

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
