/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libkstats reads any pinned map generically: key and value layouts come
 * from BTF (the object's, else the map's own), flattened into scalar
 * leaves; each entry becomes one row of int64 columns, key leaves then
 * value leaves.  Functions return 0 or -errno with a one-line reason in err.
 */
#ifndef KSTATS_READER_H
#define KSTATS_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct btf;

#define KSTATS_ERR_LEN 256
#define KSTATS_PATH_LEN 128
#define KSTATS_MAX_LEAVES 65536	/* scalar leaves per key or value */

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
 * Flattens type_id of btf into layout (overwritten; freed again on error),
 * members named by path, a scalar root root_name, an array root
 * root_name[i].  Leaves: ints of 1/2/4/8 bytes, bool, char, enum, enum64,
 * through arrays, structs, typedefs and modifiers; padding is skipped.
 * Errors: -EOPNOTSUPP unions, bitfields, pointers, floats; -EINVAL malformed
 * BTF; -E2BIG over KSTATS_MAX_LEAVES leaves; -ELOOP nesting deeper than 32;
 * -ENAMETOOLONG a path over KSTATS_PATH_LEN.
 */
int kstats_layout_build(const struct btf *btf, uint32_t type_id,
			const char *root_name, bool in_key,
			struct kstats_layout *layout, char *err, size_t errlen);
void kstats_layout_free(struct kstats_layout *layout);
/* Same size, and the same leaves at the same places. */
bool kstats_layout_equal(const struct kstats_layout *a,
			 const struct kstats_layout *b);

struct kstats_map;

struct kstats_map_opts {
	const char *obj_path;	/* .bpf object with BTF; NULL: use the map's BTF */
	const char *map_name;	/* map name in the object */
	const char *pin_path;	/* pinned map; NULL: the object's declaration,
				 * for its columns only (kstats_map_read fails) */
	bool per_cpu_rows;	/* per-CPU maps: one row per CPU, not summed */
	bool no_batch;		/* always walk with get_next_key (bench, tests) */
	size_t batch_entries;	/* first batch buffer, in entries; 0: whole map */
	bool pin_once;		/* keep reading the map first opened, even when the
				 * pin names another (a stream's drops, tied to its ring) */
};

enum kstats_btf_source {
	KSTATS_BTF_OBJECT,	/* the object's BTF (matches the map's, if it has one) */
	KSTATS_BTF_MAP,		/* the pinned map's own BTF */
};

/*
 * Opens the pinned map read-only and resolves its key and value layouts.
 * Types come from the object; when the object is missing, or its types
 * differ from those the map was created with (a newer object on disk), from
 * the map's own BTF.  Keep the handle: kstats_map_read() follows reloads.
 * Errors: -ENOENT no pin at pin_path; -EBADF pin_path holds no map (a
 * program, a link, a directory, a file off bpffs); -ESRCH map_name is not in
 * the object; -EOPNOTSUPP map type or a leaf type; -EINVAL sizes or BTF do
 * not fit.
 */
int kstats_map_open(const struct kstats_map_opts *opts, struct kstats_map **out,
		    char *err, size_t errlen);
void kstats_map_close(struct kstats_map *map);

enum kstats_btf_source kstats_map_btf_source(const struct kstats_map *map);
/* Why the map's own BTF was used instead of the object's, or "". */
const char *kstats_map_source_note(const struct kstats_map *map);

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
 * Reads every entry into rows (row-major, max_rows * ncols int64), each key
 * once: BPF_MAP_LOOKUP_BATCH, or get_next_key + lookup on kernels without
 * batch ops.  Per-CPU values: integer leaves summed over the possible CPUs,
 * bool leaves OR-ed, char and enum leaves the largest; with per_cpu_rows
 * the first column is "cpu", one row per possible CPU.  -EAGAIN: the map
 * changed faster than it could be read, three times in a row.
 * Unless pin_once, each read first stats the pin (a replaced pin is a new
 * inode).  When it names another map (unload and load, a loader re-run),
 * that map is read if its columns and row count are the same
 * (kstats_map_id() changes), else -ESTALE: open the pin again.  Nothing
 * pinned: -ENOENT, and a later read after the loader ran picks it up.
 */
int kstats_map_read(struct kstats_map *map, int64_t *rows, size_t max_rows,
		    size_t *nrows, char *err, size_t errlen);

/* The kernel's id of the map read (no open of its pin); changes when a read
 * followed the pin to a new map. */
uint32_t kstats_map_id(const struct kstats_map *map);

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

/*
 * Reads every row of the histogram map pinned at pin.  The first call (h
 * zeroed) opens it with the types of obj_path's map (else the map's own
 * BTF, also when the object fails otherwise; the object's error is the one
 * reported) and checks that the value is unsigned counters of one width;
 * later calls read the same handle, which follows a reload through the pin
 * (kstats_map_read()), and open it again when the new map's columns differ.
 * 0 or -errno with the reason in err; free with kstats_histmap_free().
 */
int kstats_histmap_read(const char *obj_path, const char *map_name, const char *pin,
			struct kstats_histmap *h, char *err, size_t errlen);
void kstats_histmap_free(struct kstats_histmap *h);

#endif /* KSTATS_READER_H */
