/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fields kstats read and watch show: a map's columns, a char array as one
 * string; enums by name, bools as true/false, strings escaped (kstats_escape).
 */
#ifndef KSTATS_FIELDS_H
#define KSTATS_FIELDS_H

#include <stdio.h>
#include <json-c/json.h>

#include "kstats_reader.h"

struct kstats_field {
	char name[KSTATS_PATH_LEN];	/* callers may rename */
	const struct kstats_column *c;	/* its first column */
	size_t col, len;		/* columns [col, col + len) */
	bool is_string;
};

struct kstats_fields {
	const struct kstats_map *m;	/* a map's rows (read) or a stream's records (watch) */
	struct kstats_field *f;
	size_t n;
};

/* Shown and sorted unsigned; every other integer signed. */
static inline bool kstats_column_is_u64(const struct kstats_column *c)
{
	return c->size == 8 && !c->is_signed;
}

/*
 * Groups m's columns: "comm[0]".."comm[15]" (chars, adjacent) become "comm";
 * a string never spans key and value.
 */
int kstats_fields_build(struct kstats_fields *fs, const struct kstats_map *m);
void kstats_fields_free(struct kstats_fields *fs);
/* Field i of the row or record vals as a JSON value (NULL when out of memory). */
json_object *kstats_field_json(const struct kstats_fields *fs, size_t i,
			       const int64_t *vals);
/* The same as text. */
void kstats_field_print(FILE *out, const struct kstats_fields *fs, size_t i,
			const int64_t *vals);

#endif /* KSTATS_FIELDS_H */
