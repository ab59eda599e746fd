/* SPDX-License-Identifier: GPL-2.0 */
/* Reads the .kstats.* metadata sections of a BPF object (libelf). */
#ifndef KSTATS_OBJMETA_H
#define KSTATS_OBJMETA_H

#include <stdbool.h>
#include <stddef.h>
#include "kstats_meta.h"

struct kstats_objmeta {
	struct kstats_map_meta *maps;
	size_t nmaps;
	struct kstats_prog_meta *progs;
	size_t nprogs;
	struct kstats_hist_meta *hists;
	size_t nhists;
	struct kstats_obj_meta obj;	/* defaults when the object has none */
	struct kstats_stream_meta *streams;
	size_t nstreams;
};

/* Returns 0, or -errno with a one-line reason in err. */
int kstats_objmeta_read(const char *path, struct kstats_objmeta *meta,
			char *err, size_t errlen);
/* The same from an object already in memory; what names it in err. */
int kstats_objmeta_read_mem(void *buf, size_t len, const char *what,
			    struct kstats_objmeta *meta, char *err, size_t errlen);
void kstats_objmeta_free(struct kstats_objmeta *meta);

const struct kstats_map_meta *
kstats_objmeta_map(const struct kstats_objmeta *meta, const char *name);
const struct kstats_prog_meta *
kstats_objmeta_prog(const struct kstats_objmeta *meta, const char *name);
const struct kstats_hist_meta *
kstats_objmeta_hist(const struct kstats_objmeta *meta, const char *map);
const struct kstats_stream_meta *
kstats_objmeta_stream(const struct kstats_objmeta *meta, const char *name);

/*
 * Whether two metric names are exported under one name: equal but for case
 * and the characters that are not letters or digits.  One such name is
 * exported once: the loader loads one object per name, dump and pull show one.
 */
bool kstats_metric_same(const char *a, const char *b);

struct dirent;
/*
 * The *.bpf files of dir in sorted order (scandir); count or -errno.  A bare
 * ".bpf" is listed too: its empty name is for the caller to refuse.
 */
int kstats_scan_objects(const char *dir, struct dirent ***ents);

/* "compaction" from ".../compaction.bpf" into buf. */
int kstats_obj_name(const char *path, char *buf, size_t len);

#endif /* KSTATS_OBJMETA_H */
