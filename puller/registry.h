/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The atom registry: one entry per metric, as statsd's puller has.  Adding
 * a metric takes three small additions: its message (and oneof line) in
 * proto/kernelstats_atoms.proto, a builder and union member here and in
 * registry.c, and its entry in pull_metrics[].
 */
#ifndef KSTATS_REGISTRY_H
#define KSTATS_REGISTRY_H

#include <stdint.h>

#include "kstats_keys.h"
#include "proto/kernelstats_atoms.pb-c.h"
#include "pull.h"

/* One atom under construction; the builder points the message into it. */
struct atom_slot {
	Kernelstats__Atom atom;
	union {
		Kernelstats__KswapdLatency kswapd;
		Kernelstats__DirectReclaimLatency direct_reclaim;
		Kernelstats__CompactionDuration compaction;
		Kernelstats__CmaAllocationLatency cma;
		Kernelstats__DmabufRequestSizes dmabuf;
		Kernelstats__SuspendResumeLatency suspend_resume;
	} msg;
	int32_t buckets[PULL_NR_BUCKETS];
	char name[KSTATS_NAME_MAX + 1];
};

/*
 * Sets the payload from a map row: key holds its key columns, name the
 * resolved name of the key's id ("" when the metric has no dictionary or
 * the id is not in it).  s->buckets is already filled.
 */
typedef void (*atom_build_fn)(struct atom_slot *s, const int64_t *key,
			      const char *name);

struct pull_metric {
	int32_t atom_id;
	const char *obj;	/* object, pinned as map_<obj>_<map> */
	const char *map;	/* histogram map */
	const char *names_map;	/* __u32 id -> struct kstats_name, or NULL */
	atom_build_fn build;
};

extern const struct pull_metric pull_metrics[];
extern const size_t pull_nmetrics;

#endif /* KSTATS_REGISTRY_H */
