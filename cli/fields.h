/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fields kstats read and kstats watch show, one implementation for both:
 * BTF columns grouped into fields (a char array is one string) and each
 * value formatted alike in text and JSON: enums by name, bools as true and
 * false, char arrays up to the NUL escaped as \xNN (kstats_escape).
 */
#ifndef KSTATS_FIELDS_H
#define KSTATS_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <json-c/json.h>

#include "kstats_reader.h"

struct kstats_field {
	char name[KSTATS_PATH_LEN];	/* callers may rename */
	const struct kstats_column *c;	/* its first column */
	size_t col, len;		/* columns [col, col + len) */
	bool is_string;
};

/* Where the columns come from: a map's rows (read) or a stream's records (watch). */
struct kstats_field_src {
	const void *src;
	size_t ncols, nkey;		/* a string never spans key and value */
	const struct kstats_column *(*column)(const void *src, size_t i);
	const char *(*enum_name)(const void *src, const struct kstats_column *c, int64_t v);
};

struct kstats_fields {
	struct kstats_field_src src;
	struct kstats_field *f;
	size_t n;
};

/* Shown and sorted unsigned; every other integer signed. */
static inline bool kstats_column_is_u64(const struct kstats_column *c)
{
	return c->size == 8 && !c->is_signed;
}

/* Groups src's columns: "comm[0]".."comm[15]" (chars, adjacent) become "comm". */
int kstats_fields_build(struct kstats_fields *fs, const struct kstats_field_src *src);
void kstats_fields_free(struct kstats_fields *fs);
/* Field i of the row or record vals, as text. */
void kstats_field_print(FILE *out, const struct kstats_fields *fs, size_t i,
			const int64_t *vals);
/* The same as a JSON value (a new reference; NULL when out of memory). */
json_object *kstats_field_json(const struct kstats_fields *fs, size_t i,
			       const int64_t *vals);

#endif /* KSTATS_FIELDS_H */
