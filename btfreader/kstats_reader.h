/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libkstats: reads any pinned telemetry map generically.  The key and value
 * layouts come from BTF (the object's, else the map's own), flattened into
 * scalar leaves; each map entry becomes one row of int64 columns: the key
 * leaves, then the value leaves.  Nothing here knows a metric.
 *
 * Functions return 0 or a negative errno, and write a one-line reason into
 * the caller's err buffer.
 */
#ifndef KSTATS_READER_H
#define KSTATS_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct btf;

#define KSTATS_ERR_LEN 256
#define KSTATS_PATH_LEN 128

enum kstats_leaf_kind {
	KSTATS_LEAF_INT,
	KSTATS_LEAF_BOOL,
	KSTATS_LEAF_CHAR,
	KSTATS_LEAF_ENUM,
};

struct kstats_column {
	char name[KSTATS_PATH_LEN];	/* path: "node_id", "buckets[3]", "a.b[1].c" */
	uint32_t offset;		/* byte offset in the key or value */
	uint8_t size;			/* 1, 2, 4 or 8 */
	bool is_signed;
	bool in_key;
	enum kstats_leaf_kind kind;
	uint32_t type_id;		/* leaf type in kstats_map_btf() */
};

struct kstats_layout {
	struct kstats_column *cols;
	size_t ncols;
	uint32_t size;			/* byte size of the whole type */
};

/*
 * Flattens type_id of btf into an empty layout.  Struct members are named by
 * path; a scalar root is named root_name.
 */
int kstats_layout_build(const struct btf *btf, uint32_t type_id,
			const char *root_name, bool in_key,
			struct kstats_layout *layout, char *err, size_t errlen);
void kstats_layout_free(struct kstats_layout *layout);

struct kstats_map;

struct kstats_map_opts {
	const char *obj_path;	/* .bpf object with BTF; NULL: use the map's BTF */
	const char *map_name;	/* map name in the object */
	const char *pin_path;	/* pinned map */
	bool per_cpu_rows;	/* per-CPU maps: one row per CPU, not summed */
};

int kstats_map_open(const struct kstats_map_opts *opts, struct kstats_map **out,
		    char *err, size_t errlen);
void kstats_map_close(struct kstats_map *map);

size_t kstats_map_ncols(const struct kstats_map *map);
size_t kstats_map_nkey_cols(const struct kstats_map *map);
const struct kstats_column *kstats_map_column(const struct kstats_map *map,
					      size_t i);
const struct btf *kstats_map_btf(const struct kstats_map *map);
/* Upper bound on the rows kstats_map_read() can return. */
size_t kstats_map_max_rows(const struct kstats_map *map);
/* Name of an enum leaf's value, or NULL. */
const char *kstats_column_enum_name(const struct kstats_map *map,
				    const struct kstats_column *col,
				    int64_t value);

/*
 * Reads every entry with BPF_MAP_LOOKUP_BATCH into rows (row-major,
 * max_rows * ncols int64).  *nrows gets the count.  With per_cpu_rows, the
 * first column is "cpu" and each entry gives one row per possible CPU.
 */
int kstats_map_read(struct kstats_map *map, int64_t *rows, size_t max_rows,
		    size_t *nrows, char *err, size_t errlen);

/* Syscalls the last read made (for tests and bench). */
unsigned int kstats_map_last_syscalls(const struct kstats_map *map);

#endif /* KSTATS_READER_H */
