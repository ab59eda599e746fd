/* SPDX-License-Identifier: GPL-2.0 */
/* kstats pull: arguments and the run (pull.c), map deltas (pull_map.c), the state (state.c),
 * atoms (pull_atoms.c).  Crash safety: doc/pull.md. */
#ifndef KSTATS_PULL_H
#define KSTATS_PULL_H

#include "delta.h"
#include "hist.h"
#include "kstats_keys.h"
#include "kstats_status.h"
#include "proto/kernelstats_atoms.pb-c.h"

#define PULL_MAX_KEY_COLS 4
#define ATOMS_NAME "atoms-%010" PRIu64 ".pb"
/* Atoms one key may emit per pull when a delta exceeds INT32_MAX. */
#define PULL_MAX_SPLIT 64

/* One key of one map: its key columns and the counts already emitted. */
struct pull_key {
	int64_t key[PULL_MAX_KEY_COLS];
	uint64_t base[PULL_NR_BUCKETS];
};

struct pull_map_state {
	char obj[64];
	char map[64];
	uint32_t map_id;
	uint64_t start_boot_ns;		/* where the next window starts */
	uint64_t start_real_ns;
	size_t nkey_cols;
	struct pull_key *keys;		/* sorted by key */
	size_t nkeys;
};

struct pull_state {
	uint64_t pull_id;		/* the pull that wrote this state */
	char boot_id[64];
	struct pull_map_state *maps;
	size_t nmaps;
};

void state_free(struct pull_state *st);
/* Takes ownership of ms's keys, and sorts them. */
int state_add_map(struct pull_state *st, struct pull_map_state *ms);
const struct pull_map_state *state_find_map(const struct pull_state *st,
					    const char *obj, const char *map);
int state_encode(const struct pull_state *st, char **buf, size_t *len);
int state_decode(const char *buf, size_t len, struct pull_state *st,
		 char *err, size_t errlen);
/* dir/name; -ENOENT; -EBADMSG: corrupt, moved aside to name.corrupt-<secs>[-N]. */
int state_load(const char *dir, const char *name, struct pull_state *st);
int state_save(const char *dir, const char *name, const struct pull_state *st);

/* The roles of one metric's message fields (proto/kernelstats_atoms.proto). */
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
/* -ENOENT: no message; -EINVAL: a field fits no role (why names it and the fix). */
int atom_shape_init(struct atom_shape *s, const ProtobufCMessageDescriptor *atom,
		    const char *metric, char *why, size_t len);

struct atom_slot {
	Kernelstats__Atom atom;
	ProtobufCMessage *payload;	/* malloc'd, of the shape's message */
	int32_t buckets[PULL_NR_BUCKETS];
	char name[KSTATS_NAME_MAX + 1];
};

/* s->atom initialized; key columns go in field order, name "" for none. */
int atom_build(struct atom_slot *s, const struct atom_shape *shape,
	       const int64_t *key, size_t nkey, const char *name);
void atom_slot_free(struct atom_slot *s);

/* Mismatches between the objects' histograms and the messages (atom_check.c). */
struct atom_check {
	const ProtobufCMessageDescriptor *atom;
	void (*warn)(void *ctx, const char *line);
	void *ctx;
	unsigned int warnings;
	unsigned int checked;		/* histograms looked at */
};

/* Every histogram, then every message that none claims; shapes: s->nhists or NULL. */
void atom_check_catalog(struct atom_check *c, const struct kstats_snapshot *s,
			struct atom_shape *shapes);

/* The command line, fixed before the run starts. */
struct pull_opts {
	const char *obj_dir, *pin_dir, *state_dir, *out_dir, *status_file;
	uint64_t max_age_s, max_files, max_bytes;
	unsigned int lock_timeout_s;
	bool verbose;
};

struct pull_run {
	const struct pull_opts *o;
	struct pull_state old, new;
	bool lost;			/* state was corrupt: moved aside */
	bool boot_changed;
	char boot_id[64];
	uint64_t pull_id;
	Kernelstats__Atom **atoms;	/* each the first member of an atom_slot */
	size_t natoms;
	struct kstats_status status;	/* loader status, empty if none */
	struct kstats_snapshot cat;	/* the objects' histograms */
	struct atom_shape *shapes;	/* of each histogram; oneof NULL: no atoms */
	int lock_fd;
	unsigned int maps_read, maps_failed, maps_denied;
};

void pull_now(uint64_t *boot, uint64_t *real);
int pull_map(struct pull_run *r, struct kstats_hist *h, const struct atom_shape *shape);
int pull_carry_over(struct pull_run *r, const char *obj, const char *map);

int pull_emit_atom(struct pull_run *r, const struct atom_shape *shape,
		   const struct window *w, const int64_t *key, size_t nkey,
		   const char *name, const int32_t *buckets, unsigned int anomalies);
uint64_t pull_max_atoms_id(const char *out_dir);
int pull_write_atoms(struct pull_run *r, char *name, size_t len);
int pull_apply_retention(const struct pull_run *r, uint64_t now_boot);
/* The last pull kstats ship recorded as acknowledged (ship.c); 0: none. */
uint64_t ship_acked(const char *state_dir);

#endif /* KSTATS_PULL_H */
