// SPDX-License-Identifier: GPL-2.0
/* Flattens a BTF type into scalar leaves with offsets and path names. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>

#include "kstats_reader.h"

#define MAX_DEPTH 32
#define MAX_LEAVES (1u << 20)

struct walk {
	const struct btf *btf;
	struct kstats_layout *layout;
	bool in_key;
	const char *root;	/* name of a scalar root */
	char *err;
	size_t errlen;
};

static int fail(struct walk *w, int errnum, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->err, w->errlen, fmt, ap);
	va_end(ap);
	return -errnum;
}

static int add_leaf(struct walk *w, const char *path, uint32_t off,
		    uint32_t size, bool is_signed, enum kstats_leaf_kind kind,
		    uint32_t type_id)
{
	struct kstats_layout *l = w->layout;
	struct kstats_column *col, *cols;

	if (size != 1 && size != 2 && size != 4 && size != 8)
		return fail(w, EOPNOTSUPP, "%s: %u-byte scalar is not supported",
			    path, size);
	if (l->ncols >= MAX_LEAVES)
		return fail(w, E2BIG, "%s: more than %u leaves", path, MAX_LEAVES);
	if ((l->ncols & (l->ncols - 1)) == 0) {
		cols = realloc(l->cols, sizeof(*cols) * (l->ncols ? l->ncols * 2 : 8));
		if (!cols)
			return fail(w, ENOMEM, "out of memory");
		l->cols = cols;
	}
	col = &l->cols[l->ncols++];
	memset(col, 0, sizeof(*col));
	snprintf(col->name, sizeof(col->name), "%s", path);
	col->offset = off;
	col->size = size;
	col->is_signed = is_signed;
	col->in_key = w->in_key;
	col->kind = kind;
	col->type_id = type_id;
	return 0;
}

static int walk_type(struct walk *w, uint32_t id, uint32_t off,
		     const char *path, int depth);

static int walk_int(struct walk *w, uint32_t id, const struct btf_type *t,
		    uint32_t off, const char *path)
{
	uint32_t info = *(const uint32_t *)(t + 1);
	uint8_t enc = BTF_INT_ENCODING(info);
	enum kstats_leaf_kind kind = KSTATS_LEAF_INT;

	if (BTF_INT_OFFSET(info) || BTF_INT_BITS(info) != t->size * 8)
		return fail(w, EOPNOTSUPP, "%s: bitfield int is not supported", path);
	if (enc & BTF_INT_BOOL)
		kind = KSTATS_LEAF_BOOL;
	else if (enc & BTF_INT_CHAR)
		kind = KSTATS_LEAF_CHAR;
	return add_leaf(w, path, off, t->size, enc & BTF_INT_SIGNED, kind, id);
}

static int walk_array(struct walk *w, const struct btf_type *t, uint32_t off,
		      const char *path, int depth)
{
	const struct btf_array *arr = btf_array(t);
	char sub[KSTATS_PATH_LEN];
	long long esz = btf__resolve_size(w->btf, arr->type);
	uint32_t i;
	int err;

	if (esz < 0)
		return fail(w, EINVAL, "%s: cannot size array element", path);
	if ((unsigned long long)esz * arr->nelems > UINT32_MAX)
		return fail(w, E2BIG, "%s: array too large", path);
	for (i = 0; i < arr->nelems; i++) {
		if ((size_t)snprintf(sub, sizeof(sub), "%s[%u]", path, i) >= sizeof(sub))
			return fail(w, ENAMETOOLONG, "%s: path too long", path);
		err = walk_type(w, arr->type, off + i * (uint32_t)esz, sub, depth + 1);
		if (err)
			return err;
	}
	return 0;
}

static int walk_struct(struct walk *w, const struct btf_type *t, uint32_t off,
		       const char *path, int depth)
{
	const struct btf_member *m = btf_members(t);
	char sub[KSTATS_PATH_LEN];
	const char *mname;
	int i, err;

	for (i = 0; i < btf_vlen(t); i++, m++) {
		uint32_t bit_off = btf_member_bit_offset(t, i);

		mname = btf__name_by_offset(w->btf, m->name_off);
		if (!mname || !*mname)
			return fail(w, EOPNOTSUPP, "%s: anonymous member is not supported",
				    *path ? path : w->root);
		if (btf_member_bitfield_size(t, i) || bit_off % 8)
			return fail(w, EOPNOTSUPP, "%s%s%s: bitfield is not supported",
				    path, *path ? "." : "", mname);
		if ((size_t)snprintf(sub, sizeof(sub), "%s%s%s", path,
				     *path ? "." : "", mname) >= sizeof(sub))
			return fail(w, ENAMETOOLONG, "%s: path too long", path);
		err = walk_type(w, m->type, off + bit_off / 8, sub, depth + 1);
		if (err)
			return err;
	}
	return 0;
}

static int walk_type(struct walk *w, uint32_t id, uint32_t off,
		     const char *path, int depth)
{
	const struct btf_type *t;
	const char *shown = *path ? path : w->root;

	if (depth > MAX_DEPTH)
		return fail(w, ELOOP, "%s: type nesting deeper than %d", shown, MAX_DEPTH);
	id = btf__resolve_type(w->btf, id);
	t = btf__type_by_id(w->btf, id);
	if ((int)id < 0 || !t)
		return fail(w, EINVAL, "%s: unresolvable type", shown);

	switch (btf_kind(t)) {
	case BTF_KIND_INT:
		return walk_int(w, id, t, off, shown);
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		return add_leaf(w, shown, off, t->size, btf_kflag(t),
				KSTATS_LEAF_ENUM, id);
	case BTF_KIND_ARRAY:
		return walk_array(w, t, off, path, depth);
	case BTF_KIND_STRUCT:
		return walk_struct(w, t, off, path, depth);
	case BTF_KIND_UNION:
		return fail(w, EOPNOTSUPP, "%s: union is not supported", shown);
	case BTF_KIND_PTR:
		return fail(w, EOPNOTSUPP, "%s: pointer is not supported", shown);
	case BTF_KIND_FLOAT:
		return fail(w, EOPNOTSUPP, "%s: float is not supported", shown);
	default:
		return fail(w, EOPNOTSUPP, "%s: BTF kind %u is not supported",
			    shown, btf_kind(t));
	}
}

int kstats_layout_build(const struct btf *btf, uint32_t type_id,
			const char *root_name, bool in_key,
			 struct kstats_layout *layout, char *err, size_t errlen)
{
	struct walk w = { btf, layout, in_key, root_name, err, errlen };
	long long size = btf__resolve_size(btf, type_id);

	if (size <= 0 || size > UINT32_MAX)
		return fail(&w, EINVAL, "%s: cannot size type %u", root_name, type_id);
	layout->size = (uint32_t)size;
	return walk_type(&w, type_id, 0, "", 0);
}

void kstats_layout_free(struct kstats_layout *layout)
{
	free(layout->cols);
	memset(layout, 0, sizeof(*layout));
}
