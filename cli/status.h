/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kstats status internals: the live values the kernel holds for what the
 * loader status file names (status_live.c) and their rendering as a table
 * or annotated JSON (status_print.c).  The command is status.c.
 */
#ifndef KSTATS_STATUS_CMD_H
#define KSTATS_STATUS_CMD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <bpf/bpf.h>

#include "kstats_objmeta.h"
#include "kstats_status.h"

struct prog_live {
	bool have;			/* bpf_prog_info was read */
	int err;			/* else why not */
	bool detached;			/* its link pin is gone */
	uint64_t run_cnt, run_time_ns, misses;
};

struct map_live {
	bool have;
	int err;
	bool root_only;			/* denied, as its mode says it must be */
	__u32 type, max_entries, id;
	bool counted;			/* entries counted (hash-like maps) */
	uint64_t entries, memlock;
	bool has_drops;
	uint64_t drops;
};

struct status_view {
	const char *status_file;
	struct kstats_status st;
	struct prog_live *progs;	/* every program, in status-file order */
	size_t nprogs;
	double window;			/* seconds the run counts cover; 0: since load */
	int stats_enabled;		/* the sysctl, -1 unknown */
	bool perm_denied;
	unsigned int maps_gone;		/* maps of loaded objects whose pin is gone */
	const char *gone_example;
};

/* status_live.c */
struct prog_live *status_probe_progs(const struct kstats_status *st, size_t *n);
/* The object's metadata, empty when its file cannot be read. */
void status_object_meta(const struct kstats_status_obj *o, struct kstats_objmeta *meta);
/* Live values of map mp of object o; counts it in v when denied or gone. */
void status_map_live(struct status_view *v, const struct kstats_status_obj *o,
		     const struct kstats_objmeta *meta,
		     const struct kstats_status_map *mp, struct map_live *ml);
const char *status_probe_error(int err);
/* Why a map has no live values: "root-only", "gone", ... */
const char *status_map_error(const struct map_live *ml);

/* status_print.c */
void status_print(FILE *f, struct status_view *v);
/* Adds the live values to the status file's JSON (v->st.json). */
void status_annotate(struct status_view *v);

#endif /* KSTATS_STATUS_CMD_H */
