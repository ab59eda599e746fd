/* SPDX-License-Identifier: GPL-2.0 */
/* kstats read and watch: a map's columns as fields, a char array as one escaped string. */
#ifndef KSTATS_FIELDS_H
#define KSTATS_FIELDS_H

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

/* "comm[0]".."comm[15]" (adjacent chars) become "comm", never across key and value. */
int kstats_fields_build(struct kstats_fields *fs, const struct kstats_map *m);
void kstats_fields_free(struct kstats_fields *fs);
/* Field i of vals (a row or a record); NULL when out of memory. */
json_object *kstats_field_json(const struct kstats_fields *fs, size_t i,
			       const int64_t *vals);

#endif /* KSTATS_FIELDS_H */
