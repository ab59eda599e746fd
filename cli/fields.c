// SPDX-License-Identifier: GPL-2.0
/* Columns as fields, and their values as text or JSON, for kstats read and watch. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fields.h"
#include "kstats_tool.h"

int kstats_fields_build(struct kstats_fields *fs, const struct kstats_map *m)
{
	size_t c = 0, ncols = kstats_map_ncols(m);

	memset(fs, 0, sizeof(*fs));
	fs->m = m;
	fs->f = calloc(ncols ?: 1, sizeof(*fs->f));
	if (!fs->f)
		return -ENOMEM;
	for (; c < ncols; c += fs->f[fs->n++].len) {
		struct kstats_field *f = &fs->f[fs->n];

		f->col = c;
		f->c = kstats_map_column(m, c);
		f->is_string = f->c->str_len > 0;
		f->len = f->is_string ? f->c->str_len : 1;
		/* "comm[0]": the array's first char names the string "comm". */
		snprintf(f->name, sizeof(f->name), "%.*s", (int)strlen(f->c->name) -
			 (f->is_string ? 3 : 0), f->c->name);
	}
	return 0;
}

void kstats_fields_free(struct kstats_fields *fs)
{
	free(fs->f);
	memset(fs, 0, sizeof(*fs));
}

json_object *kstats_field_json(const struct kstats_fields *fs, size_t i,
			       const int64_t *vals)
{
	const struct kstats_field *f = &fs->f[i];
	int64_t v = vals[f->col];
	const char *e = kstats_column_enum_name(fs->m, f->c, v);
	json_object *j;
	char *raw;
	size_t n;

	if (f->is_string) {	/* up to the first NUL, escaped */
		raw = malloc(f->len + 1 + KSTATS_ESCAPED_SIZE(f->len));
		if (!raw)
			return NULL;
		n = kstats_column_string(f->c, vals + f->col, raw, f->len + 1);
		kstats_escape(raw + f->len + 1, KSTATS_ESCAPED_SIZE(f->len), raw, n);
		j = json_object_new_string(raw + f->len + 1);
		free(raw);
		return j;
	}
	if (e)
		return json_object_new_string(e);
	if (f->c->kind == KSTATS_LEAF_BOOL)
		return json_object_new_boolean(v != 0);
	if (kstats_column_is_u64(f->c))
		return json_object_new_uint64((uint64_t)v);
	return json_object_new_int64(v);
}
