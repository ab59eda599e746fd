/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one reader of atoms files (atoms_cmd.c), and the daily heatmaps made
 * from them (atoms_days.c): kstats atoms --heatmap and kstats report.
 */
#ifndef KSTATS_ATOMS_H
#define KSTATS_ATOMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bpf_telemetry.h"
#include "proto/kernelstats_atoms.pb-c.h"

/* One atoms file in memory, its framing checked. */
struct atoms_file {
	char *buf;
	size_t len, count;
};

typedef void (*atoms_fn)(void *ctx, const Kernelstats__Atom *a);

/*
 * Reads path ("-": stdin) within the bounds (a regular file, no symlink or
 * FIFO, 64 MiB, 4 KiB per record).  0, or -errno with "path: why" in why.
 */
int atoms_file_read(const char *path, struct atoms_file *f, char *why, size_t len);
/* fn for each atom that decodes; -EBADMSG with why when some did not. */
int atoms_file_each(const struct atoms_file *f, atoms_fn fn, void *ctx, char *why,
		    size_t len);
void atoms_file_free(struct atoms_file *f);

/* The atom's metric message, or NULL. */
const ProtobufCMessage *atom_payload(const Kernelstats__Atom *a);
/* m's key fields as " name=value", lead before the first; false: none. */
bool atom_key_print(FILE *out, const ProtobufCMessage *m, const char *lead);
/* The next bucket field of m from *from: its counts in b, its unit. */
const ProtobufCFieldDescriptor *atom_buckets(const ProtobufCMessage *m, unsigned int *from,
					     uint64_t *b, unsigned int *unit);

/* ---- daily heatmaps (atoms_days.c) ---- */

#define DAYS_NB BPF_TELEMETRY_NR_BUCKETS
#define DAY_SECS 86400
/* Bounded memory (72 MiB of cells) and time, whatever the files hold. */
#define DAYS_MAX_SERIES 4096
#define DAYS_MAX_CELLS (256 * 1024)
#define DAYS_SLOTS (2 * DAYS_MAX_SERIES)

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
	unsigned int unit;
	struct day_cell *days;			/* sorted by day once finished */
	size_t ndays, cap, sorted;
	uint64_t events;
	size_t folded;				/* keys summed into it */
};

struct days {
	struct day_series *series;	/* sorted by metric, then key */
	size_t nseries, cap;
	int32_t since, until;		/* days kept; INT32_MIN/MAX: all */
	int32_t first, last;		/* of the atoms kept */
	uint8_t *pulled;		/* [last - first + 1]; NULL: no atoms */
	size_t dirs, files, atoms, ncells, over;
	uint32_t slot[DAYS_SLOTS];	/* series index + 1 by hash of metric, key */
	char **bad;			/* one line per file skipped */
	size_t nbad, badcap;
	const char *tool;		/* "kstats report": names its warnings */
};

void days_init(struct days *d, const char *tool);
/* Every atoms file of dir (or files[], when n > 0); -errno: dir unreadable. */
int days_load(struct days *d, const char *dir, char *const *files, int n);
/*
 * Sorts, and marks the days some atom ends on.  Per metric, the keys past
 * its share of max_cells non-empty cells, the least busy, are summed into
 * one series (folded: how many).
 */
void days_finish(struct days *d, size_t max_cells);
void days_free(struct days *d);
/* "2026-11-03" */
void days_fmt(char *buf, size_t len, int32_t day);
/* The bucket of every cell, and of quantile v: the row it sits on. */
unsigned int days_bucket_of(double v);
/* [1.024ms, 2.048ms) */
void days_bucket_label(char *buf, size_t len, unsigned int i, unsigned int unit);

int heatmap_print(const char *dir, char *const *files, int n);

#endif /* KSTATS_ATOMS_H */
