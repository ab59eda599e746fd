/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Atoms from the schema alone (proto/kernelstats_atoms.proto): which Atom
 * field carries a metric, which of its message's fields take the buckets,
 * the key and the key's name, and the mismatches between the histograms
 * of the objects and the messages.  No metric is named here.
 */
#ifndef KSTATS_ATOM_SCHEMA_H
#define KSTATS_ATOM_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <protobuf-c/protobuf-c.h>

#include "kstats_keys.h"
#include "proto/kernelstats_atoms.pb-c.h"
#include "kstats_tool.h"
#include "pull.h"

#define ATOM_BUCKETS_WORD "_log2_buckets_"

/* The roles of one metric's message fields. */
struct atom_shape {
	const ProtobufCFieldDescriptor *oneof;	/* id = atom id */
	const ProtobufCMessageDescriptor *msg;
	const ProtobufCFieldDescriptor *buckets;
	const struct kstats_unit_info *unit;	/* of the bucket field's name */
	const ProtobufCFieldDescriptor *keys[PULL_MAX_KEY_COLS];
	size_t nkeys;				/* 0: one system-wide series */
	const ProtobufCFieldDescriptor *name;	/* the key's name, or NULL */
};

/* Atom's oneof field whose message is named metric, or NULL. */
const ProtobufCFieldDescriptor *
atom_field_of(const ProtobufCMessageDescriptor *atom, const char *metric);
/*
 * The shape of metric's message in atom.  -ENOENT: no message; -EINVAL: a
 * field fits no role (why names it and the fix).
 */
int atom_shape_init(struct atom_shape *s, const ProtobufCMessageDescriptor *atom,
		    const char *metric, char *why, size_t len);

/* One atom under construction: the envelope and its payload's storage. */
struct atom_slot {
	Kernelstats__Atom atom;
	ProtobufCMessage *payload;	/* malloc'd, of the shape's message */
	int32_t buckets[PULL_NR_BUCKETS];
	char name[KSTATS_NAME_MAX + 1];
};

/*
 * Fills s (s->atom already initialized) with the payload of shape: key
 * columns in field order, name ("" for none) and s->buckets.  -ENOMEM.
 */
int atom_build(struct atom_slot *s, const struct atom_shape *shape,
	       const int64_t *key, size_t nkey, const char *name);
void atom_slot_free(struct atom_slot *s);

/* ---- mismatches (atom_check.c) ---- */

struct kstats_hist;
struct kstats_snapshot;

struct atom_check {
	const ProtobufCMessageDescriptor *atom;
	void (*warn)(void *ctx, const char *line);
	void *ctx;
	unsigned int warnings;
	unsigned int checked;		/* histograms looked at */
};

/*
 * Checks one histogram against its message: a message exists, the bucket
 * field's unit is the histogram's, the key fields match the key columns,
 * and the enum values match one for one.  Returns false when no atom can
 * be built for it (nothing to carry it, or it would carry it wrongly).
 */
bool atom_check_hist(struct atom_check *c, const struct kstats_hist *h,
		     struct atom_shape *shape);
/*
 * Every histogram of the catalog, then every message that none claims.
 * shapes (s->nhists entries, or NULL) gets each histogram's shape; one
 * whose oneof is NULL gets no atoms.
 */
void atom_check_catalog(struct atom_check *c, const struct kstats_snapshot *s,
			struct atom_shape *shapes);

#endif /* KSTATS_ATOM_SCHEMA_H */
