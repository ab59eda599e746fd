/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One kstats pull, split by job: arguments (pull_args.c), the lock
 * (pull_lock.c), loading and reconciling the state (pull_load.c), windows
 * and clocks (pull_window.c), per-map deltas (pull_map.c), atom envelopes
 * (pull_atoms.c), the commit (pull_commit.c), retention (pull_retention.c),
 * and the run itself (pull.c).
 *
 * Crash safety: pull N first writes its new state as state.pending, then
 * atoms-N.pb, then renames state.pending over state.  Every step is a
 * durable rename, so at start a pending state whose atoms file exists is
 * promoted (pull N finished), and one without it is dropped (pull N never
 * emitted; its counts are still in the maps).  A crash anywhere loses and
 * duplicates nothing.
 */
#ifndef KSTATS_PULL_RUN_H
#define KSTATS_PULL_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "atom_schema.h"
#include "hist.h"
#include "kstats_status.h"
#include "pull.h"

#define PULL_DEFAULT_STATE_DIR "/var/lib/kernelstats/state"
#define PULL_STATE_FILE "state"
#define PULL_PENDING_FILE "state.pending"

struct pull_opts {
	const char *obj_dir, *pin_dir, *state_dir, *out_dir, *status_file;
	uint64_t max_age_s, max_files, max_bytes;
	unsigned int lock_timeout_s;
	bool verbose;
};

/* One histogram of the objects and the shape of its atom. */
struct pull_metric {
	const struct kstats_hist *h;
	struct atom_shape shape;	/* shape.oneof NULL: it gets no atoms */
};

struct pull_run {
	const struct pull_opts *o;
	struct pull_state old, new;
	bool lost;			/* state was corrupt: moved aside */
	bool boot_changed;
	char boot_id[64];
	uint64_t pull_id;
	struct atom_slot **atoms;
	size_t natoms, cap;
	struct kstats_status status;	/* loader status, empty if none */
	bool status_read;
	unsigned int maps_read, maps_failed, maps_denied;
};

/* One histogram map, read. */
struct metric_read {
	struct kstats_histmap hm;
	uint64_t end_boot, end_real;
	struct kstats_names *names;	/* NULL: ids have no names */
};

/* pull_window.c: clocks and window starts. */
void pull_now(uint64_t *boot, uint64_t *real);
/* The loader status, read on first use; empty if none. */
const struct kstats_status *pull_loader_status(struct pull_run *r);
void pull_creation_time(struct pull_run *r, const struct pull_metric *pm,
			const struct metric_read *mr, uint64_t *boot, uint64_t *real);

/*
 * pull_lock.c: creates state_dir and out_dir, or refuses (one line on
 * stderr, -EPERM, nothing created) a dir others could plant files in or
 * redirect; then the lock.
 */
int pull_check_dirs(const char *state_dir, const char *out_dir);
int pull_take_lock(const struct pull_opts *o, int *fd);
int pull_load_state(struct pull_run *r);
int pull_map(struct pull_run *r, const struct pull_metric *pm);
int pull_carry_over(struct pull_run *r, const char *obj, const char *map);
int pull_emit_atom(struct pull_run *r, const struct pull_metric *pm,
		   const struct window *w, const int64_t *key, size_t nkey,
		   const char *name, const int32_t *buckets, unsigned int anomalies);

/* The last pull id: pulls stop there rather than wrap to 0. */
#define PULL_MAX_ID UINT64_MAX

/* pull_commit.c: atoms-<pull id>.pb files and the commit. */
bool pull_atoms_exist(const char *out_dir, uint64_t pull_id);
uint64_t pull_max_atoms_id(const char *out_dir);
int pull_commit(struct pull_run *r, char *atoms_file, size_t len);

/* Up time since a file was written ages it, never the wall clock. */
int pull_apply_retention(const struct pull_opts *o, const char *boot_id);
int pull_run(const struct pull_opts *o);

#endif /* KSTATS_PULL_RUN_H */
