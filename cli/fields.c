// SPDX-License-Identifier: GPL-2.0
/* Columns as fields, and their values as text or JSON, for kstats read and watch. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fields.h"
#include "kstats_tool.h"

/* "name[0]", "name[1]", ... up to end, chars at adjacent offsets: one string. */
static size_t char_run(const struct kstats_field_src *src, size_t c, size_t end,
		       struct kstats_field *f)
{
	const struct kstats_column *first = src->column(src->src, c);
	const char *br = strrchr(first->name, '[');
	size_t base = br ? (size_t)(br - first->name) : 0, n;
	char want[KSTATS_PATH_LEN + 16];

	if (!br || strcmp(br, "[0]") || first->kind != KSTATS_LEAF_CHAR)
		return 0;
	for (n = 0; c + n < end; n++) {
		const struct kstats_column *col = src->column(src->src, c + n);

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

int kstats_fields_build(struct kstats_fields *fs, const struct kstats_field_src *src)
{
	size_t c = 0;

	memset(fs, 0, sizeof(*fs));
	fs->src = *src;
	fs->f = calloc(src->ncols ?: 1, sizeof(*fs->f));
	if (!fs->f)
		return -ENOMEM;
	while (c < src->ncols) {
		struct kstats_field *f = &fs->f[fs->n++];
		size_t run = char_run(src, c, c < src->nkey ? src->nkey : src->ncols, f);

		f->col = c;
		f->c = src->column(src->src, c);
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

/* Up to the first NUL, escaped; malloc'ed, NULL when out of memory. */
static char *string_of(const struct kstats_field *f, const int64_t *vals)
{
	char *raw = malloc(f->len + 1), *s = malloc(KSTATS_ESCAPED_SIZE(f->len));
	size_t n;

	if (raw && s) {
		for (n = 0; n < f->len && vals[f->col + n]; n++)
			raw[n] = (char)vals[f->col + n];
		kstats_escape(s, KSTATS_ESCAPED_SIZE(f->len), raw, n);
	} else {
		free(s);
		s = NULL;
	}
	free(raw);
	return s;
}

void kstats_field_print(FILE *out, const struct kstats_fields *fs, size_t i,
			const int64_t *vals)
{
	const struct kstats_field *f = &fs->f[i];
	int64_t v = vals[f->col];
	const char *e = fs->src.enum_name(fs->src.src, f->c, v);
	char *s;

	if (f->is_string) {
		s = string_of(f, vals);
		fputs(s ? s : "", out);
		free(s);
	} else if (e) {
		fputs(e, out);
	} else if (f->c->kind == KSTATS_LEAF_BOOL) {
		fputs(v ? "true" : "false", out);
	} else if (kstats_column_is_u64(f->c)) {
		fprintf(out, "%" PRIu64, (uint64_t)v);
	} else {
		fprintf(out, "%" PRId64, v);
	}
}

json_object *kstats_field_json(const struct kstats_fields *fs, size_t i,
			       const int64_t *vals)
{
	const struct kstats_field *f = &fs->f[i];
	int64_t v = vals[f->col];
	const char *e = fs->src.enum_name(fs->src.src, f->c, v);
	json_object *j;
	char *s;

	if (f->is_string) {
		s = string_of(f, vals);
		j = json_object_new_string(s ? s : "");
		free(s);
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
