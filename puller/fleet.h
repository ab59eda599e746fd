/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The atoms reader (atoms.c) and what the fleet path builds on it: atoms as
 * JSON-each-row rows (rows.c), kstats ship (ship.c).  doc/fleet-atoms.md.
 */
#ifndef KSTATS_FLEET_H
#define KSTATS_FLEET_H

#include <stdbool.h>
#include <stdio.h>

#include "bpf_telemetry.h"
#include "kstats_tool.h"
#include "proto/kernelstats_atoms.pb-c.h"

struct atoms_file {	/* in memory, its framing checked */
	char *buf;
	size_t len, count;
};

typedef void (*atoms_fn)(void *ctx, const Kernelstats__Atom *a);

/* path ("-": stdin): a regular file within the reader's bounds; -errno: "path: why" in why. */
int atoms_file_read(const char *path, struct atoms_file *f, char *why, size_t len);
/* fn for each atom that decodes; -EBADMSG: some did not (why says how many). */
int atoms_file_each(const struct atoms_file *f, atoms_fn fn, void *ctx, char *why,
		    size_t len);
/* fn for each atoms file of dir, oldest first: their count, or -1 with errno. */
int atoms_each_path(const char *dir, void (*fn)(void *ctx, const char *path), void *ctx);
const ProtobufCMessage *atom_payload(const Kernelstats__Atom *a);
/* " name=value" per key field, lead before the first; false: no key. */
bool atom_key_print(FILE *out, const ProtobufCMessage *m, const char *lead);
/* The next bucket field from *from: b[32] and its unit; NULL: no more. */
const ProtobufCFieldDescriptor *atom_buckets(const ProtobufCMessage *m, unsigned int *from,
					     uint64_t *b, const struct kstats_unit_info **unit);

/* One UTC day of one series: the sum of the atoms whose window ends in it. */
struct day_cell {
	int32_t day;			/* days since 1970-01-01 UTC */
	bool reset;
	uint32_t anomalies;
	uint64_t b[BPF_TELEMETRY_NR_BUCKETS];
};

/* Adds one day's counts of metric msg's key (" name=value...") to kstats report's page. */
typedef void (*days_fn)(void *days, const ProtobufCMessageDescriptor *msg, const char *key,
			const struct kstats_unit_info *unit, const struct day_cell *c);
void days_add(void *days, const ProtobufCMessageDescriptor *msg, const char *key,
	      const struct kstats_unit_info *unit, const struct day_cell *c);

/* rows.c: each row of path ("-": stdin) to fn; -errno: "path:line: why, the fix" in why. */
int rows_read(const char *path, days_fn fn, void *ctx, char *why, size_t len);

/* ship.c: kstats atoms --format json-each-row, every atoms file of dir or files[n]. */
int rows_print(const char *dir, char *const *files, int n);

#endif /* KSTATS_FLEET_H */
