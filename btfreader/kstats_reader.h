/* SPDX-License-Identifier: GPL-2.0 */
/* Any pinned map as rows of int64 columns (key leaves, then value leaves, from
 * BTF); functions return 0 or -errno with a one-line reason in err. */
#ifndef KSTATS_READER_H
#define KSTATS_READER_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct btf;

#define KSTATS_ERR_LEN 256
#define KSTATS_PATH_LEN 128
#define KSTATS_MAX_LEAVES 65536	/* scalar leaves per key or value */

/* fmt into err; returns -errnum. */
static inline __attribute__((format(printf, 4, 5))) int
kstats_fail(char *err, size_t errlen, int errnum, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -errnum;
}

enum kstats_leaf_kind { KSTATS_LEAF_INT, KSTATS_LEAF_BOOL, KSTATS_LEAF_CHAR, KSTATS_LEAF_ENUM };

struct kstats_column {
	char name[KSTATS_PATH_LEN];	/* path: "node_id", "buckets[3]", "a.b[1].c" */
	uint32_t offset;		/* byte offset in the key or value */
	uint8_t size;			/* 1, 2, 4 or 8 */
	bool is_signed;
	bool in_key;
	enum kstats_leaf_kind kind;
	uint32_t type_id;		/* leaf type in kstats_map_btf() */
	uint32_t str_len;		/* the first char of a char array: its length */
};

struct kstats_layout {
	struct kstats_column *cols;
	size_t ncols;
	uint32_t size;			/* byte size of the whole type */
};

/* type_id's scalar leaves (a scalar root is root_name, an array's root_name[i]).
 * -EOPNOTSUPP unions, bitfields, pointers, floats; -EINVAL bad BTF; else limits. */
int kstats_layout_build(const struct btf *btf, uint32_t type_id,
			const char *root_name, bool in_key,
			struct kstats_layout *layout, char *err, size_t errlen);
void kstats_layout_free(struct kstats_layout *layout);
bool kstats_layout_equal(const struct kstats_layout *a, const struct kstats_layout *b);

struct kstats_map;

struct kstats_map_opts {
	const char *obj_path;	/* .bpf object with BTF; NULL: use the map's BTF */
	const char *map_name;	/* map name in the object */
	const char *pin_path;	/* NULL: the object's declaration, columns only (no read) */
	bool per_cpu_rows;	/* per-CPU maps: one row per CPU, not summed */
	bool no_batch;		/* always walk with get_next_key (bench, tests) */
	size_t batch_entries;	/* first batch buffer, in entries; 0: whole map */
	bool pin_once;		/* keep the first map when the pin names another (a ring's drops) */
};

/* The pin read-only, with the object's types or (object missing or other) the map's BTF.
 * -ENOENT no pin; -EMEDIUMTYPE not a map; -ESRCH no such map in the object. */
int kstats_map_open(const struct kstats_map_opts *opts, struct kstats_map **out,
		    char *err, size_t errlen);
void kstats_map_close(struct kstats_map *map);

const char *kstats_map_source_note(const struct kstats_map *map);

size_t kstats_map_ncols(const struct kstats_map *map);
size_t kstats_map_nkey_cols(const struct kstats_map *map);
const struct kstats_column *kstats_map_column(const struct kstats_map *map, size_t i);
const struct btf *kstats_map_btf(const struct kstats_map *map);
size_t kstats_map_max_rows(const struct kstats_map *map);
const char *kstats_column_enum_name(const struct kstats_map *map,
				    const struct kstats_column *col, int64_t value);

/* Every entry into rows (max_rows * ncols), each key once; per-CPU leaves summed (bool
 * OR, char and enum max) unless per_cpu_rows.  Follows the pin (unless pin_once) to a
 * reload with the same columns, else -ESTALE; -ENOENT nothing pinned; -EAGAIN churn. */
int kstats_map_read(struct kstats_map *map, int64_t *rows, size_t max_rows,
		    size_t *nrows, char *err, size_t errlen);

uint32_t kstats_map_id(const struct kstats_map *map);

/* The char array at col (str_len columns) into buf, to its NUL or len - 1; chars copied. */
size_t kstats_column_string(const struct kstats_column *col, const int64_t *vals,
			    char *buf, size_t len);

/* Every row of m into *rows (malloc'd, max_rows * ncols); 0 or -errno. */
int kstats_read_rows(struct kstats_map *m, int64_t **rows, size_t *nrows,
		     char *err, size_t errlen);

/* A histogram map: key leaves, then BPF_TELEMETRY_NR_BUCKETS counters. */
struct kstats_histmap {
	struct kstats_map *map;		/* open: columns, BTF, enum names */
	uint32_t map_id;		/* the map the rows were read from */
	int64_t *rows;			/* nrows x ncols: key leaves, then buckets */
	size_t nrows, ncols, nkey;
	unsigned int width;		/* bytes per bucket counter */
};

/* Every row of the histogram map at pin.  The first call (h zeroed) opens it and checks
 * the buckets; later calls reuse it, opened again when a reload changed the columns. */
int kstats_histmap_read(const char *obj_path, const char *map_name, const char *pin,
			struct kstats_histmap *h, char *err, size_t errlen);
void kstats_histmap_free(struct kstats_histmap *h);

#endif /* KSTATS_READER_H */
