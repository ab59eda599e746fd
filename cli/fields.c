// SPDX-License-Identifier: GPL-2.0
/* Columns as fields, and their values as text or JSON, for kstats read and watch. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fields.h"
#include "kstats_tool.h"

/* "name[0]", "name[1]", ... up to end, chars at adjacent offsets: one string. */
static size_t char_run(const struct kstats_map *m, size_t c, size_t end,
		       struct kstats_field *f)
{
	const struct kstats_column *first = kstats_map_column(m, c);
	const char *br = strrchr(first->name, '[');
	size_t base = br ? (size_t)(br - first->name) : 0, n;
	char want[KSTATS_PATH_LEN + 16];

	if (!br || strcmp(br, "[0]") || first->kind != KSTATS_LEAF_CHAR)
		return 0;
	for (n = 0; c + n < end; n++) {
		const struct kstats_column *col = kstats_map_column(m, c + n);

		snprintf(want, sizeof(want), "%.*s[%zu]", (int)base, first->name, n);
		if (col->kind != KSTATS_LEAF_CHAR || strcmp(col->name, want) ||
		    col->offset != first->offset + n)
			break;
	}
	snprintf(f->name, sizeof(f->name), "%.*s", (int)base, first->name);
	f->len = n;
	f->is_string = true;
	return n;
}

int kstats_fields_build(struct kstats_fields *fs, const struct kstats_map *m)
{
	size_t c = 0, ncols = kstats_map_ncols(m), nkey = kstats_map_nkey_cols(m);

	memset(fs, 0, sizeof(*fs));
	fs->m = m;
	fs->f = calloc(ncols ?: 1, sizeof(*fs->f));
	if (!fs->f)
		return -ENOMEM;
	while (c < ncols) {
		struct kstats_field *f = &fs->f[fs->n++];
		size_t run = char_run(m, c, c < nkey ? nkey : ncols, f);

		f->col = c;
		f->c = kstats_map_column(m, c);
		if (!run) {
			snprintf(f->name, sizeof(f->name), "%s", f->c->name);
			f->len = run = 1;
		}
		c += run;
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
		raw = malloc(f->len + KSTATS_ESCAPED_SIZE(f->len));
		if (!raw)
			return NULL;
		for (n = 0; n < f->len && vals[f->col + n]; n++)
			raw[n] = (char)vals[f->col + n];
		kstats_escape(raw + f->len, KSTATS_ESCAPED_SIZE(f->len), raw, n);
		j = json_object_new_string(raw + f->len);
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

void kstats_field_print(FILE *out, const struct kstats_fields *fs, size_t i,
			const int64_t *vals)
{
	json_object *j = kstats_field_json(fs, i, vals);

	fputs(j ? json_object_get_string(j) : "", out);
	json_object_put(j);
}
