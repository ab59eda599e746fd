/* SPDX-License-Identifier: GPL-2.0 */
/* kstats atoms and report: atoms files read (atoms_file.c), summed per metric, key and UTC
 * day (days.c), drawn in a terminal (heatmap.c) or as a page (page.c); the commands
 * (atoms.c); the fleet's rows (rows.c) and kstats ship (ship.c, doc/fleet-atoms.md). */
#ifndef KSTATS_ATOMS_H
#define KSTATS_ATOMS_H

#include <stdio.h>

#include "hist.h"
#include "kstats.h"
#include "proto/kernelstats_atoms.pb-c.h"

struct atoms_file {	/* in memory, its framing checked */
	char *buf;
	size_t len, count;
};

typedef void (*atoms_fn)(void *ctx, const Kernelstats__Atom *a);

/* path ("-": stdin): a regular file within the bounds; -errno: "path: why" in why. */
int atoms_file_read(const char *path, struct atoms_file *f, char *why, size_t len);
/* fn for each atom that decodes, until the framing ends or breaks; -EBADMSG with
 * why when some did not decode. */
int atoms_file_each(const struct atoms_file *f, atoms_fn fn, void *ctx, char *why, size_t len);
/* fn for each atoms file of dir, oldest first: their count, or -1 with errno. */
int atoms_each_path(const char *dir, void (*fn)(void *ctx, const char *path), void *ctx);
void atoms_put_escaped(const char *s, FILE *f);
const ProtobufCMessage *atom_payload(const Kernelstats__Atom *a);
/* Its key fields " name=value" after lead; false: none. */
bool atom_key_print(FILE *out, const ProtobufCMessage *m, const char *lead);
/* The next repeated int32 field from *from, into b, and its unit; NULL: no more. */
const ProtobufCFieldDescriptor *atom_buckets(const ProtobufCMessage *m, unsigned int *from,
					     uint64_t *b, const struct kstats_unit_info **unit);

#define DAYS_NB BPF_TELEMETRY_NR_BUCKETS
#define DAY_SECS 86400
#define MAX_DIRS 64

/* One UTC day of one series: the sum of the atoms whose window ends in it. */
struct day_cell {
	int32_t day;			/* days since 1970-01-01 UTC */
	bool reset;
	uint32_t anomalies;
	uint64_t b[DAYS_NB];
};

struct day_series {
	const ProtobufCMessageDescriptor *msg;	/* the metric */
	char key[160];				/* "name=value ...", "" for none */
	const struct kstats_unit_info *unit;
	struct day_cell *days;			/* sorted by day once finished */
	size_t ndays, cap, sorted;
	uint64_t events;
	size_t folded;				/* keys summed into it */
};

/* Bounded memory (72 MiB of cells) and time, whatever the files hold. */
#define DAYS_MAX_SERIES 4096
#define DAYS_MAX_CELLS (256 * 1024)
#define DAYS_SLOTS (2 * DAYS_MAX_SERIES)
#define ROWS_MAX_HOSTS 65536

struct days {
	struct day_series *series;	/* sorted by metric, then key */
	size_t nseries, cap;
	int32_t since, until;		/* days kept; INT32_MIN/MAX: all */
	int32_t first, last;		/* of the atoms kept */
	int32_t oldest;			/* read; < first: days past the cell budget */
	uint8_t *pulled;		/* [last - first + 1]; NULL: no atoms */
	size_t dirs, files, atoms, ncells, over, outside;
	size_t rows, hosts;		/* --rows: rows read, distinct hosts (0: none named) */
	bool by_rows, merged;		/* merged: no cell appended since the last compaction */
	uint32_t slot[DAYS_SLOTS];	/* series index + 1 by hash of metric, key */
	char **bad;			/* one line per file skipped */
	size_t nbad, badcap;
	const char *tool;		/* "kstats report": names its warnings */
};

/* Adds one day's counts of metric msg's key ("name=value ...") to d. */
void days_add(struct days *d, const ProtobufCMessageDescriptor *msg, const char *key,
	      const struct kstats_unit_info *unit, const struct day_cell *c);
/* A file skipped: one line on stderr and on the page. */
void days_bad(struct days *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The atoms or rows of path past the limits, if any: one days_bad() line. */
void days_over(struct days *d, const char *path, const char *what, const char *fix);

void days_init(struct days *d, const char *tool);
/* The atoms files of dirs[] (or files[], when nfiles > 0), newest first, hosts in turn;
 * -ENOENT: a directory is unreadable (named in d->bad). */
int days_load(struct days *d, char *const *dirs, int ndirs, char *const *files, int nfiles);
/* Sorts, folds each metric's least busy keys into one past its share of max_cells,
 * drops the oldest days past max_cells, marks the days pulled. */
void days_finish(struct days *d, size_t max_cells);
/* kstats report --rows (rows.c): the rows of path ("-": stdin); a bad one is named in d->bad. */
void days_load_rows(struct days *d, const char *path);
void days_free(struct days *d);
/* s's cell of day once finished; NULL: none. */
struct day_cell *days_cell(const struct day_series *s, int32_t day);
void days_fmt(char *buf, size_t len, int32_t day);
/* Colour level 1..levels of count c on a log scale up to max; 0 for none. */
unsigned int days_level(uint64_t c, uint64_t max, unsigned int levels);

int heatmap_print(const char *dir, char *const *files, int n);
/* ~130 bytes a cell: about 5 MB, and a year of 6 metrics of 30 keys drawn whole. */
#define PAGE_CELLS 38000
void page_put(FILE *f, const struct days *d, char *const *dirs, int ndirs);

/* ship.c: kstats atoms --format json-each-row, every atoms file of dir or files[n]. */
int rows_print(const char *dir, char *const *files, int n);

#endif /* KSTATS_ATOMS_H */
