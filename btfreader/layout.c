// SPDX-License-Identifier: GPL-2.0
/* A BTF type as scalar leaves.  Each leaf is checked to lie inside the root type:
 * an object's BTF is not verified by the kernel, and may be hostile. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>

#include "map_internal.h"

#define MAX_DEPTH 32
#define MAX_VISITS (4u * KSTATS_MAX_LEAVES)	/* bounds walks over empty types */

struct walk {
	const struct btf *btf;
	struct kstats_layout *layout;
	uint64_t root_size;
	bool in_key;
	int enum_kflag_known;	/* -1: not looked yet */
	unsigned int visits;
	const char *root;	/* name of a scalar root */
	char *err;
	size_t errlen;
};

#define fail(w, errnum, ...) kstats_fail((w)->err, (w)->errlen, errnum, __VA_ARGS__)

static int add_leaf(struct walk *w, const char *path, uint64_t off,
		    uint32_t size, bool is_signed, enum kstats_leaf_kind kind,
		    uint32_t type_id)
{
	struct kstats_layout *l = w->layout;
	struct kstats_column *cols;

	if (size != 1 && size != 2 && size != 4 && size != 8)
		return fail(w, EOPNOTSUPP, "%s: %u-byte scalar is not supported",
			    path, size);
	if (off + size > w->root_size)
		return fail(w, EINVAL,
			    "%s: bytes %llu..%llu lie outside the %llu-byte type (bad BTF)",
			    path, (unsigned long long)off,
			    (unsigned long long)(off + size - 1),
			    (unsigned long long)w->root_size);
	if (l->ncols >= KSTATS_MAX_LEAVES)
		return fail(w, E2BIG, "%s: more than %u scalar leaves", path,
			    KSTATS_MAX_LEAVES);
	if ((l->ncols & (l->ncols - 1)) == 0) {
		cols = realloc(l->cols, sizeof(*cols) * (l->ncols ? l->ncols * 2 : 8));
		if (!cols)
			return fail(w, ENOMEM, "out of memory");
		l->cols = cols;
	}
	l->cols[l->ncols] = (struct kstats_column){ .offset = (uint32_t)off, .size = size,
		.is_signed = is_signed, .in_key = w->in_key, .kind = kind, .type_id = type_id };
	snprintf(l->cols[l->ncols].name, KSTATS_PATH_LEN, "%s", path);
	l->ncols++;
	return 0;
}

static int walk_type(struct walk *w, uint32_t id, uint64_t off,
		     const char *path, int depth);

/* C enum constants are ints: without a sign flag, a negative one means signed.  Unless any enum
 * of the BTF is marked signed (kind_flag): then its producer marks signedness and an unflagged
 * enum is unsigned.  Older ones (clang < 15, pahole < 1.24) never do. */
static bool enum_is_signed(struct walk *w, const struct btf_type *t)
{
	const struct btf_enum *e = btf_enum(t);
	uint32_t id, n = btf__type_cnt(w->btf);
	const struct btf_type *any;
	int i;

	if (btf_kflag(t) || btf_is_enum64(t))
		return btf_kflag(t);
	for (id = 1; w->enum_kflag_known < 0 && id < n; id++) {
		any = btf__type_by_id(w->btf, id);
		if (any && btf_is_any_enum(any) && btf_kflag(any))
			w->enum_kflag_known = 1;
	}
	if (w->enum_kflag_known > 0)
		return false;
	w->enum_kflag_known = 0;
	for (i = 0; i < btf_vlen(t); i++)
		if (e[i].val < 0)
			return true;
	return false;
}

static int walk_array(struct walk *w, const struct btf_type *t, uint64_t off,
		      const char *path, int depth)
{
	const struct btf_array *arr = btf_array(t);
	const char *shown = *path ? path : w->root;
	char sub[KSTATS_PATH_LEN];
	long long esz = btf__resolve_size(w->btf, arr->type);
	uint32_t i;
	int err;

	if (esz < 0)
		return fail(w, EINVAL, "%s: cannot size array element", shown);
	if (esz == 0)
		return 0;	/* zero-size elements hold no bytes */
	if (off + (unsigned long long)esz * arr->nelems > w->root_size)
		return fail(w, EINVAL, "%s: array runs past the %llu-byte type (bad BTF)",
			    shown, (unsigned long long)w->root_size);
	for (i = 0; i < arr->nelems; i++) {
		size_t before = w->layout->ncols, per;
		struct kstats_column *first;

		if ((size_t)snprintf(sub, sizeof(sub), "%s[%u]", shown, i) >= sizeof(sub))
			return fail(w, ENAMETOOLONG, "%s: path too long", shown);
		err = walk_type(w, arr->type, off + i * (uint64_t)esz, sub, depth + 1);
		if (err)
			return err;
		if (i)
			continue;
		/* Every element has the first one's leaves: check the total now. */
		per = w->layout->ncols - before;
		if (!per)
			return 0;
		if ((uint64_t)per * arr->nelems > KSTATS_MAX_LEAVES - before)
			return fail(w, E2BIG, "%s: more than %u scalar leaves", shown,
				    KSTATS_MAX_LEAVES);
		/* A char array is one string, decided here at its type. */
		first = &w->layout->cols[before];
		if (per == 1 && first->kind == KSTATS_LEAF_CHAR && first->size == 1)
			first->str_len = arr->nelems;
	}
	return 0;
}

/* An anonymous struct member adds its fields to the enclosing path. */
static int walk_member(struct walk *w, const struct btf_type *t, int i,
		       uint64_t off, const char *path, int depth)
{
	const struct btf_member *m = btf_members(t) + i;
	const char *mname = btf__name_by_offset(w->btf, m->name_off);
	uint32_t bit_off = btf_member_bit_offset(t, i);
	char sub[KSTATS_PATH_LEN];

	if (!mname)
		return fail(w, EINVAL, "%s: member %d has no name string (bad BTF)",
			    *path ? path : w->root, i);
	if (btf_member_bitfield_size(t, i) || bit_off % 8)
		return fail(w, EOPNOTSUPP, "%s%s%s: bitfield is not supported",
			    path, *path ? "." : "", *mname ? mname : "<anonymous>");
	off += bit_off / 8;
	if (!*mname) {
		const struct btf_type *mt = btf__type_by_id(w->btf,
					btf__resolve_type(w->btf, m->type));

		if (!mt || !btf_is_composite(mt))
			return fail(w, EOPNOTSUPP, "%s: anonymous scalar member is not supported",
				    *path ? path : w->root);
		return walk_type(w, m->type, off, path, depth + 1);
	}
	if ((size_t)snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "",
			     mname) >= sizeof(sub))
		return fail(w, ENAMETOOLONG, "%s: path too long", path);
	return walk_type(w, m->type, off, sub, depth + 1);
}

static int walk_type(struct walk *w, uint32_t id, uint64_t off,
		     const char *path, int depth)
{
	const char *shown = *path ? path : w->root, *name;
	enum kstats_leaf_kind kind;
	const struct btf_type *t;
	int rid, i, err;

	if (depth > MAX_DEPTH)
		return fail(w, ELOOP, "%s: type nesting deeper than %d", shown, MAX_DEPTH);
	if (++w->visits > MAX_VISITS)
		return fail(w, E2BIG, "%s: type has more than %u parts", shown, MAX_VISITS);
	rid = btf__resolve_type(w->btf, id);
	t = rid < 0 ? NULL : btf__type_by_id(w->btf, rid);
	if (!t)
		return fail(w, EINVAL,
			    "%s: type %u does not resolve (void, only declared, or bad BTF)",
			    shown, id);

	switch (btf_kind(t)) {
	case BTF_KIND_INT:
		if (btf_int_offset(t) || btf_int_bits(t) != t->size * 8)
			return fail(w, EOPNOTSUPP, "%s: bitfield int is not supported", shown);
		/* Compilers mark plain char SIGNED, not CHAR: tell it by its name. */
		name = btf__name_by_offset(w->btf, t->name_off);
		kind = KSTATS_LEAF_INT;
		if (btf_int_encoding(t) & BTF_INT_BOOL)
			kind = KSTATS_LEAF_BOOL;
		else if ((btf_int_encoding(t) & BTF_INT_CHAR) || (name && !strcmp(name, "char")))
			kind = KSTATS_LEAF_CHAR;
		return add_leaf(w, shown, off, t->size, btf_int_encoding(t) & BTF_INT_SIGNED,
				kind, rid);
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		return add_leaf(w, shown, off, t->size, enum_is_signed(w, t),
				KSTATS_LEAF_ENUM, rid);
	case BTF_KIND_ARRAY:
		return walk_array(w, t, off, path, depth);
	case BTF_KIND_STRUCT:
		if (off + t->size > w->root_size)
			return fail(w, EINVAL, "%s: struct runs past the %llu-byte type "
				    "(bad BTF)", shown, (unsigned long long)w->root_size);
		for (i = 0, err = 0; i < btf_vlen(t) && !err; i++)
			err = walk_member(w, t, i, off, path, depth);
		return err;
	case BTF_KIND_UNION:
		return fail(w, EOPNOTSUPP, "%s: union is not supported "
			    "(its active member is unknown)", shown);
	case BTF_KIND_PTR:
		return fail(w, EOPNOTSUPP, "%s: pointer is not supported", shown);
	case BTF_KIND_FLOAT:
		return fail(w, EOPNOTSUPP, "%s: float is not supported (rows are int64)",
			    shown);
	default:
		return fail(w, EOPNOTSUPP, "%s: BTF kind %u is not supported",
			    shown, btf_kind(t));
	}
}

int kstats_layout_build(const struct btf *btf, uint32_t type_id,
			const char *root_name, bool in_key,
			struct kstats_layout *layout, char *err, size_t errlen)
{
	struct walk w = { .btf = btf, .layout = layout, .in_key = in_key, .enum_kflag_known = -1,
			  .root = root_name, .err = err, .errlen = errlen };
	long long size = btf__resolve_size(btf, type_id);
	int ret;

	memset(layout, 0, sizeof(*layout));
	if (size <= 0 || size > UINT32_MAX)
		return fail(&w, EINVAL, "%s: cannot size type %u", root_name, type_id);
	layout->size = (uint32_t)size;
	w.root_size = (uint64_t)size;
	ret = walk_type(&w, type_id, 0, "", 0);
	if (ret)
		kstats_layout_free(layout);
	return ret;
}

void kstats_layout_free(struct kstats_layout *layout)
{
	free(layout->cols);
	memset(layout, 0, sizeof(*layout));
}

bool kstats_layout_equal(const struct kstats_layout *a,
			 const struct kstats_layout *b)
{
	size_t i;

	if (a->size != b->size || a->ncols != b->ncols)
		return false;
	for (i = 0; i < a->ncols; i++) {
		const struct kstats_column *x = &a->cols[i], *y = &b->cols[i];

		if (x->offset != y->offset || x->size != y->size ||
		    x->is_signed != y->is_signed || x->kind != y->kind ||
		    x->str_len != y->str_len || strcmp(x->name, y->name))
			return false;
	}
	return true;
}
